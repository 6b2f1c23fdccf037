import request from 'supertest';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { describePeriod, periodStart } from '../../src/domain/market.js';
import { createDb } from '../../src/db/knex.js';
import { MarketSnapshotScheduler, ensureTodaysSnapshot, takeAfterImport } from '../../src/services/market-snapshots.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, insertListing, silentLogger } from '../helpers/factory.js';
import { countedListings, recompute } from '../helpers/market.js';

// A test clock: the app's "today" and the snapshots' day.
let now = new Date('2026-09-10T08:00:00Z');
const clock = () => now;
const t = useTestContext({ app: 'api', keys: ['free'], deps: { clock } });
const get = (path: string) => request(t.app).get(path).set(bearer(t.keys.free));

type Expected = Record<string, Record<string, unknown>>; // by "type rooms"
// What each snapshot day must hold, recomputed from the listings at the time it was taken.
const taken = new Map<string, Expected>();

async function snapshotAt(iso: string) {
  now = new Date(iso);
  expect(await ensureTodaysSnapshot(t.db, now)).toBe('taken');
  const counted = await countedListings(t.db);
  const e: Expected = {};
  for (const type of ['RENT', 'SALE']) for (const rooms of [null, 2, 5]) e[`${type} ${rooms}`] = recompute(counted, 'Strassen', type, rooms);
  taken.set(iso.slice(0, 10), e);
}

let n = 0;
const rent = (price: number, rooms: number | null, extra = {}) =>
  insertListing(t.db, { commune: 'Strassen', listing_type: 'RENT', price_eur: price, rooms, area_m2: 40 + ((n += 7) % 50), ...extra });

beforeAll(async () => {
  // September: a small market that grows and gets dearer, week by week.
  for (const p of [1500, 1620, 1710, 1880]) await rent(p, 2);
  for (const p of [3100, 3350]) await rent(p, 5);
  await rent(2900, 6);
  await insertListing(t.db, { commune: 'Strassen', listing_type: 'SALE', price_eur: 720_000, rooms: 3 });
  await snapshotAt('2026-09-10T08:00:00Z');
  for (const p of [1590, 1950]) await rent(p, 2);
  await snapshotAt('2026-09-16T23:30:00Z');
  const gone = await rent(1400, 2);
  await rent(1990, null);
  await snapshotAt('2026-09-28T09:00:00Z');
  await t.db('listings').where({ id: gone.id }).update({ status: 'inactive', removed_at: now });
  for (const p of [810_000, 655_000]) await insertListing(t.db, { commune: 'Strassen', listing_type: 'SALE', price_eur: p, rooms: 2 });
  await snapshotAt('2026-10-05T12:00:00Z');
  await rent(2050, 7);
  await snapshotAt('2026-10-30T06:00:00Z');
  await rent(2100, 2);
  await snapshotAt('2026-11-02T06:00:00Z');
  // The same day again after a change: the day is replaced, not added.
  await rent(2150, 2);
  await snapshotAt('2026-11-02T18:00:00Z');
  now = new Date('2026-11-20T10:00:00Z');
});

describe('GET /api/v1/market/history', () => {
  it('gives, per month and per ISO week, the figures of the last snapshot of the period, as recomputed when it was taken', async () => {
    for (const interval of ['month', 'week'] as const) {
      for (const [type, rooms] of [['RENT', null], ['RENT', 2], ['RENT', 5], ['SALE', null]] as const) {
        const url = `/api/v1/market/history?commune=strassen&listing_type=${type}&interval=${interval}&from=2026-09-01&to=2026-11-30${rooms === null ? '' : `&rooms=${rooms}`}`;
        const res = await get(url);
        expect(res, url).toHaveStatus(200);
        expect(res.body.meta).toMatchObject({ commune: 'Strassen', listing_type: type, rooms, interval, from: '2026-09-01', to: '2026-11-30' });
        // The expected series from the snapshots taken: the last day of each period.
        const last = new Map<string, string>();
        for (const day of [...taken.keys()].sort()) last.set(periodStart(interval, day), day);
        const expected = [...last].map(([start, day]) => ({
          ...describePeriod(interval, start),
          snapshot_date: day,
          ...taken.get(day)![`${type} ${rooms}`],
        }));
        expect(res.body.data, url).toEqual(expected);
      }
    }
  });

  it('labels periods and keeps only days within from..to', async () => {
    const months = await get('/api/v1/market/history?commune=Strassen&from=2026-09-01&to=2026-11-30');
    expect(months.body.data.map((r: { period: string; snapshot_date: string }) => [r.period, r.snapshot_date])).toEqual([
      ['2026-09', '2026-09-28'],
      ['2026-10', '2026-10-30'],
      ['2026-11', '2026-11-02'],
    ]);
    expect(months.body.data[0]).toMatchObject({ period_start: '2026-09-01', period_end: '2026-09-30' });
    const weeks = await get('/api/v1/market/history?commune=Strassen&interval=week&from=2026-09-01&to=2026-09-20');
    expect(weeks.body.data.map((r: { period: string; period_start: string; period_end: string }) => [r.period, r.period_start, r.period_end])).toEqual([
      ['2026-W37', '2026-09-07', '2026-09-13'],
      ['2026-W38', '2026-09-14', '2026-09-20'],
    ]);
    // to cuts a period short: its figure is the last snapshot up to to.
    const cut = await get('/api/v1/market/history?commune=Strassen&from=2026-09-01&to=2026-09-20');
    expect(cut.body.data.map((r: { snapshot_date: string }) => r.snapshot_date)).toEqual(['2026-09-16']);
  });

  it('defaults to the last 12 months up to today on the clock', async () => {
    const res = await get('/api/v1/market/history?commune=Strassen');
    expect(res).toHaveStatus(200);
    expect(res.body.meta).toMatchObject({ interval: 'month', from: '2025-12-01', to: '2026-11-20', rooms: null, listing_type: 'RENT' });
    expect(res.body.data).toHaveLength(3);
    const weeks = await get('/api/v1/market/history?commune=Strassen&interval=week');
    expect(weeks.body.meta).toMatchObject({ from: '2026-05-25', to: '2026-11-20' });
  });

  it('gives listings 0 and null figures on a snapshot day without such listings', async () => {
    const res = await get('/api/v1/market/history?commune=Vianden&from=2026-09-01&to=2026-09-30');
    expect(res).toHaveStatus(200);
    expect(res.body.data).toEqual([
      expect.objectContaining({ period: '2026-09', snapshot_date: '2026-09-28', listings: 0, median_rent_eur: null, p25_rent_eur: null, low_sample: true }),
    ]);
  });

  // An outside probe (stop 53): "Nowhere" suggested the locality Nocher, which this route then
  // refused ("history is kept per commune").
  it('suggests only communes for a name it does not know; a listing search still suggests localities', async () => {
    for (const [name, suggestions] of [['Nowhere', []], ['Kirchbeg', []], ['Diferdange', ['Differdange', 'Walferdange']], ['Strasen', ['Strassen']]] as const) {
      const res = await get(`/api/v1/market/history?commune=${name}`);
      expect(res, name).toHaveStatus(400);
      expect(res.body.suggestions, name).toEqual(suggestions);
      expect(res.body.errors[0].message, name).toMatch(/^is not a commune of Luxembourg/);
      for (const s of suggestions) expect(await get(`/api/v1/market/history?commune=${s}`), s).toHaveStatus(200);
    }
    const search = await get('/api/v1/listings?commune=Kirchbeg');
    expect(search).toHaveStatus(400);
    expect(search.body.suggestions).toEqual(['Kirchberg']);
  });

  it('refuses bad parameters with 400 problems naming them', async () => {
    for (const [query, param, message] of [
      ['', 'commune', ''],
      ['commune=Kirchberg', 'commune', 'names the locality Kirchberg; history is kept per commune (Luxembourg)'],
      // Every locality of the name, in every commune (an outside probe of stop 50).
      ['commune=Bruch', 'commune', 'names the localities Bruch, Brouch; history is kept per commune (Esch-sur-Alzette, Helperknapp)'],
      ['commune=Atlantis', 'commune', 'is not a commune'],
      ['commune=Strassen&interval=day', 'interval', 'must be one of week, month'],
      ['commune=Strassen&from=2026-02-30', 'from', 'is not a calendar date'],
      ['commune=Strassen&to=20261130', 'to', 'must be a date, YYYY-MM-DD'],
      ['commune=Strassen&from=2026-11-01&to=2026-10-01', 'from', 'must not be after to'],
      ['commune=Strassen&from=2027-01-01', 'from', 'must not be after to'],
      ['commune=Strassen&from=2000-01-01&to=2026-01-01', 'from', 'at most'],
      // to left out: today on the test's clock, checked once the route has its default.
      ['commune=Strassen&from=2010-01-01', 'from', 'must be at most 3700 days before to (2026-'],
      ['commune=Strassen&from=1900-01-01', 'from', 'at most'],
      ['commune=Strassen&from=0001-01-01', 'from', 'must not be before 1900-01-01'],
      ['commune=Strassen&from=0000-01-01&to=0001-01-01', 'from', 'must not be before 1900-01-01'],
      ['commune=Strassen&to=0099-12-31', 'to', 'must not be before 1900-01-01'],
      // Not of the form: said once, as such (not also "not a calendar date", "before 1900").
      ['commune=Strassen&from=%2B2026-11-28', 'from', 'must be a date, YYYY-MM-DD'],
      ['commune=Strassen&rooms=6', 'rooms', 'must be between 0 and 5'],
      ['commune=Strassen&listing_type=lease', 'listing_type', 'must be one of'],
      // zod's own wording ("Invalid input: expected string, received undefined") never shows.
      ['rooms=2', 'commune', 'is required'],
    ]) {
      const res = await get(`/api/v1/market/history?${query}`);
      expect(res, query).toHaveStatus(400);
      expect(res.body.code, query).toBe('invalid_parameter');
      expect(res.body.errors[0], query).toEqual({ param, message: expect.stringContaining(message) });
    }
    expect(await get('/api/v1/market/history?commune=Strassen&period=month')).toHaveStatus(400);
    // The earliest range there is: to on 1900-12-31 gives a default from in 1900 itself.
    const early = await get('/api/v1/market/history?commune=Strassen&to=1900-12-31');
    expect(early).toHaveStatus(200);
    expect(early.body.meta).toMatchObject({ from: '1900-01-01', to: '1900-12-31' });
    expect(early.body.data).toEqual([]);
    // A default from that would fall before 1900-01-01 starts there instead, as a from given
    // before it could not.
    for (const [query, from] of [['to=1900-01-01', '1900-01-01'], ['to=1900-03-05&interval=week', '1900-01-01']]) {
      const floor = await get(`/api/v1/market/history?commune=Strassen&${query}`);
      expect(floor, query).toHaveStatus(200);
      expect(floor.body.meta.from, query).toBe(from);
    }
    const plus = await get('/api/v1/market/history?commune=Strassen&from=%2B2026-11-28');
    expect(plus.body.errors).toEqual([{ param: 'from', message: 'must be a date, YYYY-MM-DD' }]);
  });

  it('computes periods the same way in every year, the first centuries included', () => {
    // Date.UTC reads years 0-99 as 1900-1999; the periods must not.
    expect(periodStart('month', '0099-12-31')).toBe('0099-12-01');
    expect(describePeriod('month', '0099-02-01')).toMatchObject({ period: '0099-02', period_end: '0099-02-28' });
    expect(describePeriod('month', '2024-02-01')).toMatchObject({ period_end: '2024-02-29' });
  });

  it('a new snapshot changes the cached answer', async () => {
    const url = '/api/v1/market/history?commune=Strassen&from=2026-11-01&to=2026-11-30';
    const before = await get(url);
    expect(before.body.data.map((r: { snapshot_date: string }) => r.snapshot_date)).toEqual(['2026-11-02']);
    await rent(2200, 2);
    await snapshotAt('2026-11-20T10:00:00Z');
    const after = await get(url);
    expect(after.body.data.map((r: { snapshot_date: string }) => r.snapshot_date)).toEqual(['2026-11-20']);
    expect(after.body.data[0].listings).toBe((taken.get('2026-11-20')!['RENT null'] as { listings: number }).listings);
  });
});

describe('the snapshot schedule', () => {
  it('is idempotent per day: taken again only when the data changed since', async () => {
    now = new Date('2026-11-21T05:00:00Z');
    expect(await ensureTodaysSnapshot(t.db, now)).toBe('taken');
    const rows = async () => Number((await t.db('market_snapshots').where({ day: '2026-11-21' }).count({ n: '*' }))[0].n);
    const count = await rows();
    expect(count).toBeGreaterThan(0);
    now = new Date('2026-11-21T09:00:00Z');
    expect(await ensureTodaysSnapshot(t.db, now)).toBe('current');
    await rent(2300, 3);
    expect(await ensureTodaysSnapshot(t.db, now)).toBe('taken');
    expect(await rows()).toBe(count + 1); // the new 3-room bucket, nothing duplicated
    const days = await t.db('market_snapshot_days').where({ day: '2026-11-21' });
    expect(days).toHaveLength(1);
    expect(days[0].taken_at.toISOString()).toBe('2026-11-21T09:00:00.000Z');
  });

  // An outside probe: an import that only cleared stale flags changed no count, and today's
  // history lagged live prices until the server's next check.
  it('after an import, today\'s snapshot is taken again when the data changed since, whatever the import counted', async () => {
    now = new Date('2026-11-22T05:00:00Z');
    const back = await rent(2450, 4, { flags: ['stale'] });
    expect(await takeAfterImport(t.db, now)).toBe(true);
    expect(await takeAfterImport(t.db, now)).toBe(false);
    const listings = async () => Number((await t.db('market_snapshots').where({ day: '2026-11-22', commune: 'Strassen', listing_type: 'RENT', rooms: 4 }).first('listings'))?.listings ?? 0);
    const before = await listings();
    await t.db('listings').where({ id: back.id }).update({ flags: [] });
    expect(await takeAfterImport(t.db, now)).toBe(true);
    expect(await listings()).toBe(before + 1);
  });

  it('the server flags stale the listings no import has confirmed for 14 days, at each check (a source that stops delivering runs no import)', async () => {
    const day = new Date('2026-12-20T00:10:00Z');
    const old = await insertListing(t.db, { commune: 'Mersch', last_seen_at: new Date('2026-12-05T00:00:00Z') });
    const fresh = await insertListing(t.db, { commune: 'Mersch', last_seen_at: new Date('2026-12-07T00:00:00Z') });
    const scheduler = new MarketSnapshotScheduler({ db: t.db, logger: silentLogger, clock: () => day, intervalMs: 60_000 });
    await scheduler.check();
    await scheduler.stop();
    const flags = Object.fromEntries((await t.db('listings').whereIn('id', [old.id, fresh.id]).select('id', 'flags')).map((r) => [r.id, r.flags]));
    expect(flags).toEqual({ [old.id]: ['stale'], [fresh.id]: [] });
    // While an import holds the write lock, the check leaves the flag to the import.
    await t.db('listings').where({ id: old.id }).update({ flags: [] });
    const held = await t.db.transaction();
    try {
      await held.raw(`SELECT pg_advisory_xact_lock(7302, hashtext('*'))`);
      await new MarketSnapshotScheduler({ db: t.db, logger: silentLogger, clock: () => day }).check();
      expect((await t.db('listings').where({ id: old.id }).first()).flags).toEqual([]);
    } finally {
      await held.rollback();
    }
    // STALE_CHECK=false (the benchmark's fixed data set): left to imports.
    await new MarketSnapshotScheduler({ db: t.db, logger: silentLogger, clock: () => day, staleCheck: false }).check();
    expect((await t.db('listings').where({ id: old.id }).first()).flags).toEqual([]);
    await t.db('listings').whereIn('id', [old.id, fresh.id]).del();
  });

  it('a stale check in progress is ended by stop(), not waited for (it can take minutes), and what it did rolls back', async () => {
    const day = new Date('2026-12-20T00:10:00Z');
    const old = await insertListing(t.db, { commune: 'Mersch', last_seen_at: new Date('2026-12-05T00:00:00Z') });
    // The scheduler on a pool of its own: its connection is ended under it.
    const db = createDb(t.url, { poolMax: 2 });
    const blocker = await t.db.transaction();
    try {
      // Holds the check in its first UPDATE, as a long check would be held in its work.
      await blocker.raw('LOCK TABLE listings IN SHARE MODE');
      const scheduler = new MarketSnapshotScheduler({ db, logger: silentLogger, clock: () => day, intervalMs: 60_000 });
      const checking = scheduler.check();
      await vi.waitFor(async () => {
        const [{ n }] = (await t.db.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows;
        expect(n).toBeGreaterThan(0);
      }, { timeout: 30_000, interval: 50 });
      // stop() returns while the lock is still held: it did not wait for the check.
      const stopped = await Promise.race([scheduler.stop().then(() => 'stopped'), new Promise((r) => setTimeout(() => r('still waiting'), 20_000))]);
      expect(stopped).toBe('stopped');
      await checking;
    } finally {
      await blocker.rollback();
      await db.destroy();
    }
    expect((await t.db('listings').where({ id: old.id }).first()).flags).toEqual([]);
    await t.db('listings').where({ id: old.id }).del();
  });

  it('the server takes the first snapshot when there is none, on its clock, and every day after', async () => {
    await t.db('market_snapshot_days').del();
    let day = new Date('2026-12-01T00:10:00Z');
    const scheduler = new MarketSnapshotScheduler({ db: t.db, logger: silentLogger, clock: () => day, intervalMs: 20 });
    scheduler.start();
    try {
      await vi.waitFor(async () => expect(await t.db('market_snapshot_days').pluck('day')).toHaveLength(1), { timeout: 30_000, interval: 50 });
      day = new Date('2026-12-02T00:10:00Z');
      await vi.waitFor(async () => expect((await t.db('market_snapshot_days').orderBy('day').select(t.db.raw('day::text AS d'))).map((r) => r.d)).toEqual(['2026-12-01', '2026-12-02']), {
        timeout: 30_000,
        interval: 50,
      });
    } finally {
      await scheduler.stop();
    }
  });
});
