import type { Knex } from 'knex';
import { LOCK_RUN } from '../db/advisory-locks.js';

// The record of feed imports (import_runs): one row per run, written by the importer
// (src/ingest/import-feed.ts) as the run starts and ends, read by the metrics.

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

// The row of a run reserved with reserveRun, as it starts.
export async function insertRunningRun(
  db: Knex | Knex.Transaction,
  run: { id: number; source: string; mode: 'full' | 'delta'; fileName: string | null; startedAt: Date },
): Promise<void> {
  await db.raw(`INSERT INTO import_runs (id, source, mode, status, file_name, started_at) VALUES (?, ?, ?, 'running', ?, ?)`, [
    run.id, run.source, run.mode, run.fileName, run.startedAt,
  ]);
}

export interface RunOutcome {
  status: 'ok' | 'refused' | 'failed';
  mode: 'full' | 'delta';
  finishedAt: Date;
  // ImportCounts and the first rejects (src/ingest/types.ts), stored as jsonb.
  counts: object;
  rejects: object[];
  // Why it was refused or failed.
  error?: string;
}

// A run ends: 'ok' in the transaction of its data, 'refused' in the transaction that changed
// nothing, 'failed' after the rollback. `whileRunning`: only a run still 'running' (whether it
// was, is the answer).
export async function finishRun(db: Knex | Knex.Transaction, id: number, o: RunOutcome, whileRunning = false): Promise<boolean> {
  const res = await db.raw(
    `UPDATE import_runs SET status = ?, mode = ?, finished_at = ?, counts = ?::jsonb, rejects = ?::jsonb, error = ? WHERE id = ?${whileRunning ? ` AND status = 'running'` : ''}`,
    [o.status, o.mode, o.finishedAt, JSON.stringify(o.counts), JSON.stringify(o.rejects), o.error ?? null, id],
  );
  return (res.rowCount ?? 0) > 0;
}

// A run whose import failed is marked 'failed' unless its transaction committed after all: the
// answer to its COMMIT was lost (the connection dropped once it was sent), and the row, written
// 'ok' or 'refused' in that transaction, says so. Waits for that transaction's row lock, so a
// COMMIT the server is still applying is seen once applied. Returns the run's status after.
export async function failRunUnlessCommitted(db: Knex | Knex.Transaction, id: number, o: RunOutcome): Promise<string | null> {
  if (await finishRun(db, id, { ...o, status: 'failed' }, true)) return 'failed';
  const [row] = (await db.raw(`SELECT status FROM import_runs WHERE id = ?`, [id])).rows as { status: string }[];
  return row?.status ?? null;
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

// How many runs each source has had, by outcome (running, ok, failed, refused).
export async function countImportRunsBySourceAndStatus(db: Knex): Promise<{ source: string; status: string; count: number }[]> {
  const rows = (await db('import_runs').select('source', 'status').count<{ source: string; status: string; count: number }[]>('* as count').groupBy('source', 'status')) as {
    source: string;
    status: string;
    count: number;
  }[];
  return rows.map((r) => ({ source: r.source, status: r.status, count: Number(r.count) }));
}
