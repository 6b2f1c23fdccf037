import type { Knex } from 'knex';

// An import run is recorded from its start, before its source is known to have any data;
// the sources row is written with the first data, in the import's own transaction. So a
// run may name a source that has no row (a first import that failed: a typo in --source,
// an unreadable file), and such a source never appears in the public stats.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE import_runs DROP CONSTRAINT IF EXISTS import_runs_source_foreign`);
}

export async function down(knex: Knex): Promise<void> {
  // Runs of sources that never got a row cannot keep a foreign key: they go first.
  await knex.raw(`DELETE FROM import_runs r WHERE NOT EXISTS (SELECT 1 FROM sources s WHERE s.name = r.source)`);
  await knex.raw(`ALTER TABLE import_runs ADD CONSTRAINT import_runs_source_foreign FOREIGN KEY (source) REFERENCES sources (name)`);
}
