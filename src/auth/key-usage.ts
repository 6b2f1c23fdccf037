import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { touchApiKeys } from '../repositories/api-keys.js';

// Keeps api_keys.last_used_at without a database write per request: keys seen are
// collected in memory and written in one UPDATE at most every `intervalMs`.
export class KeyUsageTracker {
  private seen = new Map<string, Date>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Knex,
    private readonly logger: Logger,
    private readonly intervalMs = 30_000,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), this.intervalMs);
    this.timer.unref();
  }

  record(keyId: string, at: Date): void {
    this.seen.set(keyId, at);
  }

  async flush(): Promise<void> {
    if (this.seen.size === 0) return;
    const batch = this.seen;
    this.seen = new Map();
    // Each key its own last use (one time for the batch, the latest, dated a key revoked in the
    // batch after its revocation when another key was used later: an outside probe of stop 63).
    try {
      await touchApiKeys(this.db, batch);
    } catch (err) {
      // Kept for the next flush (a later use of a key wins): an outage loses no key's use.
      for (const [id, at] of batch) if (!this.seen.has(id)) this.seen.set(id, at);
      this.logger.warn({ err, keys: batch.size }, 'could not record api key usage; trying again at the next flush');
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
  }
}
