import type { Knex } from 'knex';
import type { ProgressEvent } from './types.js';

// One import of a source at a time (the second one waits, and says so), and the write
// phases of imports of different sources one after the other: deduplication and the flag
// rules touch listings of every source, and serialising them rules out deadlocks between
// two imports. Transaction-level advisory locks (namespaces in src/db/advisory-locks.ts),
// released at commit or rollback; the API's reads take no lock that these could block.
export async function acquireLock(trx: Knex.Transaction, ns: number, key: string, progress: (e: ProgressEvent) => void): Promise<void> {
  const [{ ok }] = (await trx.raw(`SELECT pg_try_advisory_xact_lock(?, hashtext(?)) AS ok`, [ns, key])).rows as { ok: boolean }[];
  if (ok) return;
  progress({ phase: 'waiting-for-lock', source: key });
  await trx.raw(`SELECT pg_advisory_xact_lock(?, hashtext(?))`, [ns, key]);
}

// The small writes around an import (the run's row, the source's row) go through the same
// rows as other writers (import_runs, and whatever triggers other parts of the service hang
// on it), so they may have to wait for another import's commit. They wait up to the lock
// timeout, not the connection's statement timeout, and say that they are waiting.
export async function runPatiently<T>(
  db: Knex,
  lockTimeoutMs: number,
  progress: (e: ProgressEvent) => void,
  fn: (trx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  const attempt = (timeoutMs: number) =>
    db.transaction(async (trx) => {
      await trx.raw(`SET LOCAL statement_timeout = 0`);
      await trx.raw(`SET LOCAL lock_timeout = ${timeoutMs}`);
      return fn(trx);
    });
  try {
    return await attempt(Math.min(1000, lockTimeoutMs));
  } catch (e) {
    // 55P03 lock_not_available: someone else holds the rows; wait for them in earnest.
    if ((e as { code?: string }).code !== '55P03' || lockTimeoutMs <= 1000) throw e;
    progress({ phase: 'waiting-for-lock', source: '*' });
    return attempt(lockTimeoutMs);
  }
}
