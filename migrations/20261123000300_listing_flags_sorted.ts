import type { Knex } from 'knex';

// `flags` is always sorted (docs/spec/contract.md section 7), whoever writes it: a trigger puts the
// array in order (and drops repeats) on every insert and on every update of the column, so
// the importer's array_append/array_remove and any other writer need not care. Rows written
// before this migration are sorted once here.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION listings_sort_flags() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.flags := ARRAY(SELECT DISTINCT f COLLATE "C" FROM unnest(NEW.flags) AS u(f) ORDER BY 1);
      RETURN NEW;
    END $$`);
  await knex.raw(`
    CREATE TRIGGER listings_sort_flags
    BEFORE INSERT OR UPDATE OF flags ON listings
    FOR EACH ROW WHEN (cardinality(NEW.flags) > 1) EXECUTE FUNCTION listings_sort_flags()`);
  // Touching the column is enough: the trigger sorts.
  await knex.raw(`UPDATE listings SET flags = flags WHERE cardinality(flags) > 1`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TRIGGER IF EXISTS listings_sort_flags ON listings`);
  await knex.raw(`DROP FUNCTION IF EXISTS listings_sort_flags()`);
}
