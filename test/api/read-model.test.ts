import type { Worker } from 'node:worker_threads';
import type { Knex } from 'knex';
import request from 'supertest';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { Rng } from '../../src/demo/random.js';
import { LISTING_TYPES } from '../../src/domain/listing.js';
import { haversineKm } from '../../src/domain/geo.js';
import type { ListingIndex } from '../../src/read-model/listing-index.js';
import { loadListingIndex } from '../../src/read-model/builder.js';
import { ListingReadModel } from '../../src/read-model/read-model.js';
import { ReadModelThread } from '../../src/read-model/thread.js';
import { currentDataVersion } from '../../src/repositories/data-version.js';
import { countListings, findListingsPage } from '../../src/repositories/listings.js';
import { SORTS, type ListingFilter, type Sort } from '../../src/domain/search.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, buildTestApp, createKey, ensureSource, insertListing, listingIdsOf, silentLogger } from '../helpers/factory.js';

// The read model must answer exactly what the SQL answers: the same total and the same ids in
// the same order, for any filter, sort and page. These tests check that against PostgreSQL on
// a data set built to be awkward: ties on every sort key, unknown areas, rooms and coordinates,
// points in the same building, flagged, inactive and merged listings, ids outside the usual
// shape (their order is the database's).

const SOURCES = ['agency-one', 'agency-two', 'native', 'capital-homes'];
const LOCALITIES = ['Kirchberg', 'Belvaux', 'Gare', 'Bonnevoie', null];
const t = useTestContext();
let communes: string[];
let points: Array<{ lat: number; lng: number }>;
let index: ListingIndex;

async function fill(db: Knex, n: number, rng: Rng): Promise<void> {
  for (const s of SOURCES) await ensureSource(db, s);
  const listingId = await listingIdsOf(db);
  const buildings = Array.from({ length: 40 }, () => ({ lat: rng.between(49.45, 50.15), lng: rng.between(5.75, 6.5) }));
  const days = Array.from({ length: 30 }, (_, k) => Date.UTC(2026, 9, 1 + k, 8, 0, 0, k % 3 === 0 ? 0 : rng.int(0, 999)));
  const rows = [];
  const odd = ['A-1', 'a_1', 'Z', 'lst_ZZZ', 'lst-000', '0'];
  for (let k = 0; k < n; k++) {
    const source = rng.pick(SOURCES);
    const external = `X${k}`;
    const coords = rng.chance(0.2) ? null : rng.chance(0.3) ? rng.pick(buildings) : { lat: rng.between(49.45, 50.15), lng: rng.between(5.75, 6.5) };
    const created = new Date(rng.pick(days));
    const status = rng.chance(0.9) ? 'active' : 'inactive';
    rows.push({
      id: k < odd.length ? odd[k] : listingId(source, external),
      source,
      external_id: external,
      title: `Listing ${k}`,
      price_eur: rng.chance(0.5) ? rng.pick([800, 1200, 1500, 1500, 2000, 2500, 450000, 900000]) : rng.int(300, 3_000_000),
      area_m2: rng.chance(0.2) ? null : rng.chance(0.5) ? rng.pick([45, 60, 80]) : Math.round(rng.between(15, 300) * 10) / 10,
      rooms: rng.chance(0.15) ? null : rng.int(0, 6),
      commune: rng.chance(0.3) ? 'Luxembourg' : rng.pick(communes),
      locality: rng.pick(LOCALITIES),
      lat: coords?.lat ?? null,
      lng: coords?.lng ?? null,
      listing_type: rng.pick(LISTING_TYPES),
      accepts_students: rng.chance(0.2),
      images: '[]',
      source_url: null,
      status,
      flags: rng.chance(0.12) ? [rng.pick(['stale', 'price_outlier', 'possible_duplicate'])] : [],
      created_at: created,
      updated_at: created,
      first_seen_at: created,
      last_seen_at: created,
      removed_at: status === 'inactive' ? created : null,
    });
  }
  for (let k = 0; k < rows.length; k += 500) await db('listings').insert(rows.slice(k, k + 500));
  // A few merged duplicates, which never show.
  const active = rows.filter((r) => r.status === 'active').slice(0, 20);
  for (const [k, target] of active.entries()) {
    await insertListing(db, { external_id: `M${k}`, source: 'agency-two', status: 'merged', merged_into: target.id, lat: target.lat, lng: target.lng });
  }
  points = rows.filter((r) => r.lat !== null).map((r) => ({ lat: r.lat!, lng: r.lng! }));
}

function randomFilter(rng: Rng): ListingFilter {
  const f: ListingFilter = { includeFlagged: rng.chance(0.5) };
  if (f.includeFlagged && rng.chance(0.3)) f.flagged = rng.chance(0.5);
  if (rng.chance(0.3)) f.communes = rng.chance(0.2) ? [rng.pick(communes), rng.pick(communes)] : [rng.chance(0.5) ? 'Luxembourg' : rng.pick(communes)];
  if (rng.chance(0.1)) f.localities = rng.pick([['Kirchberg'], ['Belvaux'], ['Nowhere'], ['Kirchberg', 'Belvaux'], ['Nowhere', 'Belvaux']]);
  if (rng.chance(0.3)) f.minPrice = rng.pick([0, 800, 1500, 1501, 2500, 100000]);
  if (rng.chance(0.3)) f.maxPrice = rng.pick([1500, 2000, 3000, 1_000_000, 5_000_000]);
  if (rng.chance(0.2)) f.minRooms = rng.int(0, 5);
  if (rng.chance(0.3)) f.listingType = rng.pick(LISTING_TYPES);
  if (rng.chance(0.15)) f.source = rng.pick(['agency-one', 'NATIVE', 'Capital-Homes', 'unknown-feed']);
  if (rng.chance(0.15)) f.studentOnly = true;
  if (rng.chance(0.4)) {
    if (rng.chance(0.3)) {
      // On the circle's edge: the radius is the distance to another listing's point.
      const a = rng.pick(points);
      const b = rng.pick(points);
      f.geo = { lat: a.lat, lng: a.lng, radiusKm: Math.max(0.001, haversineKm(a.lat, a.lng, b.lat, b.lng)) };
    } else if (rng.chance(0.05)) {
      f.geo = { lat: rng.between(-89, 89), lng: rng.between(-179, 179), radiusKm: rng.between(0.5, 100) };
    } else {
      f.geo = { lat: rng.between(49.4, 50.2), lng: rng.between(5.7, 6.55), radiusKm: rng.pick([0.05, 0.5, 2, 5, 15, 40, 100]) };
    }
  }
  return f;
}

beforeAll(async () => {
  communes = (await t.db('communes').select('name')).map((r: { name: string }) => r.name);
  await fill(t.db, 4000, new Rng(20261122));
  index = await loadListingIndex(t.db);
});

describe('listings read model', () => {
  it('holds every active listing, at the current data version', async () => {
    const [{ count }] = await t.db('listings').where('status', 'active').count<{ count: number }[]>('* as count');
    expect(index.size).toBe(Number(count));
    expect(index.version).toBe(await currentDataVersion(t.db));
    expect(index.count({ includeFlagged: true })).toBe(Number(count));
  });

  it('gives the same totals and the same pages as SQL for 400 random queries', async () => {
    const rng = new Rng(7);
    let nonEmpty = 0;
    for (let q = 0; q < 400; q++) {
      const f = randomFilter(rng);
      const sorts = SORTS.filter((s) => s !== 'distance' || f.geo) as Sort[];
      const sort = rng.pick(sorts);
      const perPage = rng.pick([1, 5, 20, 50, 100]);
      const total = await countListings(t.db, f);
      const last = Math.max(1, Math.ceil(total / perPage));
      const page = rng.chance(0.2) ? last : rng.chance(0.1) ? last + 1 : rng.int(1, Math.min(last, 5));
      const label = JSON.stringify({ f, sort, page, perPage });
      expect(index.count(f), label).toBe(total);
      const sql = await findListingsPage(t.db, f, { sort, page, perPage });
      const mine = index.page(f, sort, (page - 1) * perPage, perPage, total);
      expect(mine.rows.map((i) => index.id(i)), label).toEqual(sql.map((r) => r.id));
      if (f.geo) {
        expect(mine.distances, label).toHaveLength(sql.length);
        sql.forEach((r, k) => expect(Math.abs(mine.distances![k] - Number(r.distance_km)), label).toBeLessThan(1e-9));
      }
      if (sql.length > 0) nonEmpty++;
    }
    // The queries must exercise real pages, not only empty ones.
    expect(nonEmpty).toBeGreaterThan(250);
  });

  // A filter naming no commune or locality takes its price ranges from the rows by type (one
  // range per type) instead of every (place, type) group: each type, price bounds, min_rooms
  // (counted per block) and the flag, every sort, pages walked and collected.
  it('gives the same totals and pages as SQL for filters that name no place', async () => {
    const rng = new Rng(15);
    for (let q = 0; q < 120; q++) {
      const f: ListingFilter = { includeFlagged: rng.chance(0.5) };
      if (rng.chance(0.8)) f.listingType = rng.pick(LISTING_TYPES);
      if (rng.chance(0.7)) f.minPrice = rng.pick([0, 800, 1500, 1501, 2500, 100000]);
      if (rng.chance(0.7)) f.maxPrice = rng.pick([1500, 2000, 3000, 1_000_000]);
      if (rng.chance(0.5)) f.minRooms = rng.pick([0, 1, 2, 4, 6, 9]);
      if (f.includeFlagged && rng.chance(0.3)) f.flagged = rng.chance(0.5);
      const sort = rng.pick(SORTS.filter((s) => s !== 'distance')) as Sort;
      const perPage = rng.pick([1, 20, 100]);
      const total = await countListings(t.db, f);
      const page = rng.int(1, Math.max(1, Math.min(4, Math.ceil(total / perPage))));
      const label = JSON.stringify({ f, sort, page, perPage });
      expect(index.count(f), label).toBe(total);
      const sql = await findListingsPage(t.db, f, { sort, page, perPage });
      expect(index.page(f, sort, (page - 1) * perPage, perPage, total).rows.map((i) => index.id(i)), label).toEqual(sql.map((r) => r.id));
    }
  });

  // Selective filters collect their matches from the candidate ranges (rather than walk a sort
  // order): an exact range is taken whole, flagged rows included for the tiers that see them;
  // with min_rooms only rooms and the flag are tested.
  it('gives the same pages as SQL for selective filters whose matches are collected', async () => {
    const rng = new Rng(16);
    let flaggedSeen = 0;
    for (let q = 0; q < 150; q++) {
      const f: ListingFilter = { includeFlagged: rng.chance(0.8), communes: [rng.pick(communes)], listingType: rng.pick(LISTING_TYPES) };
      if (rng.chance(0.3)) f.minRooms = rng.int(0, 4);
      if (rng.chance(0.3)) f.minPrice = rng.pick([0, 800, 1500]);
      const sort = rng.pick(SORTS.filter((s) => s !== 'distance')) as Sort;
      const total = await countListings(t.db, f);
      const label = JSON.stringify({ f, sort });
      expect(index.count(f), label).toBe(total);
      const sql = await findListingsPage(t.db, f, { sort, page: 1, perPage: 20 });
      expect(index.page(f, sort, 0, 20, total).rows.map((i) => index.id(i)), label).toEqual(sql.map((r) => r.id));
      flaggedSeen += sql.filter((r) => (r.flags ?? []).length > 0).length;
    }
    expect(flaggedSeen).toBeGreaterThan(5);
  });

  it('serves the API only at its own version: a write is visible at once, then from the new index', async () => {
    const readModel = new ListingReadModel(t.db, silentLogger, 10);
    try {
      const app = await buildTestApp(t.db, { readModel });
      const { key } = await createKey(t.db, 'pro');
      await readModel.ready(await currentDataVersion(t.db));
      const before = await request(app).get('/api/v1/listings?commune=Sanem&per_page=100').set(bearer(key));
      expect(before).toHaveStatus(200);
      expect(readModel.info().served).toBeGreaterThan(0);
      const expected = await countListings(t.db, { includeFlagged: true, communes: ['Sanem'] });
      expect(before.body.meta.total).toBe(expected);

      const added = await insertListing(t.db, { external_id: 'fresh', commune: 'Sanem', created_at: new Date('2030-01-01T00:00:00Z') });
      const version = await currentDataVersion(t.db);
      const after = await request(app).get('/api/v1/listings?commune=Sanem&per_page=100').set(bearer(key));
      expect(after.body.meta.total).toBe(expected + 1);
      expect(after.body.data[0].id).toBe(added.id);

      await readModel.ready(version);
      const served = readModel.info().served;
      const again = await request(app).get('/api/v1/listings?commune=Sanem&per_page=99').set(bearer(key));
      expect(readModel.info().served).toBe(served + 1);
      expect(again.body.meta.total).toBe(expected + 1);
      expect(again.body.data[0].id).toBe(added.id);
      // /readyz says which version it holds, how many loads it made and searches it answered.
      const ready = await request(app).get('/readyz');
      expect(ready.body.read_model).toMatchObject({ status: 'loaded', version, builds: readModel.info().builds, served: served + 1 });
      expect(ready.body.read_model.builds).toBeGreaterThanOrEqual(2);

      // Gone from the database after the index was built: the page is asked of SQL again.
      const index2 = await readModel.ready(version);
      await t.db('listings').where({ id: added.id }).update({ status: 'inactive', removed_at: new Date() });
      expect(index2.count({ includeFlagged: true, communes: ['Sanem'] })).toBe(expected + 1);
      const gone = await request(app).get('/api/v1/listings?commune=Sanem&per_page=98').set(bearer(key));
      expect(gone.body.meta.total).toBe(expected);
      expect(gone.body.data.map((l: { id: string }) => l.id)).not.toContain(added.id);
    } finally {
      await readModel.close();
    }
  });
});

// The server can run the read model on a thread of its own (LISTINGS_READ_MODEL_THREAD, off by
// default): the same answers as SQL, through the thread's messages; nothing at a version it does not
// hold; and when the thread dies, the API answers from SQL until the thread is back.
describe('listings read model on its own thread', () => {
  it('answers queries as SQL does, and none at a version it does not hold', async () => {
    const thread = new ReadModelThread({ databaseUrl: t.url, log: { LOG_LEVEL: 'silent', LOG_PRETTY: false } }, silentLogger);
    try {
      thread.warm();
      const version = await currentDataVersion(t.db);
      await thread.ready(version);
      expect(thread.info()).toMatchObject({ version, listings: expect.any(Number), lastError: null });
      const rng = new Rng(31);
      let nonEmpty = 0;
      for (let q = 0; q < 150; q++) {
        const f = randomFilter(rng);
        const sort = rng.pick(SORTS.filter((s) => s !== 'distance' || f.geo) as Sort[]);
        const perPage = rng.pick([1, 20, 100]);
        const total = await countListings(t.db, f);
        const page = rng.int(1, Math.max(1, Math.min(4, Math.ceil(total / perPage))));
        const label = JSON.stringify({ f, sort, page, perPage });
        const sql = await findListingsPage(t.db, f, { sort, page, perPage });
        // Counted by the thread, or given (a count the caller cached): the same page.
        const known = rng.chance(0.3) ? total : undefined;
        const answer = await thread.query(version, { filter: f, sort, offset: (page - 1) * perPage, limit: perPage, total: known });
        expect(answer, label).not.toBeNull();
        expect(answer!.total, label).toBe(total);
        expect(answer!.ids, label).toEqual(sql.map((r) => r.id));
        if (f.geo) sql.forEach((r, k) => expect(Math.abs(answer!.distances![k] - Number(r.distance_km)), label).toBeLessThan(1e-9));
        else expect(answer!.distances, label).toBeUndefined();
        if (sql.length > 0) nonEmpty++;
      }
      expect(nonEmpty).toBeGreaterThan(80);
      expect(thread.info().served).toBe(150);
      // Another version: null at once (the caller asks SQL), and counted as not served.
      expect(await thread.query(version + 1, { filter: { includeFlagged: true }, sort: 'price', offset: 0, limit: 5 })).toBeNull();
      expect(await thread.query(version - 1, { filter: { includeFlagged: true }, sort: 'price', offset: 0, limit: 5 })).toBeNull();
      expect(thread.info().served).toBe(150);
    } finally {
      await thread.close();
    }
  });

  it('serves the API at its own version; a write is visible at once, then from the new index; a dead thread leaves SQL answering', async () => {
    const thread = new ReadModelThread({ databaseUrl: t.url, settleMs: 10, log: { LOG_LEVEL: 'silent', LOG_PRETTY: false } }, silentLogger);
    try {
      thread.warm();
      const app = await buildTestApp(t.db, { readModel: thread });
      const { key } = await createKey(t.db, 'pro');
      await thread.ready(await currentDataVersion(t.db));
      const expected = await countListings(t.db, { includeFlagged: true, communes: ['Esch-sur-Alzette'] });
      const before = await request(app).get('/api/v1/listings?commune=Esch-sur-Alzette&per_page=100').set(bearer(key));
      expect(before).toHaveStatus(200);
      expect(before.body.meta.total).toBe(expected);
      expect(thread.info().served).toBe(1);

      const added = await insertListing(t.db, { external_id: 'thread-fresh', commune: 'Esch-sur-Alzette', created_at: new Date('2031-01-01T00:00:00Z') });
      const version = await currentDataVersion(t.db);
      const after = await request(app).get('/api/v1/listings?commune=Esch-sur-Alzette&per_page=100').set(bearer(key));
      expect(after.body.meta.total).toBe(expected + 1);
      expect(after.body.data[0].id).toBe(added.id);
      await thread.ready(version);
      const again = await request(app).get('/api/v1/listings?commune=Esch-sur-Alzette&per_page=99').set(bearer(key));
      expect(again.body.meta.total).toBe(expected + 1);
      expect(again.body.data[0].id).toBe(added.id);
      expect(thread.info().served).toBe(2);

      // The thread dies (as on running out of memory): answers come from SQL, then from the
      // thread started again.
      await (thread as unknown as { worker: Worker }).worker.terminate();
      const meanwhile = await request(app).get('/api/v1/listings?commune=Esch-sur-Alzette&per_page=98').set(bearer(key));
      expect(meanwhile).toHaveStatus(200);
      expect(meanwhile.body.meta.total).toBe(expected + 1);
      expect(meanwhile.body.data[0].id).toBe(added.id);
      expect(thread.info().served).toBe(2);
      await thread.ready(version);
      const back = await request(app).get('/api/v1/listings?commune=Esch-sur-Alzette&per_page=97').set(bearer(key));
      expect(back.body.meta.total).toBe(expected + 1);
      expect(thread.info().served).toBe(3);
    } finally {
      await thread.close();
    }
  });
});

// An outside probe of stop 58: with the read model on its own thread, a PostgreSQL outage while it
// loaded wrote knex's bare warnings (and stack traces) among the JSON log lines: the thread's pool
// had no logger.
describe('the read model thread during an outage', () => {
  it("writes knex's warnings as JSON lines of the log, never bare text", async () => {
    const written: string[] = [];
    const out = process.stdout.write.bind(process.stdout);
    const err = process.stderr.write.bind(process.stderr);
    const capture = (chunk: unknown) => (written.push(String(chunk)), true);
    process.stdout.write = capture as typeof process.stdout.write;
    process.stderr.write = capture as typeof process.stderr.write;
    const thread = new ReadModelThread({ databaseUrl: 'postgres://postgres@127.0.0.1:1/none', log: { LOG_LEVEL: 'warn', LOG_PRETTY: false } }, silentLogger);
    try {
      thread.warm();
      // Until its load has failed on the refused connection (knex warns as it fails).
      await vi.waitFor(() => expect(thread.info().lastError).not.toBeNull(), { timeout: 60_000, interval: 50 });
    } finally {
      await thread.close();
      process.stdout.write = out;
      process.stderr.write = err;
    }
    const lines = written.join('').split('\n').filter((l) => l.trim() !== '');
    const bare = lines.filter((l) => {
      try {
        return typeof JSON.parse(l) !== 'object';
      } catch {
        return true;
      }
    });
    expect(bare).toEqual([]);
  });
});
