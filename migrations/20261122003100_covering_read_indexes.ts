import type { Knex } from 'knex';

// Read paths at national scale and beyond (1,000,000 listings). A page is read in two
// phases: the ids of the page (and their sort keys) from an index alone, then the 20-100
// full rows by primary key. These indexes make phase one index-only:
// - one btree per sort direction, each with `id` as the tie-break in ascending order, so a
//   deep page is a walk along the index instead of a sort of every active listing;
// - the commune/type/price index carries what the usual filters and the default sort need;
// - the geo GiST index carries the columns of the usual filters, so a radius search computes
//   its exact distances from the index without visiting the table's pages.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX IF EXISTS listings_active_price_idx`);
  await knex.raw(`DROP INDEX IF EXISTS listings_active_area_idx`);
  await knex.raw(`DROP INDEX IF EXISTS listings_active_commune_idx`);
  await knex.raw(`DROP INDEX IF EXISTS listings_active_geo_idx`);
  await knex.raw(`CREATE INDEX listings_active_price_asc_idx ON listings (price_eur ASC, id ASC) INCLUDE (flagged) WHERE status = 'active'`);
  await knex.raw(`CREATE INDEX listings_active_price_desc_idx ON listings (price_eur DESC, id ASC) INCLUDE (flagged) WHERE status = 'active'`);
  await knex.raw(`CREATE INDEX listings_active_area_asc_idx ON listings (area_m2 ASC NULLS LAST, id ASC) INCLUDE (flagged) WHERE status = 'active'`);
  await knex.raw(`CREATE INDEX listings_active_area_desc_idx ON listings (area_m2 DESC NULLS LAST, id ASC) INCLUDE (flagged) WHERE status = 'active'`);
  await knex.raw(`CREATE INDEX listings_active_created_asc_idx ON listings (created_at ASC, id ASC) INCLUDE (flagged) WHERE status = 'active'`);
  await knex.raw(
    `CREATE INDEX listings_active_commune_idx ON listings (commune, listing_type, price_eur)
       INCLUDE (rooms, flagged, created_at, area_m2, accepts_students, locality, id) WHERE status = 'active'`,
  );
  await knex.raw(
    `CREATE INDEX listings_active_geo_idx ON listings USING gist (geo)
       INCLUDE (id, flagged, listing_type, price_eur, rooms, area_m2, created_at, accepts_students)
       WHERE status = 'active' AND lat IS NOT NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  for (const name of ['price_asc', 'price_desc', 'area_asc', 'area_desc', 'created_asc', 'commune', 'geo']) {
    await knex.raw(`DROP INDEX IF EXISTS listings_active_${name}_idx`);
  }
  await knex.raw(`CREATE INDEX listings_active_price_idx ON listings (price_eur, id) WHERE status = 'active'`);
  await knex.raw(`CREATE INDEX listings_active_area_idx ON listings (area_m2, id) WHERE status = 'active'`);
  await knex.raw(
    `CREATE INDEX listings_active_commune_idx ON listings (commune, listing_type, price_eur) INCLUDE (rooms, flagged) WHERE status = 'active'`,
  );
  await knex.raw(`CREATE INDEX listings_active_geo_idx ON listings USING gist (geo) WHERE status = 'active' AND lat IS NOT NULL`);
}
