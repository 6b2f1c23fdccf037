import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationConfig } from '../../src/db/knex.js';
import { compareCanonical, type DedupNode } from '../../src/ingest/dedup/rule.js';
import { importFeed, refreshStaleUnlessImporting } from '../../src/ingest/index.js';
import { createTestDb, type TestDb } from '../helpers/pg.js';
import { csvFeed, csvRow, gazetteer } from './helpers.js';

// A record that states no creation date gets the time of its import as created_at, and that
// time depends on the order in which the sources are imported. The public listing of a group
// must not (docs/feed-operators.md, "The public listing"; an outside probe of stop 55: two
// undated records of one flat made public whichever source was imported first; its re-check: a
// record dated a minute ahead was ranked by its capped date, so by when it was imported).

const T1 = new Date('2026-11-20T08:00:00.000Z');
const T2 = new Date('2026-11-21T08:00:00.000Z');

// One flat in Strassen as two agencies write it: the same figures, a few metres apart, each
// record complete (area, rooms, place, position, photo, link), so only dates and names differ.
const flat = (source: string, date: string, metres = 0, n = 1) => {
  const [place, lat, lng] = n === 1 ? ['Strassen', 49.6201, '6.0702'] : ['Hesperange', 49.579, '6.1640'];
  return csvRow({
    ref: `${source}-${n}`, price: '1850', area: '80', rooms: '3', place, lat: (lat + metres / 111_200).toFixed(6), lng,
    photos: `https://img.example/${source}.jpg`, date, link: `https://x.example/${source}/${n}`,
  });
};

async function importOne(db: Knex, source: string, row: string | string[], now: Date) {
  const r = await importFeed(db, { source, format: 'csv', input: Buffer.from(csvFeed([row].flat())), now, gazetteer: gazetteer() });
  expect(r.counts.rejected, JSON.stringify(r.rejects)).toBe(0);
}

// The sources of the public listings (their refs with `refs`).
async function publicSources(db: Knex, refs = false): Promise<string[]> {
  const rows = await db('listings').where({ status: 'active' }).whereNull('merged_into').select('source', 'external_id');
  return rows.map((r) => (refs ? r.external_id : r.source)).sort();
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
    // A date in the future is stored capped at the import's time, but ranks as stated.
    ['a date in the future against none', { 'agence-alpha': '', 'agence-zeta': '01/06/2027 10:00' }, 'agence-zeta'],
    ['a date in the future against one before it', { 'agence-alpha': '01/06/2027 09:00', 'agence-zeta': '01/06/2027 10:00' }, 'agence-alpha'],
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

  // The re-check's case: a record dated a minute after one import and before another.
  it('ranks a record dated just after its import as it ranks it once that date has passed', async () => {
    for (const t of [one, two]) await t.db.raw(`TRUNCATE listings CASCADE`);
    const zeta = flat('agence-zeta', '20/11/2026 09:01', 5); // T1 + 60 s (Luxembourg time)
    await importOne(one.db, 'agence-zeta', zeta, T1);
    await importOne(one.db, 'agence-alpha', flat('agence-alpha', ''), T1);
    await importOne(two.db, 'agence-alpha', flat('agence-alpha', ''), T2);
    await importOne(two.db, 'agence-zeta', zeta, T2);
    for (const t of [one, two]) expect(await publicSources(t.db)).toEqual(['agence-zeta']);
  });

  it('stores the date a record states, uncapped, or none; a date stated later is kept as the source\'s', async () => {
    await one.db.raw(`TRUNCATE listings CASCADE`);
    await importOne(one.db, 'agence-alpha', flat('agence-alpha', ''), T1);
    await importOne(one.db, 'agence-zeta', flat('agence-zeta', '01/06/2027 10:00', 5), T1);
    const stated = async () =>
      (await one.db('listings').orderBy('source').select('source', 'stated_created_at', 'created_at')).map((r) => [r.source, r.stated_created_at?.toISOString() ?? null, r.created_at.toISOString()]);
    expect(await stated()).toEqual([
      ['agence-alpha', null, T1.toISOString()],
      ['agence-zeta', '2027-06-01T08:00:00.000Z', T1.toISOString()], // 10:00 in Luxembourg, summer time
    ]);
    await importOne(one.db, 'agence-alpha', flat('agence-alpha', '02/11/2026 10:00'), T2);
    // Sent again without it, the stored date stays the source's (10:00 in Luxembourg).
    await importOne(one.db, 'agence-alpha', flat('agence-alpha', ''), T2);
    expect((await stated())[0]).toEqual(['agence-alpha', '2026-11-02T09:00:00.000Z', '2026-11-02T09:00:00.000Z']);
  });
});

describe('compareCanonical and the source\'s own date', () => {
  const node = (over: Partial<DedupNode>): DedupNode => ({
    id: 'a', source: 's1', listing_type: 'RENT', commune: 'Strassen', locality: null, postcode: null, postcode_of_place: false, lat: 49.62, lng: 6.07, located: true,
    area_m2: 80, rooms: 3, price_eur: 1850, charges_included: null, charges_eur: null, image_count: 1, has_source_url: true, created_at: new Date('2026-11-10'), stale: false, ...over,
  });
  it('ranks a dated record before an undated one, however early the undated one was seen', () => {
    const dated = node({ id: 'b', source: 's2', created_at: new Date('2026-11-10') });
    const undated = node({ id: 'a', source: 's1', created_at: new Date('2026-01-01'), stated_at: null });
    expect(compareCanonical(dated, undated)).toBeLessThan(0);
    expect(compareCanonical(undated, dated)).toBeGreaterThan(0);
  });
  it('does not compare the import times of two undated records', () => {
    const early = node({ id: 'b', source: 's2', created_at: new Date('2026-01-01'), stated_at: null });
    const late = node({ id: 'a', source: 's1', created_at: new Date('2026-11-01'), stated_at: null });
    expect([early, late].sort(compareCanonical).map((n) => n.source)).toEqual(['s1', 's2']);
  });
  it('ranks by the stated date, not created_at (capped at the import for a date in the future)', () => {
    const capped = node({ id: 'b', source: 's2', created_at: new Date('2026-11-20'), stated_at: new Date('2026-11-21') });
    const older = node({ id: 'a', source: 's1', created_at: new Date('2026-11-20T12:00:00Z'), stated_at: new Date('2026-11-20T12:00:00Z') });
    expect([capped, older].sort(compareCanonical).map((n) => n.source)).toEqual(['s1', 's2']);
  });
});

describe('the migration to stated dates', () => {
  const NAME = '20261130000300_listing_stated_created_at.ts';

  it('reads the dates stored without a new data version and decides no group again until a member changes', async () => {
    const scratch = await createTestDb();
    try {
      const db = scratch.db;
      // Strassen: two undated records. Hesperange: one undated, one dated in the future (stored
      // capped at its import). Mamer: one dated record alone.
      await importOne(db, 'agence-zeta', [flat('agence-zeta', '', 5), flat('agence-zeta', '01/06/2027 10:00', 5, 2)], T1);
      const alpha = [flat('agence-alpha', ''), flat('agence-alpha', '', 0, 2)];
      await importOne(db, 'agence-alpha', alpha, T2);
      await importOne(db, 'agence-beta', csvRow({ ref: 'B-9', price: '990', area: '31', place: 'Mamer', date: '01/11/2026 10:00' }), T2);
      expect(await publicSources(db, true)).toEqual(['B-9', 'agence-alpha-1', 'agence-zeta-2']);
      await db.migrate.down({ ...migrationConfig, name: NAME });
      // The groups as earlier versions left them, by created_at, so by the order of the imports:
      // zeta's two records public (its capped date, T1, before alpha's T2).
      const id = async (ref: string) => (await db('listings').where({ external_id: ref }).first()).id as string;
      const [a1, z1] = await Promise.all(['agence-alpha-1', 'agence-zeta-1'].map(id));
      await db('listings').where({ id: z1 }).update({ status: 'active', merged_into: null });
      await db('listings').where({ id: a1 }).update({ status: 'merged', merged_into: z1 });
      const version = async () => Number((await db('data_state').first()).version);
      const before = await version();

      await db.migrate.up({ ...migrationConfig, name: NAME });

      expect(await version()).toBe(before);
      const rows = await db('listings').orderBy('external_id').select('external_id', 'stated_created_at');
      expect(rows.map((r) => [r.external_id, r.stated_created_at?.toISOString() ?? null])).toEqual([
        ['B-9', '2026-11-01T09:00:00.000Z'],
        ['agence-alpha-1', null],
        ['agence-alpha-2', null],
        ['agence-zeta-1', null],
        // Dated in the future: its hash holds a date; the capped one is the best known.
        ['agence-zeta-2', T1.toISOString()],
      ]);
      // Nothing moves by the upgrade: not at the server's stale check, not by an unchanged import.
      await refreshStaleUnlessImporting(db, T2);
      await importOne(db, 'agence-alpha', alpha, T2);
      expect(await publicSources(db, true)).toEqual(['B-9', 'agence-zeta-1', 'agence-zeta-2']);
      expect(await version()).toBeGreaterThanOrEqual(before);
      // A member that changes has its group decided by the rule: the undated pair by the source's
      // name; the dated record stays public in Hesperange.
      await importOne(db, 'agence-alpha', [flat('agence-alpha', '').replace('1850', '1860'), alpha[1]], T2);
      expect(await publicSources(db, true)).toEqual(['B-9', 'agence-alpha-1', 'agence-zeta-2']);
    } finally {
      await scratch.drop();
    }
  });

  // OpenImmo's stand_vom is not in the content hash and is read at first sighting only: given its
  // first sighting as a date, an undated record kept it for good, and its group left the rule's
  // answer at a member's change (the fifth re-check of stop 55).
  it('takes an OpenImmo source\'s record first seen with its created_at as undated', async () => {
    const scratch = await createTestDb();
    try {
      const db = scratch.db;
      await importOne(db, 'agence-zeta', flat('agence-zeta', '', 5), T1);
      await importOne(db, 'agence-alpha', flat('agence-alpha', ''), T2);
      await db.migrate.down({ ...migrationConfig, name: NAME });
      const id = async (ref: string) => (await db('listings').where({ external_id: ref }).first()).id as string;
      const [a1, z1] = await Promise.all(['agence-alpha-1', 'agence-zeta-1'].map(id));
      await db('listings').where({ id: z1 }).update({ status: 'active', merged_into: null });
      await db('listings').where({ id: a1 }).update({ status: 'merged', merged_into: z1 });
      await db('sources').where({ name: 'agence-zeta' }).update({ format: 'openimmo' });

      await db.migrate.up({ ...migrationConfig, name: NAME });

      const rows = await db('listings').orderBy('external_id').select('external_id', 'stated_created_at');
      expect(rows.map((r) => [r.external_id, r.stated_created_at?.toISOString() ?? null])).toEqual([
        ['agence-alpha-1', null],
        ['agence-zeta-1', null],
      ]);
      // Decided again when alpha's record changes: two undated records, by the source's name.
      await importOne(db, 'agence-alpha', flat('agence-alpha', '').replace('1850', '1860'), T2);
      expect(await publicSources(db, true)).toEqual(['agence-alpha-1']);
    } finally {
      await scratch.drop();
    }
  });
});
