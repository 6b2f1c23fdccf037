import type { Knex } from 'knex';
import { LOCK_MARKET_SNAPSHOT } from '../db/advisory-locks.js';
import { SNAPSHOTS_CHANNEL } from '../db/listener.js';
import type { ListingType } from '../domain/listing.js';
import { ROOMS_TOP_BUCKET, type MarketFigures } from '../domain/market.js';
import { COUNTED_LISTINGS_SQL, FIGURES_INNER_SQL, FIGURES_OUTER_SQL } from './market.js';

// The daily snapshots of the market figures (migrations/20261124000500_market_snapshots.ts).

// The listings a live snapshot counts: those /market/prices counts.
const LIVE_SOURCE_SQL = `(SELECT commune, listing_type, rooms, price_eur, area_m2 FROM listings WHERE ${COUNTED_LISTINGS_SQL}) AS counted`;

// The rooms bucket of the snapshots: -1 for all listings.
export const ALL_ROOMS = -1;

export interface SnapshotOptions {
  day: string; // YYYY-MM-DD (UTC)
  takenAt: Date;
  kind?: 'live' | 'demo_backfill';
  // A relation (SQL with its bindings) of the listings to count, with the columns commune,
  // listing_type, rooms, price_eur and area_m2. Default: the active, unflagged listings.
  // The demo's backfill passes the listings as they stood on a past day (src/demo/history.ts).
  source?: { sql: string; bindings?: Knex.RawBinding[] };
}

// Takes (or takes again) the snapshot of a day: the day's rows are replaced whole, in one
// transaction, so taking it twice the same day is the same as taking it once with the later
// data. Concurrent takers wait for each other.
export async function takeMarketSnapshot(db: Knex, opts: SnapshotOptions): Promise<{ day: string; rows: number }> {
  const source = opts.source ?? { sql: LIVE_SOURCE_SQL, bindings: [] };
  return db.transaction(async (trx) => {
    // At 1,000,000 listings a snapshot reads them all: longer than a request may take.
    await trx.raw(`SET LOCAL statement_timeout = '600s'`);
    await trx.raw(`SELECT pg_advisory_xact_lock(?, 0)`, [LOCK_MARKET_SNAPSHOT]);
    await trx.raw(`DELETE FROM market_snapshot_days WHERE day = ?::date`, [opts.day]);
    // The data version read before the listings: a change committed in between makes the
    // recorded version older than the data, so the scheduler takes the day again (never the
    // reverse).
    await trx.raw(
      `INSERT INTO market_snapshot_days (day, taken_at, data_version, kind)
       VALUES (?::date, ?, CASE WHEN ? = 'live' THEN (SELECT version FROM data_state) END, ?)`,
      [opts.day, opts.takenAt, opts.kind ?? 'live', opts.kind ?? 'live'],
    );
    // Not least(rooms, 5): least() ignores NULLs, and would count unknown rooms as 5.
    const bucket = `(CASE WHEN rooms >= ${ROOMS_TOP_BUCKET} THEN ${ROOMS_TOP_BUCKET} ELSE rooms END)`;
    const inserted = await trx.raw(
      `INSERT INTO market_snapshots (day, commune, listing_type, rooms, listings, listings_with_area, avg_price, p25_price, median_price,
                                     p75_price, avg_per_m2, p25_per_m2, median_per_m2, p75_per_m2)
       SELECT ?::date, commune, listing_type, bucket, ${FIGURES_OUTER_SQL}
         FROM (SELECT commune, listing_type,
                      CASE WHEN GROUPING(${bucket}) = 1 THEN ${ALL_ROOMS} ELSE ${bucket} END AS bucket,
                      ${FIGURES_INNER_SQL}
                 FROM ${source.sql}
                GROUP BY GROUPING SETS ((commune, listing_type), (commune, listing_type, ${bucket}))
               HAVING GROUPING(${bucket}) = 1 OR ${bucket} IS NOT NULL) g`,
      [opts.day, ...(source.bindings ?? [])],
    );
    await bumpSnapshotVersion(trx);
    return { day: opts.day, rows: inserted.rowCount as number };
  });
}

export interface SnapshotDay {
  day: string;
  taken_at: Date;
  data_version: number | null;
  kind: 'live' | 'demo_backfill';
}

export async function snapshotDay(db: Knex, day: string): Promise<SnapshotDay | null> {
  const { rows } = await db.raw(`SELECT day::text AS day, taken_at, data_version, kind FROM market_snapshot_days WHERE day = ?::date`, [day]);
  return (rows[0] as SnapshotDay | undefined) ?? null;
}

// Moves with every snapshot taken: the history's cached answers are keyed by it.
export async function snapshotVersion(db: Knex): Promise<number> {
  const { rows } = await db.raw(`SELECT version FROM market_snapshot_state`);
  return Number(rows[0]?.version ?? 0);
}

// The new version goes to every running instance when the transaction commits (a NOTIFY is
// delivered then, or never): each keeps it in memory (src/cache/live-state.ts), so a cached
// history answer costs no query. Their heartbeat also reads it, for any other writer.
async function bumpSnapshotVersion(trx: Knex.Transaction): Promise<void> {
  await trx.raw(`WITH v AS (UPDATE market_snapshot_state SET version = version + 1 RETURNING version) SELECT pg_notify(?, version::text) FROM v`, [SNAPSHOTS_CHANNEL]);
}

export async function lastSnapshotAt(db: Knex): Promise<Date | null> {
  const { rows } = await db.raw(`SELECT max(taken_at) AS at FROM market_snapshot_days`);
  return (rows[0]?.at as Date | null) ?? null;
}

// Whether the demo data set was loaded to its end: its market history is the seeding's last
// step (src/demo/seed.ts), written in one transaction once every import has committed.
export async function demoHistoryLoaded(db: Knex): Promise<boolean> {
  const { rows } = await db.raw(`SELECT EXISTS (SELECT 1 FROM market_snapshot_days WHERE kind = 'demo_backfill') AS loaded`);
  return rows[0].loaded === true;
}

export async function deleteAllSnapshots(db: Knex): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw(`DELETE FROM market_snapshot_days`);
    await bumpSnapshotVersion(trx);
  });
}

export interface HistoryFilter {
  commune: string;
  listingType: ListingType;
  rooms: number; // ALL_ROOMS, 0..4, or 5 for 5 or more
  interval: 'week' | 'month';
  from: string;
  to: string;
}

export interface HistoryRow extends MarketFigures {
  period_start: string;
  snapshot_date: string;
}

// One row per period (ISO week or calendar month) with a snapshot day in from..to: the
// figures of the last snapshot day of the period. A day without figures for the commune
// (no such listings then) gives listings 0. Read from the primary key's index alone.
export async function marketHistory(db: Knex, f: HistoryFilter): Promise<HistoryRow[]> {
  const { rows } = await db.raw(
    `WITH days AS (
       SELECT DISTINCT ON (1) date_trunc(?, day::timestamp)::date AS period_start, day
         FROM market_snapshot_days
        WHERE day BETWEEN ?::date AND ?::date
        ORDER BY 1, day DESC
     )
     SELECT d.period_start::text AS period_start, d.day::text AS snapshot_date,
            coalesce(s.listings, 0) AS listings, coalesce(s.listings_with_area, 0) AS listings_with_area,
            s.avg_price, s.p25_price, s.median_price, s.p75_price, s.avg_per_m2, s.p25_per_m2, s.median_per_m2, s.p75_per_m2
       FROM days d
       LEFT JOIN market_snapshots s ON s.commune = ? AND s.listing_type = ? AND s.rooms = ? AND s.day = d.day
      ORDER BY d.period_start`,
    [f.interval, f.from, f.to, f.commune, f.listingType, f.rooms],
  );
  return rows as HistoryRow[];
}
