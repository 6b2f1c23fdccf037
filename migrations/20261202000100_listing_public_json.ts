import type { Knex } from 'knex';

// Each listing's public fields from `source` to `updated_at` as JSON text, written when the row
// is written instead of at every read (issue 15: at 1,000,000 listings, writing them in the
// page's statement, row_to_json over 16 columns, cost PostgreSQL about as much as finding the
// rows: 0.9-1.4 ms a page of 20 against 0.5 for the same page read from a stored column, pgbench
// on stop 63's machine, bench/README.md). A trigger keeps it: on every insert, and on every update
// of one of those columns, whoever writes (the importer, native posts, the benchmark's bulk load,
// a hand-made UPDATE). Byte for byte what JSON.stringify writes for those fields of
// presentListing's object (src/http/present.ts; test/api/listing-json.test.ts checks it), or
// null for a row whose values PostgreSQL writes otherwise than JavaScript: a float that is -0
// or needs an exponent in either (below 1e-4 or from 1e15: float8out writes 1e-05, JavaScript
// 0.00001), a timestamp outside the years 1000-9999, images that are not an array; the reader
// writes such a row from its columns (src/services/listing-rows.ts). Not part of the content
// hash nor of the public listing's change: rows written before are filled here without a change
// in the feed or a new data version.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE listings ADD COLUMN public_json text`);
  await knex.raw(`
    CREATE FUNCTION listing_public_json(l listings) RETURNS text LANGUAGE sql STABLE AS $$
      SELECT CASE WHEN
          (l.area_m2 IS NULL OR (CASE WHEN l.area_m2 = 0 THEN l.area_m2::text = '0' ELSE abs(l.area_m2) >= 1e-4 AND abs(l.area_m2) < 1e15 END))
          AND (l.lat IS NULL OR (CASE WHEN l.lat = 0 THEN l.lat::text = '0' ELSE abs(l.lat) >= 1e-4 AND abs(l.lat) < 1e15 END))
          AND (l.lng IS NULL OR (CASE WHEN l.lng = 0 THEN l.lng::text = '0' ELSE abs(l.lng) >= 1e-4 AND abs(l.lng) < 1e15 END))
          AND l.created_at >= '1000-01-01T00:00:00Z' AND l.created_at < '10000-01-01T00:00:00Z'
          AND l.updated_at >= '1000-01-01T00:00:00Z' AND l.updated_at < '10000-01-01T00:00:00Z'
          AND jsonb_typeof(l.images) = 'array'
        THEN (SELECT row_to_json(f)::text FROM (SELECT l.source, l.external_id, l.title, l.price_eur, l.area_m2, l.rooms, l.commune, l.locality,
                l.lat, l.lng, l.listing_type, l.accepts_students,
                array_to_json(ARRAY(SELECT jsonb_array_elements_text(CASE WHEN jsonb_typeof(l.images) = 'array' THEN l.images ELSE '[]'::jsonb END))) AS images,
                l.source_url,
                to_char(l.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
                to_char(l.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at) f)
      END
    $$`);
  await knex.raw(`
    CREATE FUNCTION listings_set_public_json() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.public_json := listing_public_json(NEW);
      RETURN NEW;
    END $$`);
  // BEFORE triggers run in the order of their names: this one last (after listings_sort_flags and
  // listings_set_dedup_cell, which change no column it writes from).
  await knex.raw(`
    CREATE TRIGGER listings_set_public_json
    BEFORE INSERT OR UPDATE OF source, external_id, title, price_eur, area_m2, rooms, commune, locality, lat, lng,
      listing_type, accepts_students, images, source_url, created_at, updated_at, public_json
    ON listings FOR EACH ROW EXECUTE FUNCTION listings_set_public_json()`);
  await knex.raw(`ALTER TABLE listings DISABLE TRIGGER listings_changes_update`);
  // Naming public_json in the SET list fires the trigger, which writes it.
  await knex.raw(`UPDATE listings SET public_json = NULL`);
  await knex.raw(`ALTER TABLE listings ENABLE TRIGGER listings_changes_update`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TRIGGER IF EXISTS listings_set_public_json ON listings`);
  await knex.raw(`DROP FUNCTION IF EXISTS listings_set_public_json()`);
  await knex.raw(`DROP FUNCTION IF EXISTS listing_public_json(listings)`);
  await knex.raw(`ALTER TABLE listings DROP COLUMN IF EXISTS public_json`);
}
