import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { utcDay } from '../domain/market.js';
import { endStaleCheck, refreshStaleUnlessImporting } from '../ingest/index.js';
import { currentDataVersion } from '../repositories/data-version.js';
import { snapshotDay, takeMarketSnapshot } from '../repositories/market-snapshots.js';

// When the daily market snapshots (src/repositories/market-snapshots.ts) are taken:
// - after an import, when the data changed since today's was taken (the ingest command): takeAfterImport;
// - by the running server, at start (so the first one is taken when there is none) and then
//   every SNAPSHOT_CHECK_MS: today's is taken when there is none yet, or when the data
//   changed since it was taken (native posts). Taking a day again replaces it: idempotent per
//   day. Days are UTC days of the injected clock.

export const SNAPSHOT_CHECK_MS = 15 * 60_000;

// Takes today's snapshot unless the one already taken today is of the current data.
export async function ensureTodaysSnapshot(db: Knex, now: Date): Promise<'taken' | 'current'> {
  const day = utcDay(now);
  const [existing, version] = await Promise.all([snapshotDay(db, day), currentDataVersion(db)]);
  if (existing && existing.kind === 'live' && existing.data_version !== null && existing.data_version >= version) return 'current';
  await takeMarketSnapshot(db, { day, takenAt: now });
  return 'taken';
}

// After an import: today's snapshot again when the data changed since it was taken. By the data
// version, not by the import's counts: an import that only clears flags (a stale source
// delivering its listings unchanged) counts nothing as changed, yet puts listings back into
// the figures (an outside probe: history's current period lagged live prices until the
// server's next check).
export async function takeAfterImport(db: Knex, now: Date): Promise<boolean> {
  return (await ensureTodaysSnapshot(db, now)) === 'taken';
}

// The server's schedule: one check at start, then one every intervalMs (the stale flag, then
// the day's snapshot); a check never overlaps the previous one, and a failure is logged and
// retried at the next.
export class MarketSnapshotScheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  // The backend of a stale check in progress (it can take minutes when a large source goes
  // stale: its groups are decided again), and whether the scheduler is stopping.
  private staleBackend: number | null = null;
  private stopping = false;

  constructor(private readonly deps: { db: Knex; logger: Logger; clock?: () => Date; intervalMs?: number; staleCheck?: boolean }) {}

  start(): void {
    void this.check();
    this.timer = setInterval(() => void this.check(), this.deps.intervalMs ?? SNAPSHOT_CHECK_MS);
    this.timer.unref();
  }

  // One check now (what the timer runs); resolves when it is done.
  check(): Promise<void> {
    if (this.running) return this.running;
    const now = (this.deps.clock ?? (() => new Date()))();
    const checkStale = () => refreshStaleUnlessImporting(this.deps.db, now, (pid) => (this.staleBackend = pid)).finally(() => (this.staleBackend = null));
    this.running = (this.deps.staleCheck === false ? Promise.resolve(null) : checkStale())
      .then((stale) => {
        if (stale && stale.flagged + stale.decidedAgain > 0) {
          this.deps.logger.info(stale, 'stale: listings not confirmed by their source for 14 days flagged, their groups decided again');
        }
        return ensureTodaysSnapshot(this.deps.db, now);
      })
      .then((r) => {
        if (r === 'taken') this.deps.logger.info({ day: utcDay(now) }, 'market snapshot taken');
      })
      .catch((err) =>
        this.stopping
          ? this.deps.logger.info('stale check ended by the shutdown; done again at the next start')
          : this.deps.logger.warn({ err }, 'stale flags or market snapshot failed; retrying at the next check'),
      )
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  // Stops the schedule. A stale check in progress is ended rather than waited for (its
  // transaction rolls back); a snapshot being taken is waited for.
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.staleBackend !== null) await endStaleCheck(this.deps.db, this.staleBackend).catch(() => undefined);
    await this.running;
  }
}
