import type { Knex } from 'knex';

// A counter that changes whenever the public data can have changed: any statement writing
// listings, native posts or import runs bumps it, inside the writing transaction. The API
// keys its caches (exact counts, market prices, stats) by this version, so a cached answer
// is used only while the data is exactly what it was computed from: "live", and cheap.
// It is a row, not a sequence: a sequence moves before the writer commits, and a reader
// could then cache old data under the new version.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE data_state (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      version bigint NOT NULL DEFAULT 1,
      changed_at timestamptz(3) NOT NULL DEFAULT now()
    )`);
  await knex.raw(`INSERT INTO data_state DEFAULT VALUES`);
  await knex.raw(`
    CREATE FUNCTION bump_data_version() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE data_state SET version = version + 1, changed_at = now();
      RETURN NULL;
    END $$`);
  for (const table of ['listings', 'native_posts', 'import_runs']) {
    await knex.raw(`
      CREATE TRIGGER ${table}_bump_data_version
      AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION bump_data_version()`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['listings', 'native_posts', 'import_runs']) {
    await knex.raw(`DROP TRIGGER IF EXISTS ${table}_bump_data_version ON ${table}`);
  }
  await knex.raw(`DROP FUNCTION IF EXISTS bump_data_version()`);
  await knex.raw(`DROP TABLE IF EXISTS data_state`);
}
