import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { within } from '../lib/within.js';
import { unavailableCause } from './errors.js';

// A read at data version `version`: `read` run against the database it may go to (the replica
// once it has replayed that version, else the primary), and run again on the primary if the
// replica fails it.
export type ReadsAt = <T>(version: number, read: (db: Knex) => Promise<T>) => Promise<T>;

// A read at `version` where `reads` sends it, or on `db` when there is no replica.
export function readAt<T>(reads: ReadsAt | undefined, db: Knex, version: number, read: (db: Knex) => Promise<T>): Promise<T> {
  return reads ? reads(version, read) : read(db);
}

// A replica's failure that the primary may not share: the replica unavailable (unavailableCause:
// cut, frozen, out of connections, a statement timed out) or a statement cancelled by a conflict
// with the recovery it replays (40001; 57014 is already a timeout there).
const replicaFailed = (err: unknown) => unavailableCause(err) !== null || (err as { code?: unknown } | null)?.code === '40001';

// The sign that the replica went down, for the reads in flight there.
interface DownSignal {
  promise: Promise<void>;
  fire: () => void;
  fired: boolean;
}
function downSignal(): DownSignal {
  let fire!: () => void;
  const promise = new Promise<void>((resolve) => (fire = resolve));
  const signal: DownSignal = { promise, fired: false, fire: () => ((signal.fired = true), fire()) };
  return signal;
}

// DATABASE_READ_URL: a replica of the primary that reads go to, but only once it has replayed
// the data version the request is answered at (its own data_state row, polled every `pollMs`).
// A lagging or unreachable replica sends reads to the primary: answers stay exact and live,
// and are cached under the version they were computed at. Writes, key lookups and LISTEN
// always use the primary.
// A read the replica fails (cut, frozen, a statement cancelled), or still holds when a poll
// finds the replica down, is run again on the primary, so that trouble on the replica costs
// time, never an error: an outside probe of stop 50 found a stalled replica answered with 503s
// after 12 s while the primary was fine, and a replica whose listings were locked by a replayed
// exclusive lock with 503s after 10 s, the poll of data_state alone still passing. The poll
// reads the listings too, within its second.
export class ReplicaReads {
  private replicaVersion = -1;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private failures = 0;
  private down = downSignal();

  constructor(
    private readonly primary: Knex,
    readonly replica: Knex,
    private readonly logger: Logger,
    private readonly pollMs = 200,
  ) {}

  // The database a read at `version` goes to, for a reader that retries on its own (the read
  // model's loads).
  readonly pick = (version: number): Knex => (this.replicaVersion >= version ? this.replica : this.primary);

  readonly at: ReadsAt = async <T>(version: number, read: (db: Knex) => Promise<T>): Promise<T> => {
    if (this.replicaVersion < version) return read(this.primary);
    const down = this.down;
    const onReplica = read(this.replica);
    // Settled either way once the race is decided (its result is then not needed).
    onReplica.catch(() => {});
    let result: { value: T } | null;
    try {
      result = await Promise.race([onReplica.then((value) => ({ value })), down.promise.then(() => null)]);
    } catch (err) {
      if (!replicaFailed(err)) throw err;
      this.wentDown(err, 'a read failed');
      result = null;
    }
    return result ? result.value : read(this.primary);
  };

  // The version the replica was last seen at (-1: not reachable).
  get version(): number {
    return this.replicaVersion;
  }

  async start(): Promise<this> {
    await this.poll();
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
    return this;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.replica.destroy();
  }

  private wentDown(err: unknown, what: string): void {
    this.replicaVersion = -1;
    this.down.fire();
    if (this.failures++ === 0) this.logger.warn({ err: (err as Error).message }, `read replica not reachable (${what}): reading from the primary`);
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    // The listings too: a replica that answers data_state but holds its listings locked (a
    // replayed exclusive lock) cannot serve the reads. (One promise of the statement: a knex
    // statement runs again at every then.)
    const answer = Promise.resolve(this.replica.raw('SELECT (SELECT version FROM data_state) AS version, EXISTS (SELECT 1 FROM listings) AS readable').timeout(1000));
    // The next poll once this one is over, answered or not: one at a time.
    void answer.then(
      () => (this.polling = false),
      () => (this.polling = false),
    );
    // Within 1 s from now, waiting for a connection included: knex's bound starts once it has
    // one, and reads held by a stalled replica can leave none but new ones, which wait up to the
    // pool's 5 s (the re-check of stop 50: requests held 5 s, not 1).
    try {
      const { rows } = await within(answer, 1000, 'the poll got no answer within 1 s');
      if (this.down.fired) this.down = downSignal();
      this.replicaVersion = Number(rows[0]?.version ?? -1);
      if (this.failures > 0) this.logger.info('read replica reachable again');
      this.failures = 0;
    } catch (err) {
      this.wentDown(err, 'its poll failed');
    }
  }
}
