import type { Knex } from 'knex';
import type { Logger } from 'pino';

// Where a read at data version `version` may be sent.
export type ReadsAt = (version: number) => Knex;

// DATABASE_READ_URL: a replica of the primary that reads go to, but only once it has replayed
// the data version the request is answered at (its own data_state row, polled every `pollMs`).
// A lagging or unreachable replica sends reads to the primary: answers stay exact and live,
// and are cached under the version they were computed at. Writes, key lookups and LISTEN
// always use the primary.
export class ReplicaReads {
  private replicaVersion = -1;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private failures = 0;

  constructor(
    private readonly primary: Knex,
    readonly replica: Knex,
    private readonly logger: Logger,
    private readonly pollMs = 200,
  ) {}

  readonly at: ReadsAt = (version) => (this.replicaVersion >= version ? this.replica : this.primary);

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

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const row = await this.replica('data_state').select('version').first().timeout(1000);
      this.replicaVersion = Number(row?.version ?? -1);
      if (this.failures > 0) this.logger.info('read replica reachable again');
      this.failures = 0;
    } catch (err) {
      this.replicaVersion = -1;
      if (this.failures++ === 0) this.logger.warn({ err: (err as Error).message }, 'read replica not reachable: reading from the primary');
    } finally {
      this.polling = false;
    }
  }
}
