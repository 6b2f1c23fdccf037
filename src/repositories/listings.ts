import type { Knex } from 'knex';
import type { ListingContent, ListingRow } from '../domain/listing.js';
import { boundingBox, EARTH_RADIUS_KM } from '../domain/geo.js';
import type { ListingFilter, Sort } from '../domain/search.js';

// What the API reads of a listing: the public columns, and the distance on a geo search.
export type PublicListingRow = ListingContent & Pick<ListingRow, 'created_at' | 'updated_at' | 'flags'> & { distance_km?: number };

// The columns GET /listings/:id presents (src/http/present.ts).
export const PUBLIC_COLUMNS = [
  'id',
  'source',
  'external_id',
  'title',
  'price_eur',
  'area_m2',
  'rooms',
  'commune',
  'locality',
  'lat',
  'lng',
  'listing_type',
  'accepts_students',
  'images',
  'source_url',
  'created_at',
  'updated_at',
  'flags',
];
const COLUMNS = PUBLIC_COLUMNS;

// Great-circle distance in km from (?, ?) to the row's coordinates (haversine). It reads
// the coordinates from `geo` (point(lng, lat), the same values as lat/lng) because the geo
// index carries `geo`: the distance is then computed from the index alone.
const HAVERSINE = `(2 * ${EARTH_RADIUS_KM} * asin(least(1, sqrt(
  power(sin(radians(geo[1] - ?) / 2), 2) + cos(radians(?)) * cos(radians(geo[1])) * power(sin(radians(geo[0] - ?) / 2), 2)))))`;

function haversineSql(db: Knex, g: { lat: number; lng: number }) {
  return db.raw(HAVERSINE, [g.lat, g.lat, g.lng]);
}

function applyFilter(db: Knex, q: Knex.QueryBuilder, f: ListingFilter): Knex.QueryBuilder {
  q.where('status', 'active');
  if (!f.includeFlagged) q.where('flagged', false);
  else if (f.flagged !== undefined) q.where('flagged', f.flagged);
  if (f.communes) q.whereIn('commune', f.communes);
  if (f.localities) q.whereIn('locality', f.localities);
  if (f.minPrice !== undefined) q.where('price_eur', '>=', f.minPrice);
  if (f.maxPrice !== undefined) q.where('price_eur', '<=', f.maxPrice);
  if (f.minRooms !== undefined) q.where('rooms', '>=', f.minRooms);
  if (f.listingType) q.where('listing_type', f.listingType);
  if (f.source) q.where('source', f.source.toLowerCase()); // feed names are lower-case slugs
  if (f.studentOnly) q.where('accepts_students', true);
  if (f.geo) {
    const b = boundingBox(f.geo);
    q.whereNotNull('lat');
    if (b.wraps) q.whereBetween('lat', [b.latMin, b.latMax]);
    else q.whereRaw('geo <@ box(point(?, ?), point(?, ?))', [b.lngMin, b.latMin, b.lngMax, b.latMax]);
    // Inclusive boundary; the micrometre of slack absorbs floating-point noise, so a point
    // computed to lie exactly on the circle is not lost to the last bit of a sine.
    q.where(haversineSql(db, f.geo), '<=', f.geo.radiusKm + 1e-9);
  }
  return q;
}

// ORDER BY for a sort (ties broken by id, nulls last), over the columns of alias `alias`, or
// unqualified (where distance_km is the select list's own alias).
function orderSql(sort: Sort, alias?: string): string {
  const t = alias ? `${alias}.` : '';
  switch (sort) {
    case 'price':
      return `${t}price_eur ASC, ${t}id ASC`;
    case '-price':
      return `${t}price_eur DESC, ${t}id ASC`;
    case 'size':
      return `${t}area_m2 ASC NULLS LAST, ${t}id ASC`;
    case '-size':
      return `${t}area_m2 DESC NULLS LAST, ${t}id ASC`;
    case 'createdAt':
      return `${t}created_at ASC, ${t}id ASC`;
    case '-createdAt':
      return `${t}created_at DESC, ${t}id ASC`;
    case 'distance':
      return `${t}distance_km ASC, ${t}id ASC`;
  }
}

// Two phases: the page's ids and sort keys (from an index alone where one covers the
// filters: migrations/20261122003100_covering_read_indexes.ts), then the full rows of just those ids.
export function listingsPageQuery(db: Knex, f: ListingFilter, opts: { sort: Sort; page: number; perPage: number }): Knex.QueryBuilder {
  const keys = applyFilter(db, db('listings').select('id', 'price_eur', 'area_m2', 'created_at'), f);
  if (f.geo) keys.select(db.raw(`${HAVERSINE} AS distance_km`, [f.geo.lat, f.geo.lat, f.geo.lng]));
  if (opts.sort === 'distance' && !f.geo) throw new Error('sort=distance needs a geo filter');
  keys.orderByRaw(orderSql(opts.sort)).limit(opts.perPage).offset((opts.page - 1) * opts.perPage);
  return db
    .with('page', keys)
    .select(COLUMNS.map((c) => `l.${c}`))
    .select(f.geo ? ['page.distance_km'] : [])
    .from('page')
    .join('listings as l', 'l.id', 'page.id')
    .orderByRaw(orderSql(opts.sort, 'page'));
}

export function countListingsQuery(db: Knex, f: ListingFilter): Knex.QueryBuilder {
  return applyFilter(db, db('listings').count<{ count: number }[]>('* as count'), f);
}

export async function findListingsPage(db: Knex, f: ListingFilter, opts: { sort: Sort; page: number; perPage: number }): Promise<PublicListingRow[]> {
  return (await listingsPageQuery(db, f, opts)) as PublicListingRow[];
}

// The exact number of matching listings.
export async function countListings(db: Knex, f: ListingFilter): Promise<number> {
  const [{ count }] = (await countListingsQuery(db, f)) as { count: number }[];
  return Number(count);
}

// The listings of a page the read model chose, in the order of `ids`. A listing that is no
// longer active (or now flagged, for a tier that must not see it) is missing from the result.
// The statement is written once (no query builder per page): it runs for every page the read
// model answers that no cache holds.
const BY_IDS = `SELECT ${COLUMNS.join(', ')} FROM listings WHERE id = ANY(?::text[]) AND status = 'active'`;
const BY_IDS_UNFLAGGED = `${BY_IDS} AND NOT flagged`;

// Named, so that each pooled connection prepares the statement once and PostgreSQL then runs
// its cached plan: unprepared, one of these primary-key reads cost PostgreSQL 0.10-0.17 ms of
// CPU at 1,000,000 listings, mostly planning (a table with 17 indexes); prepared, 0.02 ms.
const prepared = (name: string) => ({ name });

export async function findActiveListingsByIds(db: Knex, ids: string[], includeFlagged: boolean): Promise<PublicListingRow[]> {
  if (ids.length === 0) return [];
  const { rows } = (await db
    .raw(includeFlagged ? BY_IDS : BY_IDS_UNFLAGGED, [ids])
    .options(prepared(includeFlagged ? 'listings-by-ids' : 'listings-by-ids-unflagged'))) as { rows: PublicListingRow[] };
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

// The same reads with each listing's public fields from `source` to `updated_at` as JSON text,
// byte for byte what JSON.stringify writes for those fields of presentListing's object
// (src/http/present.ts; test/api/listing-json.test.ts checks every row against it): written by
// PostgreSQL when the row is written (the column public_json, kept by a trigger: migration
// 20261202000100), not at each read. Parsing 18 columns per row into objects (dates, the images'
// JSON, the flags' array) and writing them out again cost the request thread more than the rest
// of a page, and writing them in this statement cost PostgreSQL about as much as finding the
// rows. `fields` is null for a row whose values PostgreSQL writes otherwise than JavaScript (a
// float that is -0 or needs an exponent in either, a timestamp outside the years 1000-9999: the
// migration says which); the caller presents such a row from its columns. `flags_json` is the
// flags as a JSON array, null when there are none (a trigger keeps the stored flags sorted).
export interface ListingJsonRow {
  id: string;
  flags_json: string | null;
  fields: string | null;
}

const BY_IDS_JSON = `SELECT l.id, CASE WHEN l.flagged THEN array_to_json(l.flags)::text END AS flags_json, l.public_json AS fields
  FROM listings l WHERE l.id = ANY(?::text[]) AND l.status = 'active'`;

// The active listings among `ids` (flagged ones included), in no particular order.
export async function findActiveListingsJson(db: Knex, ids: string[]): Promise<ListingJsonRow[]> {
  if (ids.length === 0) return [];
  const { rows } = (await db.raw(BY_IDS_JSON, [ids]).options(prepared('listings-json-by-ids'))) as { rows: ListingJsonRow[] };
  return rows;
}

// Whether the listings table holds any row at all (whatever its status).
export async function hasListings(db: Knex): Promise<boolean> {
  return (await db('listings').select('id').first()) !== undefined;
}

// The active listing that absorbed a merged one (a duplicate of another source's listing),
// or null when `id` is not merged or its target is no longer active; a flagged target only when
// includeFlagged (the public page, seen without a key, gives Free's view: an outside probe of stop
// 49 was led by a merged id's page to a flagged listing's id, which Free and Starter keys are not
// given).
export async function findActiveMergeTarget(db: Knex, id: string, includeFlagged: boolean): Promise<string | null> {
  const q = db('listings as l')
    .join('listings as t', 't.id', 'l.merged_into')
    .select('t.id')
    .where({ 'l.id': id, 'l.status': 'merged', 't.status': 'active' });
  if (!includeFlagged) q.where('t.flagged', false);
  const row = await q.first();
  return (row?.id as string | undefined) ?? null;
}

const BY_ID = `SELECT ${COLUMNS.join(', ')} FROM listings WHERE id = ? AND status = 'active'`;
const BY_ID_UNFLAGGED = `${BY_ID} AND NOT flagged`;

export async function findActiveListing(db: Knex, id: string, includeFlagged: boolean): Promise<PublicListingRow | null> {
  const { rows } = (await db
    .raw(includeFlagged ? BY_ID : BY_ID_UNFLAGGED, [id])
    .options(prepared(includeFlagged ? 'listing-by-id' : 'listing-by-id-unflagged'))) as { rows: PublicListingRow[] };
  return rows[0] ?? null;
}
