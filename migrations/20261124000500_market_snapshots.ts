import type { Knex } from 'knex';

// Daily snapshots of the market figures (GET /api/v1/market/history, the /market page):
// the figures of /market/prices as they stood on a day, per commune, listing type and rooms
// bucket, taken by src/repositories/market-snapshots.ts (after an import that changed data,
// and at least once a day by the running server). A day's snapshot is replaced whole when it
// is taken again that day.
//
// - market_snapshot_days: one row per day a snapshot was taken (when, at which data version,
//   and whether it is live or the demo's backfill). A commune with no listings of a type on
//   such a day has no figures row: it had 0 listings.
// - market_snapshots: the figures. rooms is the bucket: 0..4, 5 for 5 or more, and -1 for
//   all listings whatever their rooms (a key column cannot be NULL). Money in whole euros,
//   per-m² figures in cents, exactly as /market/prices computes them.
// - market_snapshot_state: a counter moved by every snapshot, which the history's cached
//   answers are keyed by (snapshots do not change the listings' data version).
// The primary key carries every figure (INCLUDE): a commune's history is read from the index
// alone, in day order.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE market_snapshot_days (
      day date PRIMARY KEY,
      taken_at timestamptz(3) NOT NULL,
      data_version bigint,
      kind text NOT NULL DEFAULT 'live' CHECK (kind IN ('live', 'demo_backfill'))
    )`);
  await knex.raw(`
    CREATE TABLE market_snapshots (
      day date NOT NULL REFERENCES market_snapshot_days (day) ON DELETE CASCADE,
      commune text NOT NULL,
      listing_type text NOT NULL CHECK (listing_type IN ('RENT','SALE','SUBLET','FLATSHARE')),
      rooms smallint NOT NULL CHECK (rooms BETWEEN -1 AND 5),
      listings integer NOT NULL,
      listings_with_area integer NOT NULL,
      avg_price integer,
      p25_price integer,
      median_price integer,
      p75_price integer,
      avg_per_m2 numeric(12,2),
      p25_per_m2 numeric(12,2),
      median_per_m2 numeric(12,2),
      p75_per_m2 numeric(12,2),
      CONSTRAINT market_snapshots_pkey PRIMARY KEY (commune, listing_type, rooms, day)
        INCLUDE (listings, listings_with_area, avg_price, p25_price, median_price, p75_price, avg_per_m2, p25_per_m2, median_per_m2, p75_per_m2)
    )`);
  await knex.raw(`CREATE INDEX market_snapshots_day_idx ON market_snapshots (day)`);
  await knex.raw(`
    CREATE TABLE market_snapshot_state (
      id boolean PRIMARY KEY DEFAULT true CHECK (id),
      version bigint NOT NULL DEFAULT 1
    )`);
  await knex.raw(`INSERT INTO market_snapshot_state DEFAULT VALUES`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS market_snapshots`);
  await knex.raw(`DROP TABLE IF EXISTS market_snapshot_days`);
  await knex.raw(`DROP TABLE IF EXISTS market_snapshot_state`);
}
