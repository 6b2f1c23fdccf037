import type { Knex } from 'knex';

// meta.last_updated of every data answer: the end of the most recent successful import of
// any source, or the latest change to a native post, whichever is later.
export async function lastUpdated(db: Knex): Promise<Date | null> {
  const { rows } = await db.raw(`
    SELECT greatest(
      (SELECT max(finished_at) FROM import_runs WHERE status = 'ok'),
      (SELECT max(updated_at) FROM native_posts)
    ) AS last_updated`);
  const v = rows[0]?.last_updated as Date | null;
  return v ?? null;
}

export function iso(d: Date | null): string | null {
  return d ? d.toISOString() : null;
}
