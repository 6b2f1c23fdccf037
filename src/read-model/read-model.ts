import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { loadListingIndex } from './builder.js';
import type { ListingIndex } from './listing-index.js';
import { answerQuery, type IndexAnswer, type IndexQuery, type ReadModel, type ReadModelStatus } from './queries.js';
import { unavailableCause } from '../db/errors.js';

export type { ReadModelStatus } from './queries.js';

// Holds the ListingIndex of the newest data version it has loaded. A request uses it only
// when the version it read with its key is the index's own: a request that saw a newer version
// gets null (and answers from SQL) and schedules a rebuild. So the index never answers for a
// version it does not hold; after a write, answers come from SQL until the rebuild is done.
//
// Rebuilds are spaced: one starts at least `settleMs` after a newer version is first seen (a
// burst of writes costs one rebuild), and no sooner after the previous one than that one took,
// so that loading costs at most about half of the time under constant writes. A failed build
// is retried with backoff.
//
// It runs where it is made: on the request thread when the server is started with
// LISTINGS_READ_MODEL_THREAD=false (the default, and in tests), else on a thread of its own
// (thread.ts).
export class ListingReadModel implements ReadModel {
  private current: ListingIndex | null = null;
  private newestSeen = -1;
  private building: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private failures = 0;
  private lastEnd = 0;
  private readonly status: ReadModelStatus = { version: null, listings: 0, bytes: 0, builds: 0, served: 0, lastBuildMs: null, lastError: null };
  private readyWaiters: Array<() => void> = [];

  constructor(
    private readonly db: Knex,
    private readonly logger: Logger,
    private readonly settleMs = 200,
    // Told whenever the index held changes (loaded, dropped for a rebuild, a failed load).
    private readonly onChange: (holds: number | null, status: ReadModelStatus) => void = () => {},
    // Where to load the newest version seen from (a read replica once it has replayed it, else
    // the primary: src/db/read-replica.ts); `db` when not given. A replica that lags is then
    // not loaded again and again at its old version (an outside probe: 133 loads a minute).
    private readonly source?: (version: number) => Knex,
  ) {}

  // The index at exactly `version`, or null.
  at(version: number): ListingIndex | null {
    const cur = this.current;
    if (cur && cur.version === version) {
      this.status.served++;
      return cur;
    }
    this.seen(version);
    return null;
  }

  async query(version: number, q: IndexQuery): Promise<IndexAnswer | null> {
    const index = this.at(version);
    return index ? answerQuery(index, q) : null;
  }

  seen(version: number): void {
    const cur = this.current;
    if (version > this.newestSeen) this.newestSeen = version;
    if (!cur || version > cur.version) this.schedule(this.current === null && this.status.builds === 0 ? 0 : this.settleMs);
  }

  // Starts the first load now (server start-up), without waiting for a request.
  warm(): void {
    this.schedule(0);
  }

  info(): ReadModelStatus {
    return { ...this.status };
  }

  // Resolves once an index at `version` or newer is loaded (tests and the benchmark).
  async ready(version?: number): Promise<ListingIndex> {
    for (;;) {
      const cur = this.current;
      if (cur && (version === undefined || cur.version >= version)) return cur;
      if (this.closed) throw new Error('read model closed');
      if (version !== undefined && version > this.newestSeen) this.newestSeen = version;
      this.schedule(0);
      await new Promise<void>((resolve) => this.readyWaiters.push(resolve));
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.building;
    this.current = null;
    for (const w of this.readyWaiters.splice(0)) w();
  }

  private schedule(delayMs: number): void {
    if (this.closed || this.building || this.timer) return;
    const spacing = this.status.lastBuildMs === null ? 0 : this.lastEnd + this.status.lastBuildMs - Date.now();
    const backoff = this.failures > 0 ? Math.min(60_000, 1000 * 2 ** (this.failures - 1)) : 0;
    const wait = Math.max(delayMs, spacing, backoff);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.building = this.rebuild().finally(() => {
        this.building = null;
        for (const w of this.readyWaiters.splice(0)) w();
        if (this.closed) return;
        const have = this.current?.version ?? -1;
        if (this.newestSeen > have || (this.current === null && this.readyWaiters.length > 0)) this.schedule(this.settleMs);
      });
    }, wait);
    this.timer.unref();
  }

  private async rebuild(): Promise<void> {
    const started = performance.now();
    // The old index answers only for its own version, which no new request reads any more:
    // drop it first so that two never live at once.
    this.current = null;
    this.onChange(null, this.info());
    try {
      const index = await loadListingIndex(this.source?.(Math.max(this.newestSeen, 0)) ?? this.db, () => this.closed);
      const ms = performance.now() - started;
      this.failures = 0;
      this.lastEnd = Date.now();
      Object.assign(this.status, { version: index.version, listings: index.size, bytes: index.bytes, builds: this.status.builds + 1, lastBuildMs: Math.round(ms), lastError: null });
      if (this.closed) return;
      this.current = index;
      this.onChange(index.version, this.info());
      this.logger.info({ version: index.version, listings: index.size, mb: Math.round(index.bytes / 2 ** 20), ms: Math.round(ms) }, 'listings read model loaded');
    } catch (err) {
      this.failures++;
      this.lastEnd = Date.now();
      // The kind of failure, not its message: /readyz is public, and a message can quote SQL or
      // name the database's host (an outside probe of stop 48). The message is logged.
      this.status.lastError = unavailableCause(err) ?? 'failed';
      this.onChange(null, this.info());
      if (!this.closed) this.logger.warn({ err: (err as Error).message, failures: this.failures }, 'listings read model: load failed; answering from SQL');
    }
  }
}
