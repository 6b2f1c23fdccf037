import type { Knex } from 'knex';

// Deduplication, issue 13: where a listing really is, and blocking for tolerances that are
// absolute as well as relative.
//
// - Coordinates equal to a reference point (a commune's or a locality's point in
//   communes.csv / localities.csv, within about 6 m, which covers 4-decimal rounding) are a
//   geocoder's fallback, not the flat's position: two listings "at" the commune centroid
//   are not neighbours. dedup_cell (the ~450 m grid cell) is now NULL for them as for
//   listings without coordinates, so they pair only by commune, like those. It is set by a
//   trigger, since a generated column cannot look up the reference points. The listing
//   keeps its coordinates: the source gave them, and the API shows what the source said.
// - Candidate indexes carry area_m2 as the last key column, so that the area window is
//   checked inside the index and only real candidates are read from the table:
//   * located neighbours: (type, cell, price, area): a 3 x 3 block of cells, one price
//     range each, listings without an area included (they pair only with a located one);
//   * the commune's listings with an area, located and not located apart, by (type,
//     commune, area bucket, price, area): one price range per 6 % area bucket.
export async function up(knex: Knex): Promise<void> {
  // Stored pairs may now also be weak matches left unused because a side is crowded.
  await knex.raw(`ALTER TABLE listing_dedup_pairs DROP CONSTRAINT listing_dedup_pairs_kind,
    ADD CONSTRAINT listing_dedup_pairs_kind CHECK (kind IN ('merge', 'possible', 'crowded'))`);
  await knex.raw(`
    CREATE TABLE dedup_reference_points (
      lat double precision NOT NULL,
      lng double precision NOT NULL,
      PRIMARY KEY (lat, lng)
    )`);
  await knex.raw(`
    INSERT INTO dedup_reference_points (lat, lng)
    SELECT lat, lng FROM communes
    UNION SELECT lat, lng FROM localities WHERE lat IS NOT NULL AND lng IS NOT NULL`);
  await knex.raw(`
    CREATE FUNCTION dedup_cell_of(plat double precision, plng double precision) RETURNS bigint LANGUAGE sql STABLE AS $$
      SELECT CASE
        WHEN plat IS NULL OR plng IS NULL THEN NULL
        WHEN EXISTS (SELECT 1 FROM dedup_reference_points p
                      WHERE p.lat BETWEEN plat - 0.00006 AND plat + 0.00006 AND abs(p.lng - plng) <= 0.00006) THEN NULL
        ELSE floor(plat / 0.004)::bigint * 100000 + floor(plng / 0.006)::bigint END
    $$`);
  await knex.raw(`
    CREATE FUNCTION listings_set_dedup_cell() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.dedup_cell := dedup_cell_of(NEW.lat, NEW.lng);
      RETURN NEW;
    END $$`);
  await knex.raw(`ALTER TABLE listings ALTER COLUMN dedup_cell DROP EXPRESSION`);
  await knex.raw(`
    CREATE TRIGGER listings_set_dedup_cell
    BEFORE INSERT OR UPDATE OF lat, lng ON listings
    FOR EACH ROW EXECUTE FUNCTION listings_set_dedup_cell()`);
  await knex.raw(`UPDATE listings SET dedup_cell = NULL WHERE dedup_cell IS NOT NULL AND dedup_cell_of(lat, lng) IS NULL`);

  await knex.raw(`DROP INDEX IF EXISTS listings_dedup_cell_idx`);
  await knex.raw(`DROP INDEX IF EXISTS listings_dedup_commune_idx`);
  await knex.raw(`DROP INDEX IF EXISTS listings_dedup_nocoords_idx`);
  await knex.raw(`
    CREATE INDEX listings_dedup_cell_idx ON listings (listing_type, dedup_cell, price_eur, area_m2)
      WHERE status IN ('active', 'merged') AND dedup_cell IS NOT NULL`);
  await knex.raw(`
    CREATE INDEX listings_dedup_located_idx ON listings (listing_type, commune, dedup_area_bucket, price_eur, area_m2)
      WHERE status IN ('active', 'merged') AND dedup_area_bucket IS NOT NULL AND dedup_cell IS NOT NULL`);
  await knex.raw(`
    CREATE INDEX listings_dedup_unlocated_idx ON listings (listing_type, commune, dedup_area_bucket, price_eur, area_m2)
      WHERE status IN ('active', 'merged') AND dedup_area_bucket IS NOT NULL AND dedup_cell IS NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DELETE FROM listing_dedup_pairs WHERE kind = 'crowded'`);
  await knex.raw(`ALTER TABLE listing_dedup_pairs DROP CONSTRAINT listing_dedup_pairs_kind,
    ADD CONSTRAINT listing_dedup_pairs_kind CHECK (kind IN ('merge', 'possible'))`);
  await knex.raw(`DROP INDEX IF EXISTS listings_dedup_unlocated_idx`);
  await knex.raw(`DROP INDEX IF EXISTS listings_dedup_located_idx`);
  await knex.raw(`DROP INDEX IF EXISTS listings_dedup_cell_idx`);
  await knex.raw(`DROP TRIGGER IF EXISTS listings_set_dedup_cell ON listings`);
  await knex.raw(`DROP FUNCTION IF EXISTS listings_set_dedup_cell()`);
  await knex.raw(`DROP FUNCTION IF EXISTS dedup_cell_of(double precision, double precision)`);
  await knex.raw(`DROP TABLE IF EXISTS dedup_reference_points`);
  await knex.raw(`ALTER TABLE listings DROP COLUMN dedup_cell`);
  await knex.raw(`
    ALTER TABLE listings ADD COLUMN dedup_cell bigint GENERATED ALWAYS AS (
      CASE WHEN lat IS NOT NULL AND lng IS NOT NULL
           THEN floor(lat / 0.004)::bigint * 100000 + floor(lng / 0.006)::bigint END) STORED`);
  await knex.raw(`
    CREATE INDEX listings_dedup_commune_idx ON listings (listing_type, commune, dedup_area_bucket, price_eur)
      WHERE status IN ('active', 'merged') AND dedup_area_bucket IS NOT NULL`);
  await knex.raw(`
    CREATE INDEX listings_dedup_cell_idx ON listings (listing_type, dedup_cell, dedup_area_bucket, price_eur)
      WHERE status IN ('active', 'merged') AND dedup_area_bucket IS NOT NULL AND dedup_cell IS NOT NULL`);
  await knex.raw(`
    CREATE INDEX listings_dedup_nocoords_idx ON listings (listing_type, commune, dedup_area_bucket, price_eur)
      WHERE status IN ('active', 'merged') AND dedup_area_bucket IS NOT NULL AND lat IS NULL`);
}
