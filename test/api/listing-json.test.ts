import { beforeAll, describe, expect, it } from 'vitest';
import { presentListing, writeListing } from '../../src/http/present.js';
import { findActiveListingsByIds, findActiveListingsJson } from '../../src/repositories/listings.js';
import { createListingRows, listingJsonOf } from '../../src/services/listing-rows.js';
import { useTestContext } from '../helpers/context.js';
import { insertListing, type ListingInput } from '../helpers/factory.js';

// Pages and single listings are written from each listing's fields as JSON text, most of them
// written by PostgreSQL (findActiveListingsJson), the rest here (listingJsonOf). Both must
// give, byte for byte, what JSON.stringify gives for presentListing's object: the same answer
// whichever path made it, and the same ETag.

const t = useTestContext();
const opts = [
  { baseUrl: 'https://api.example', showFlags: true },
  { baseUrl: 'http://127.0.0.1:3000', showFlags: false },
];

// Values where PostgreSQL and JavaScript write numbers, strings or times differently, or
// might: each must come out as presentListing's. (A non-finite area or coordinate cannot be
// stored: the dedup columns generated from them are integers.)
const edges: Array<[string, ListingInput]> = [
  ['quotes, backslashes and control characters', { title: 'Le "Loft" \\ C:\\tmp \u0001\u001f\b\f\n\r\t end', locality: 'Gare\u007f' }],
  ['non-ASCII, emoji and the line separators', { title: 'Wunnéng – 2 Zëmmer 🏠 \u2028\u2029 ß', commune: 'Esch-sur-Alzette' }],
  ['a slash and HTML', { title: '</script><b>1/2</b> & more', source_url: 'https://a.example/x?y=1&z=<2>' }],
  ['no area, no coordinates, no rooms', { area_m2: null, lat: null, lng: null, rooms: null, locality: null }],
  ['an area of 0', { area_m2: 0 }],
  ['an area of -0', { area_m2: -0 }],
  ['an area that needs an exponent in PostgreSQL', { area_m2: 0.00001 }],
  ['a tiny area that needs one in both', { area_m2: 1e-7 }],
  ['a huge area', { area_m2: 1e15 }],
  ['an area just below the range', { area_m2: 0.0000999 }],
  ['an area at the edge of the range', { area_m2: 0.0001 }],
  ['an area just below 1e15', { area_m2: 999999999999999.9 }],
  ['fractional values with 17 digits', { area_m2: 0.1 + 0.2, lat: 49.611600000000003, lng: 6.131900000000001 }],
  ['negative coordinates', { lat: -33.8688197, lng: -151.2092955 }],
  ['images with characters to escape', { images: ['https://img.example/a "b".jpg', 'https://img.example/ü/ß.jpg', 'https://img.example/c\\d.jpg'] }],
  ['many flags', { flags: ['possible_duplicate', 'price_outlier', 'stale'] }],
  ['one flag', { flags: ['stale'] }],
  ['a time in year 999', { created_at: new Date('0999-12-31T23:59:59.999Z'), updated_at: new Date('1000-01-01T00:00:00.000Z') }],
  ['a time in year 10000', { updated_at: new Date('+010000-01-01T00:00:00.001Z') }],
  ['times at the edge of a second', { created_at: new Date('2026-11-26T23:59:59.999Z'), updated_at: new Date('2026-11-27T00:00:00.000Z') }],
  ['a time with 1 ms', { created_at: new Date('2026-01-01T00:00:00.001Z') }],
  ['a large price, many rooms, students', { price_eur: 99_999_999, rooms: 40, accepts_students: true }],
];

let ids: Map<string, string>;
let randomIds: string[];

beforeAll(async () => {
  ids = new Map();
  for (const [name, input] of edges) ids.set(name, (await insertListing(t.db, input)).id);
  // pg sends -0 as "0": written by SQL.
  await t.db.raw(`UPDATE listings SET area_m2 = '-0'::float8 WHERE id = ?`, [ids.get('an area of -0')!]);
  // Random doubles with every digit used, as geocoders and unit conversions give them.
  randomIds = [];
  let seed = 42;
  const rnd = () => {
    // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  for (let k = 0; k < 300; k++) {
    const input: ListingInput = {
      area_m2: k % 3 === 0 ? Math.round(rnd() * 3000) / 10 : rnd() * 400,
      lat: 49.4 + rnd() * 0.7,
      lng: 5.7 + rnd() * 0.8,
      price_eur: Math.floor(rnd() * 3_000_000),
      created_at: new Date(Date.UTC(2020, 0, 1) + Math.floor(rnd() * 7 * 365 * 86_400_000)),
    };
    randomIds.push((await insertListing(t.db, input)).id);
  }
});

// JSON.stringify(presentListing(row)) for the listing, from its columns.
async function expected(id: string, o: (typeof opts)[number], distanceKm?: number): Promise<string> {
  const [row] = await findActiveListingsByIds(t.db, [id], true);
  return JSON.stringify(presentListing(row, o, distanceKm));
}

describe('a listing written as JSON text', () => {
  it.each(edges.map(([name]) => name))('%s: the same bytes as presentListing, whichever path wrote it', async (name) => {
    const id = ids.get(name)!;
    const [row] = await findActiveListingsByIds(t.db, [id], true);
    const [listing] = await createListingRows().find(t.db, [id], true);
    for (const o of opts) {
      for (const distance of [undefined, 1.23456, 0]) {
        const want = await expected(id, o, distance);
        expect(writeListing(listing, o, distance)).toBe(want);
        expect(writeListing(listingJsonOf(row), o, distance)).toBe(want);
      }
    }
  });

  it('lets PostgreSQL write the ordinary rows and leaves the ones it writes otherwise to JavaScript', async () => {
    const json = new Map((await findActiveListingsJson(t.db, [...ids.values()])).map((r) => [r.id, r]));
    const writtenHere = edges.filter(([name]) => json.get(ids.get(name)!)!.fields === null).map(([name]) => name);
    expect(writtenHere.sort()).toEqual(
      [
        'an area of -0',
        'an area that needs an exponent in PostgreSQL',
        'a tiny area that needs one in both',
        'a huge area',
        'an area just below the range',
        'a time in year 999',
        'a time in year 10000',
      ].sort(),
    );
    expect(json.get(ids.get('many flags')!)!.flags_json).toBe('["possible_duplicate","price_outlier","stale"]');
    expect(json.get(ids.get('an area of 0')!)!.flags_json).toBeNull();
  });

  it('writes 300 listings with random doubles and times as presentListing does', async () => {
    const rows = await findActiveListingsJson(t.db, randomIds);
    expect(rows).toHaveLength(300);
    expect(rows.every((r) => r.fields !== null)).toBe(true);
    const columns = new Map((await findActiveListingsByIds(t.db, randomIds, true)).map((r) => [r.id, r]));
    for (const r of rows) {
      const want = JSON.stringify(presentListing(columns.get(r.id)!, opts[0]));
      expect(writeListing({ id: r.id, flags: r.flags_json, fields: r.fields! }, opts[0])).toBe(want);
    }
  });

  // The JSON is written when the row is (a trigger, migration 20261202000100): every update of a
  // public column, by any writer, writes it again; an update of another column leaves it as is.
  it('writes the stored JSON again at every update of a public field, whoever updates it', async () => {
    const { id } = await insertListing(t.db, { title: 'Before', images: ['https://img.example/1.jpg'] });
    const updates: Array<[string, Array<string | number | Date>]> = [
      [`title = ?`, ['After "quoted" \u2028']],
      [`price_eur = ?`, [123_456]],
      [`area_m2 = ?, rooms = ?`, [77.25, 3]],
      [`area_m2 = NULL, rooms = NULL`, []],
      [`lat = ?, lng = ?`, [49.5, 6.25]],
      [`commune = ?, locality = ?`, ['Esch-sur-Alzette', 'Belval']],
      [`locality = NULL`, []],
      [`listing_type = 'SALE', accepts_students = true`, []],
      [`images = ?::jsonb`, [JSON.stringify(['https://img.example/2.jpg', 'https://img.example/3 "x".jpg'])]],
      [`images = '[]'::jsonb`, []],
      [`source_url = ?`, ['https://b.example/listing?id=1&x=<y>']],
      [`external_id = ?`, ['EXT-2']],
      [`created_at = ?, updated_at = ?`, [new Date('2026-01-02T03:04:05.006Z'), new Date('2026-11-30T23:59:59.999Z')]],
      [`area_m2 = ?`, [0.00001]], // written from the columns: PostgreSQL would write 1e-05
      [`area_m2 = ?`, [12.5]],
    ];
    for (const [set, bindings] of updates) {
      await t.db.raw(`UPDATE listings SET ${set} WHERE id = ?`, [...bindings, id]);
      const [json] = await findActiveListingsJson(t.db, [id]);
      const [listing] = await createListingRows().find(t.db, [id], true);
      const want = await expected(id, opts[0]);
      expect(writeListing(listing, opts[0]), set).toBe(want);
      expect(json.fields === null, set).toBe(set === 'area_m2 = ?' && bindings[0] === 0.00001);
    }
    // Another column: the stored JSON is not written again (nor needs to be).
    const before = (await t.db('listings').where({ id }).first('public_json')).public_json as string;
    await t.db.raw(`UPDATE listings SET content_hash = 'x', status = 'active' WHERE id = ?`, [id]);
    expect((await t.db('listings').where({ id }).first('public_json')).public_json).toBe(before);
    expect(JSON.parse(before)).toMatchObject({ title: 'After "quoted" \u2028', price_eur: 123_456, area_m2: 12.5, listing_type: 'SALE', external_id: 'EXT-2' });
  });

  it('leaves out flagged listings for the tiers that do not see them', async () => {
    const asked = [ids.get('one flag')!, ids.get('an area of 0')!, ids.get('a huge area')!, ids.get('many flags')!];
    const rows = createListingRows();
    const [all, unflagged] = await Promise.all([rows.find(t.db, asked, true), rows.find(t.db, asked, false)]);
    expect(all.map((l) => l.id)).toEqual(asked);
    expect(unflagged.map((l) => l.id)).toEqual([asked[1], asked[2]]);
  });
});
