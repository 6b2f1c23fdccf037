import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareCanonical, type DedupNode } from '../../src/ingest/dedup/rule.js';
import { importFeed } from '../../src/ingest/index.js';
import { createTestDb, type TestDb } from '../helpers/pg.js';
import { csvFeed, csvRow, gazetteer } from './helpers.js';

// A record that states no creation date gets the time of its import as created_at, and that
// time depends on the order in which the sources are imported. The public listing of a group
// must not (docs/feed-operators.md, "The public listing"; an outside probe of stop 55: two
// undated records of one flat made public whichever source was imported first).

const T1 = new Date('2026-11-20T08:00:00.000Z');
const T2 = new Date('2026-11-21T08:00:00.000Z');

// One flat in Strassen as two agencies write it: the same figures, a few metres apart, each
// record complete (area, rooms, place, position, photo, link), so only dates and names differ.
const flat = (source: string, date: string, metres = 0) =>
  csvRow({
    ref: `${source}-1`, price: '1850', area: '80', rooms: '3', place: 'Strassen', lat: (49.6201 + metres / 111_200).toFixed(6), lng: '6.0702',
    photos: `https://img.example/${source}.jpg`, date, link: `https://x.example/${source}/1`,
  });

async function importOne(db: Knex, source: string, row: string, now: Date) {
  const r = await importFeed(db, { source, format: 'csv', input: Buffer.from(csvFeed([row])), now, gazetteer: gazetteer() });
  expect(r.counts.rejected, JSON.stringify(r.rejects)).toBe(0);
}

// The source of the group's public listing, and how many listings stand public.
async function publicSources(db: Knex): Promise<string[]> {
  return (await db('listings').where({ status: 'active' }).whereNull('merged_into').orderBy('source').select('source')).map((r) => r.source);
}

describe('the public listing of a group does not depend on which source was imported first', () => {
  let one: TestDb;
  let two: TestDb;
  beforeAll(async () => {
    [one, two] = await Promise.all([createTestDb(), createTestDb()]);
  });
  afterAll(async () => {
    await Promise.all([one?.drop(), two?.drop()]);
  });
  const cases: [string, Record<string, string>, string][] = [
    // Neither states a date: the next criterion decides (the source first in alphabetical order).
    ['neither record dated', { 'agence-alpha': '', 'agence-zeta': '' }, 'agence-alpha'],
    // A date the source states ranks before a record without one, whichever came first.
    ['one record dated', { 'agence-alpha': '', 'agence-zeta': '01/11/2026 10:00' }, 'agence-zeta'],
    // A date in the future is capped at the import's time: it states nothing either.
    ['a date in the future against none', { 'agence-alpha': '', 'agence-zeta': '01/06/2027 10:00' }, 'agence-alpha'],
    // Two stated dates: the oldest.
    ['both dated', { 'agence-alpha': '05/11/2026 10:00', 'agence-zeta': '01/11/2026 10:00' }, 'agence-zeta'],
  ];
  it.each(cases)('%s', async (_, dates, expected) => {
    for (const t of [one, two]) await t.db.raw(`TRUNCATE listings CASCADE`);
    const [a, z] = ['agence-alpha', 'agence-zeta'];
    await importOne(one.db, a, flat(a, dates[a]), T1);
    await importOne(one.db, z, flat(z, dates[z], 5), T2);
    await importOne(two.db, z, flat(z, dates[z], 5), T1);
    await importOne(two.db, a, flat(a, dates[a]), T2);
    for (const t of [one, two]) {
      expect(await t.db('listings').where({ status: 'merged' }).count('* as n').first()).toEqual({ n: 1 });
      expect(await publicSources(t.db)).toEqual([expected]);
    }
  });

  it('stores which records stated no date; a date stated later is kept as the source\'s', async () => {
    await one.db.raw(`TRUNCATE listings CASCADE`);
    await importOne(one.db, 'agence-alpha', flat('agence-alpha', ''), T1);
    await importOne(one.db, 'agence-zeta', flat('agence-zeta', '01/06/2027 10:00', 5), T1);
    const undated = async () => (await one.db('listings').orderBy('source').select('source', 'undated', 'created_at')).map((r) => [r.source, r.undated, r.created_at.toISOString()]);
    expect(await undated()).toEqual([
      ['agence-alpha', true, T1.toISOString()],
      ['agence-zeta', true, T1.toISOString()],
    ]);
    await importOne(one.db, 'agence-alpha', flat('agence-alpha', '02/11/2026 10:00'), T2);
    // Sent again without it, the stored date stays the source's (10:00 in Luxembourg).
    await importOne(one.db, 'agence-alpha', flat('agence-alpha', ''), T2);
    expect((await undated())[0]).toEqual(['agence-alpha', false, '2026-11-02T09:00:00.000Z']);
  });
});

describe('compareCanonical and the source\'s own date', () => {
  const node = (over: Partial<DedupNode>): DedupNode => ({
    id: 'a', source: 's1', listing_type: 'RENT', commune: 'Strassen', locality: null, postcode: null, postcode_of_place: false, lat: 49.62, lng: 6.07, located: true,
    area_m2: 80, rooms: 3, price_eur: 1850, charges_included: null, charges_eur: null, image_count: 1, has_source_url: true, created_at: new Date('2026-11-10'), stale: false, ...over,
  });
  it('ranks a dated record before an undated one, however early the undated one was seen', () => {
    const dated = node({ id: 'b', source: 's2', created_at: new Date('2026-11-10') });
    const undated = node({ id: 'a', source: 's1', created_at: new Date('2026-01-01'), undated: true });
    expect(compareCanonical(dated, undated)).toBeLessThan(0);
    expect(compareCanonical(undated, dated)).toBeGreaterThan(0);
  });
  it('does not compare the import times of two undated records', () => {
    const early = node({ id: 'b', source: 's2', created_at: new Date('2026-01-01'), undated: true });
    const late = node({ id: 'a', source: 's1', created_at: new Date('2026-11-01'), undated: true });
    expect([early, late].sort(compareCanonical).map((n) => n.source)).toEqual(['s1', 's2']);
  });
});
