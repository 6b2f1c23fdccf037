import type { Knex } from 'knex';
import { contentHash } from './normalize.js';
import type { NormalizedListing } from './types.js';

type Db = Knex | Knex.Transaction;

const CHUNK = 5000;

async function rows<T>(db: Db, sql: string, bindings: readonly unknown[] = []): Promise<T[]> {
  const res = await db.raw(sql, bindings as Knex.RawBinding[]);
  return res.rows as T[];
}

// The normalized records go into a temporary table batch by batch as the file is read, in
// a few statements of array parameters (unnest), never one round trip per record; every
// later step is set-based SQL joining that table. Beside it: the ids a full snapshot must
// not withdraw (its valid records, and its rejected records whose id is known: the agency
// still lists them, we just could not read this version) and the ids the feed explicitly
// withdraws (deleted, sold, let...).
export async function createStaging(trx: Db): Promise<void> {
  await trx.raw(`
    CREATE TEMP TABLE ingest_batch (
      id text PRIMARY KEY, external_id text NOT NULL, title text NOT NULL, price_eur integer NOT NULL,
      area_m2 double precision, rooms integer, commune text NOT NULL, locality text,
      lat double precision, lng double precision, listing_type text NOT NULL, accepts_students boolean NOT NULL,
      images jsonb NOT NULL, source_url text, created_at timestamptz, created_kind text, stated_at timestamptz, content_hash text NOT NULL,
      postcode smallint, charges_included boolean, charges_eur integer, floor smallint, prev_status text, prev_hash text
    ) ON COMMIT DROP`);
  await trx.raw(`CREATE TEMP TABLE ingest_keep (id text PRIMARY KEY) ON COMMIT DROP`);
  await trx.raw(`CREATE TEMP TABLE ingest_gone (id text PRIMARY KEY) ON COMMIT DROP`);
  // The external ids of the file so far that a record took (imported or withdrew), and where:
  // duplicates are found here, not in a set in memory that would grow with the file.
  await trx.raw(`CREATE TEMP TABLE ingest_seen (external_id text PRIMARY KEY, position text NOT NULL) ON COMMIT DROP`);
  // The listings the life cycle creates, changes or withdraws: deduplication starts from
  // them. A table, not an array: an import may touch a million listings.
  await trx.raw(`CREATE TEMP TABLE ingest_touched (id text PRIMARY KEY) ON COMMIT DROP`);
}

// Of a batch's external ids, those an earlier batch took (imported or withdrew), with the
// position of the record that did.
export async function seenBefore(trx: Db, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const found = await rows<{ external_id: string; position: string }>(trx, `SELECT external_id, position FROM ingest_seen WHERE external_id = ANY (?::text[])`, [ids]);
  return new Map(found.map((r) => [r.external_id, r.position]));
}

// Records the external ids a batch took, each with the position of the record that did.
export async function markSeen(trx: Db, taken: Map<string, string>): Promise<void> {
  if (taken.size === 0) return;
  const ids = [...taken.keys()];
  await trx.raw(`INSERT INTO ingest_seen (external_id, position) SELECT * FROM unnest(?::text[], ?::text[]) ON CONFLICT DO NOTHING`, [ids, ids.map((id) => taken.get(id)!)]);
}

// A record that gives no creation date keeps the one stored (the update below leaves
// created_at as it is), so when nothing else changed its content has not: its hash is the one
// stored, computed with that date, rather than "updated" with nothing public changed (an
// outside probe of stop 46: a feed sent again with its dates left out made every listing
// "updated", moved updated_at and put them all in /changes).
async function keepStoredDates(trx: Db, part: NormalizedListing[]): Promise<void> {
  const undated = part.filter((l) => !(l.created_at_kind === 'created' && l.created_at));
  if (undated.length === 0) return;
  const stored = await rows<{ id: string; content_hash: string; created_at: Date | null }>(
    trx,
    `SELECT id, content_hash, created_at FROM listings WHERE id = ANY (?::text[])`,
    [undated.map((l) => l.id)],
  );
  const byId = new Map(stored.map((r) => [r.id, r]));
  for (const l of undated) {
    const s = byId.get(l.id);
    if (!s || !s.created_at || s.content_hash === l.content_hash) continue;
    if (contentHash({ ...l, created_at: s.created_at, created_at_kind: 'created' }) === s.content_hash) l.content_hash = s.content_hash;
  }
}

export async function stageListings(trx: Db, listings: NormalizedListing[]): Promise<void> {
  if (listings.length === 0) return;
  for (let i = 0; i < listings.length; i += CHUNK) {
    const part = listings.slice(i, i + CHUNK);
    await keepStoredDates(trx, part);
    const col = <K extends keyof NormalizedListing>(k: K) => part.map((l) => l[k]);
    await trx.raw(
      `INSERT INTO ingest_batch (id, external_id, title, price_eur, area_m2, rooms, commune, locality, lat, lng,
         listing_type, accepts_students, images, source_url, created_at, created_kind, stated_at, content_hash, postcode, charges_included, charges_eur, floor)
       SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::integer[], ?::float8[], ?::integer[], ?::text[], ?::text[],
         ?::float8[], ?::float8[], ?::text[], ?::boolean[], ?::jsonb[], ?::text[], ?::timestamptz[], ?::text[], ?::timestamptz[], ?::text[], ?::smallint[], ?::boolean[], ?::integer[], ?::smallint[])`,
      [
        col('id'), col('external_id'), col('title'), col('price_eur'), col('area_m2'), col('rooms'), col('commune'),
        col('locality'), col('lat'), col('lng'), col('listing_type'), col('accepts_students'),
        part.map((l) => JSON.stringify(l.images)), col('source_url'),
        part.map((l) => (l.created_at ? l.created_at.toISOString() : null)), col('created_at_kind'),
        part.map((l) => (l.stated_at ? l.stated_at.toISOString() : null)), col('content_hash'), col('postcode'),
        col('charges_included'), col('charges_eur'), col('floor'),
      ] as unknown as Knex.RawBinding[],
    );
  }
}

export async function stageIds(trx: Db, set: 'keep' | 'gone', ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  for (let i = 0; i < ids.length; i += CHUNK * 4) {
    await trx.raw(`INSERT INTO ingest_${set} SELECT DISTINCT unnest(?::text[]) ON CONFLICT DO NOTHING`, [ids.slice(i, i + CHUNK * 4)]);
  }
}

// Once every batch is in: what each staged listing was before this import.
export async function finishStaging(trx: Db): Promise<void> {
  await trx.raw(`UPDATE ingest_batch b SET prev_status = l.status, prev_hash = l.content_hash FROM listings l WHERE l.id = b.id`);
  await trx.raw(`ANALYZE ingest_batch`);
  await trx.raw(`ANALYZE ingest_keep`);
  await trx.raw(`ANALYZE ingest_gone`);
}

function withdrawalFilter(full: boolean): string {
  return full
    ? `(NOT EXISTS (SELECT 1 FROM ingest_keep k WHERE k.id = l.id) OR EXISTS (SELECT 1 FROM ingest_gone g WHERE g.id = l.id))`
    : `EXISTS (SELECT 1 FROM ingest_gone g WHERE g.id = l.id)`;
}

// A source is known from its first data on (sources: the stats list it).
export async function registerSource(trx: Db, source: string, format: string): Promise<void> {
  await trx.raw(`INSERT INTO sources (name, format) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, [source, format]);
}

// Live listings of the source (public or merged into another) and how many this delivery
// would withdraw: the numbers the mass-withdrawal guard compares.
export async function withdrawalPreview(trx: Db, source: string, full: boolean): Promise<{ live: number; wouldWithdraw: number }> {
  const [r] = await rows<{ live: number; would: number }>(
    trx,
    `SELECT count(*)::int AS live, count(*) FILTER (WHERE ${withdrawalFilter(full)})::int AS would
       FROM listings l WHERE l.source = ? AND l.status IN ('active', 'merged')`,
    [source],
  );
  return { live: r.live, wouldWithdraw: r.would };
}

// The planner's statistics of listings, refreshed when this import wrote a good part of
// the table: deduplication searches it for candidates in the same transaction, before
// autovacuum can see (and analyze) the new rows. On statistics of an empty table (a first
// big import), the search walked every price range of a listing type instead of the 3 x 3
// grid cells, about 100 ms per listing: hours for 200,000 listings. The threshold is
// autovacuum's default (50 rows and 10 % of the table).
export async function refreshListingStatistics(trx: Db, written: number): Promise<void> {
  const [{ tuples }] = await rows<{ tuples: number }>(trx, `SELECT greatest(reltuples, 0)::float8 AS tuples FROM pg_class WHERE oid = 'listings'::regclass`);
  if (written > 50 + 0.1 * tuples) await trx.raw(`ANALYZE listings`);
}

export interface LifecycleResult {
  created: number;
  updated: number;
  unchanged: number;
  reactivated: number;
  withdrawn: number;
  // Records of the feed that withdrew a live listing, and those whose listing was not live.
  deleted: number;
  skipped: number;
  // How many listings' dedup standing may have changed (their ids are in ingest_touched),
  // and the groups they belonged to.
  touched: number;
  formerCanonicals: string[];
}

export async function applyLifecycle(trx: Db, source: string, full: boolean, now: Date): Promise<LifecycleResult> {
  const [c] = await rows<{ created: number; updated: number; unchanged: number; reactivated: number }>(
    trx,
    `SELECT count(*) FILTER (WHERE prev_status IS NULL)::int AS created,
            count(*) FILTER (WHERE prev_status IN ('active', 'merged') AND prev_hash IS DISTINCT FROM content_hash)::int AS updated,
            count(*) FILTER (WHERE prev_status IN ('active', 'merged') AND prev_hash = content_hash)::int AS unchanged,
            count(*) FILTER (WHERE prev_status = 'inactive')::int AS reactivated
       FROM ingest_batch`,
  );

  // The ids of what changed go to ingest_touched; only counts and the former groups come
  // back.
  const [withdrawn] = await rows<{ n: number; deleted: number; groups: string[] }>(
    trx,
    `WITH gone AS (
       SELECT l.id, l.merged_into FROM listings l
        WHERE l.source = ? AND l.status IN ('active', 'merged') AND ${withdrawalFilter(full)}
        FOR UPDATE),
     w AS (
       UPDATE listings l
          SET status = 'inactive', merged_into = NULL, removed_at = ?, updated_at = ?,
              flags = array_remove(l.flags, 'possible_duplicate')
         FROM gone WHERE l.id = gone.id
       RETURNING l.id, gone.merged_into AS old_merged_into,
                 EXISTS (SELECT 1 FROM ingest_gone g WHERE g.id = l.id) AS by_record),
     t AS (INSERT INTO ingest_touched SELECT id FROM w ON CONFLICT DO NOTHING)
     SELECT count(*)::int AS n, count(*) FILTER (WHERE by_record)::int AS deleted,
            coalesce(array_agg(DISTINCT old_merged_into) FILTER (WHERE old_merged_into IS NOT NULL), '{}') AS groups
       FROM w`,
    [source, now, now],
  );
  const [{ asked }] = await rows<{ asked: number }>(trx, `SELECT count(*)::int AS asked FROM ingest_gone`);
  const deleted = withdrawn.deleted;

  await trx.raw(
    `INSERT INTO listings (id, source, external_id, title, price_eur, area_m2, rooms, commune, locality, lat, lng,
       listing_type, accepts_students, images, source_url, status, flags, created_at, stated_created_at, updated_at, first_seen_at,
       last_seen_at, content_hash, postcode, charges_included, charges_eur, floor)
     SELECT b.id, ?, b.external_id, b.title, b.price_eur, b.area_m2, b.rooms, b.commune, b.locality, b.lat, b.lng,
       b.listing_type, b.accepts_students, b.images, b.source_url, 'active', '{}', COALESCE(b.created_at, ?), b.stated_at, ?, ?, ?,
       b.content_hash, b.postcode, b.charges_included, b.charges_eur, b.floor
       FROM ingest_batch b WHERE b.prev_status IS NULL`,
    [source, now, now, now, now],
  );

  // Changed or coming back: the content is rewritten and the listing is (again) live. A
  // merged listing stays merged here; deduplication decides its standing afterwards.
  const [changed] = await rows<{ n: number; groups: string[] }>(
    trx,
    `WITH u AS (
     UPDATE listings l SET
        title = b.title, price_eur = b.price_eur, area_m2 = b.area_m2, rooms = b.rooms, commune = b.commune,
        locality = b.locality, lat = b.lat, lng = b.lng, listing_type = b.listing_type,
        accepts_students = b.accepts_students, images = b.images, source_url = b.source_url,
        created_at = CASE WHEN b.created_kind = 'created' AND b.created_at IS NOT NULL THEN b.created_at ELSE l.created_at END,
        stated_created_at = CASE WHEN b.created_kind = 'created' AND b.stated_at IS NOT NULL THEN b.stated_at ELSE l.stated_created_at END,
        content_hash = b.content_hash, postcode = b.postcode, charges_included = b.charges_included, charges_eur = b.charges_eur, floor = b.floor,
        status = CASE WHEN l.status = 'inactive' THEN 'active' ELSE l.status END,
        removed_at = NULL, updated_at = ?, last_seen_at = GREATEST(l.last_seen_at, ?)
       FROM ingest_batch b
      WHERE l.id = b.id AND b.prev_status IS NOT NULL
        AND (b.prev_hash IS DISTINCT FROM b.content_hash OR b.prev_status = 'inactive')
     RETURNING l.id, l.merged_into),
     t AS (INSERT INTO ingest_touched SELECT id FROM u ON CONFLICT DO NOTHING)
     SELECT count(*)::int AS n, coalesce(array_agg(DISTINCT merged_into) FILTER (WHERE merged_into IS NOT NULL), '{}') AS groups FROM u`,
    [now, now],
  );

  // Unchanged content, another postcode, word on the charges or floor read (not public content: see
  // migrations/20261128000100_listing_postcode.ts, 20261129000200_listing_charges_included.ts,
  // 20261129000300_listing_charges_eur.ts and 20261201000100_listing_floor.ts; a floor changes
  // with its title, so here only as listings stored before the column get it):
  // written without a public change, and decided again by deduplication, which reads them.
  const [refacted] = await rows<{ n: number; groups: string[] }>(
    trx,
    `WITH u AS (
     UPDATE listings l SET postcode = b.postcode, charges_included = b.charges_included, charges_eur = b.charges_eur, floor = b.floor
       FROM ingest_batch b
      WHERE l.id = b.id AND b.prev_status IN ('active', 'merged') AND b.prev_hash = b.content_hash
        AND (l.postcode IS DISTINCT FROM b.postcode OR l.charges_included IS DISTINCT FROM b.charges_included OR l.charges_eur IS DISTINCT FROM b.charges_eur
          OR l.floor IS DISTINCT FROM b.floor)
     RETURNING l.id, l.merged_into),
     t AS (INSERT INTO ingest_touched SELECT id FROM u ON CONFLICT DO NOTHING)
     SELECT count(*)::int AS n, coalesce(array_agg(DISTINCT merged_into) FILTER (WHERE merged_into IS NOT NULL), '{}') AS groups FROM u`,
  );

  // Unchanged: only the confirmation moves (updated_at stays).
  await trx.raw(
    `UPDATE listings l SET last_seen_at = ?
       FROM ingest_batch b
      WHERE l.id = b.id AND b.prev_status IN ('active', 'merged') AND b.prev_hash = b.content_hash AND l.last_seen_at < ?`,
    [now, now],
  );

  await trx.raw(`INSERT INTO ingest_touched SELECT id FROM ingest_batch WHERE prev_status IS NULL ON CONFLICT DO NOTHING`);
  await trx.raw(`ANALYZE ingest_touched`);
  return {
    ...c,
    withdrawn: withdrawn.n,
    deleted,
    skipped: asked - deleted,
    touched: c.created + changed.n + withdrawn.n + refacted.n,
    formerCanonicals: [...new Set([...withdrawn.groups, ...changed.groups, ...refacted.groups])],
  };
}
