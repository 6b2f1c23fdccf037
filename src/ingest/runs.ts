import type { Knex } from 'knex';

// Advisory lock namespaces (first key of the two-key form).
export const LOCK_SOURCE = 7301;
export const LOCK_WRITE = 7302;
export const LOCK_RUN = 7303;

// The second key of a run's lock: its id, folded into the int4 the two-key form takes (a
// collision would only make a dead run look alive until the other one ends).
const RUN_KEY = (idSql: string) => `(${idSql} % 2147483647)::int`;

export const INTERRUPTED = 'interrupted: the importing process ended without finishing (killed, crashed, or its database connection was lost); nothing was changed';

// A run is 'running' exactly while the transaction of its import holds the run's advisory
// lock: the lock is taken before the row is written, and the row leaves 'running' in the
// same transaction as the data (or, for a failure, right after the rollback). So a
// 'running' row whose lock is free belongs to an import that died: PostgreSQL released the
// lock when its connection went away.
export async function reserveRun(trx: Knex.Transaction): Promise<number> {
  const [{ id }] = (await trx.raw(`SELECT nextval(pg_get_serial_sequence('import_runs', 'id'))::bigint AS id`)).rows as { id: number }[];
  await trx.raw(`SELECT pg_advisory_xact_lock(?, ${RUN_KEY('?::bigint')})`, [LOCK_RUN, id]);
  return id;
}

// Marks every 'running' run whose import is gone as failed. Returns how many. Called at
// the start of every import and when the server starts.
export async function markInterruptedRuns(trx: Knex.Transaction): Promise<number> {
  const running = (await trx.raw(`SELECT id FROM import_runs WHERE status = 'running' ORDER BY id`)).rows as { id: number }[];
  const dead: number[] = [];
  for (const { id } of running) {
    const [{ free }] = (await trx.raw(`SELECT pg_try_advisory_xact_lock(?, ${RUN_KEY('?::bigint')}) AS free`, [LOCK_RUN, id])).rows as { free: boolean }[];
    if (free) dead.push(id);
  }
  if (dead.length === 0) return 0;
  const res = await trx.raw(
    `UPDATE import_runs SET status = 'failed', finished_at = greatest(started_at, now()), error = ?
      WHERE id = ANY (?::bigint[]) AND status = 'running'`,
    [INTERRUPTED, dead],
  );
  return res.rowCount ?? 0;
}

// For the server's start: the same, on its own, waiting a few seconds at most for the rows
// (an import's commit) before giving up until the next import does it.
export async function recoverInterruptedImports(db: Knex): Promise<number> {
  return db.transaction(async (trx) => {
    await trx.raw(`SET LOCAL lock_timeout = 5000`);
    return markInterruptedRuns(trx);
  });
}
