import type { Knex } from 'knex';

// The record of feed imports (import_runs), as the service reads it. The importer writes its
// runs in src/ingest/runs.ts.

// How many runs each source has had, by outcome (running, ok, failed, refused).
export async function countImportRunsBySourceAndStatus(db: Knex): Promise<{ source: string; status: string; count: number }[]> {
  const rows = (await db('import_runs').select('source', 'status').count<{ source: string; status: string; count: number }[]>('* as count').groupBy('source', 'status')) as {
    source: string;
    status: string;
    count: number;
  }[];
  return rows.map((r) => ({ source: r.source, status: r.status, count: Number(r.count) }));
}
