import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseJsonFeed, parseOpenImmo } from '../../src/ingest/adapters/index.js';
import { readOpenImmo } from '../../src/ingest/adapters/openimmo.js';
import { importFeed, type ImportCounts, type ImportOptions } from '../../src/ingest/index.js';
import { useTestContext } from '../helpers/context.js';
import { csvFeed, csvRow, fixture, gazetteer, SAMPLES } from './helpers.js';

const DAY = 86_400_000;
const T0 = new Date('2026-11-01T08:00:00.000Z');
const at = (days: number) => new Date(T0.getTime() + days * DAY);

// The invariant docs/feed-operators.md states (The report): every record read ends in exactly
// one of these.
const accounted = (c: ImportCounts) => c.created + c.updated + c.unchanged + c.reactivated + c.deleted + c.skipped + c.rejected;

describe('the report accounts for every record read', () => {
  const t = useTestContext();

  const run = (o: Partial<ImportOptions> & Pick<ImportOptions, 'source' | 'format'>, now: Date) => importFeed(t.db, { now, gazetteer: gazetteer(), ...o });

  it('on the sample feeds, imported twice', async () => {
    for (const day of [0, 1]) {
      for (const s of SAMPLES) {
        const r = await run({ source: s.source, format: s.format, input: { path: fixture(s.file) } }, at(day));
        expect(r.status).toBe('ok');
        expect(accounted(r.counts), `${s.file} day ${day}: ${JSON.stringify(r.counts)}`).toBe(r.counts.read);
      }
    }
  });

  it('on a messy JSON snapshot: sold, let, deleted, unknown statuses, duplicates, records that are not objects', async () => {
    const listing = (ref: string | null, over: Record<string, unknown> = {}) => ({
      ref, offer: 'rent', status: 'available', title: `Flat ${ref}`, price: { amount: 1500, currency: 'EUR', period: 'month' },
      surface_m2: 300 + Number(String(ref).replace(/\D/g, '')) * 3, bedrooms: 1, address: { locality: 'Mamer', country: 'LU' },
      published_at: '2026-10-01T08:00:00Z', ...over,
    });
    const json = (listings: unknown[], now: Date) => run({ source: 'messy', format: 'json', input: { text: JSON.stringify({ mode: 'full', listings }) } }, now);
    const first = await json(['M1', 'M2', 'M3', 'M4', 'M5', 'M6'].map((r) => listing(r)), at(0));
    expect(first.counts).toMatchObject({ read: 6, created: 6 });
    await json(['M1', 'M2', 'M3', 'M4', 'M5'].map((r) => listing(r)), at(1)); // M6 withdrawn by absence

    const r = await json(
      [
        listing('M1'), // unchanged
        listing('M2', { price: { amount: 1600, currency: 'EUR', period: 'month' } }), // updated
        listing('M3', { status: 'sold' }), // deleted: a live listing withdrawn by its record
        listing('M4', { status: 'let' }), // deleted
        listing('M5'), // unchanged
        listing('M6'), // reactivated
        listing('M7'), // created
        listing('M8', { status: 'let' }), // skipped: never seen
        listing('M6', { status: 'reserved' }), // rejected: M6 again
        listing('M9', { status: 'pending_review' }), // rejected: unknown status
        listing(null, { status: 'sold' }), // rejected: no id to withdraw
        listing('M10', { price: { amount: 1500, currency: 'CHF', period: 'month' } }), // rejected: CHF
        42, // rejected: not an object
      ],
      at(2),
    );
    expect(r.status).toBe('ok');
    expect(r.counts).toMatchObject({ read: 13, unchanged: 2, updated: 1, deleted: 2, reactivated: 1, created: 1, skipped: 1, rejected: 5, withdrawn: 2 });
    expect(accounted(r.counts)).toBe(r.counts.read);

    // A let record of a listing already withdrawn is skipped too.
    const again = await json(['M1', 'M2', 'M5', 'M6', 'M7'].map((x) => listing(x)).concat([listing('M3', { status: 'let' })]), at(3));
    expect(again.counts).toMatchObject({ read: 6, skipped: 1, deleted: 0, withdrawn: 0 });
    expect(accounted(again.counts)).toBe(again.counts.read);
  });

  it('on a CSV with short rows, duplicates and bad values, and on an OpenImmo delta that deletes', async () => {
    const rows = [
      csvRow({ ref: 'C1', place: 'Mamer', area: '50' }),
      csvRow({ ref: 'C2', place: 'Mamer', area: '60' }),
      csvRow({ ref: 'C1', place: 'Mamer', area: '70' }),
      'C3;Location;Appartement',
      csvRow({ ref: 'C4', place: 'Atlantis' }),
      csvRow({ ref: '', place: 'Mamer' }),
    ];
    const c = await run({ source: 'messy-csv', format: 'csv', input: { text: csvFeed(rows) } }, at(0));
    expect(c.counts).toMatchObject({ read: 6, created: 2, rejected: 4 });
    expect(accounted(c.counts)).toBe(c.counts.read);

    const xml = readFileSync(fixture('immo-nord.openimmo.xml'), 'utf8');
    const full = await run({ source: 'messy-xml', format: 'openimmo', input: { text: xml } }, at(0));
    expect(accounted(full.counts)).toBe(full.counts.read);
    const delta = xml
      .replace('umfang="VOLL"', 'umfang="TEIL"')
      .replace('<aktion aktionart="CHANGE"/>', '<aktion aktionart="DELETE"/>')
      .replace('<objektnr_extern>IN-2026-0107</objektnr_extern>', '<objektnr_extern>IN-UNKNOWN</objektnr_extern><aktion aktionart="DELETE"/>');
    const d = await run({ source: 'messy-xml', format: 'openimmo', input: { text: delta } }, at(1));
    expect(d.mode).toBe('delta');
    expect(d.counts).toMatchObject({ read: 3, deleted: 1, skipped: 1, unchanged: 1, withdrawn: 1 });
    expect(accounted(d.counts)).toBe(d.counts.read);
  });
});

// Where a broken file broke, in words a person can act on: never the parser's internals.
describe('a truncated or malformed file is reported with its position', () => {
  const xml = readFileSync(fixture('immo-nord.openimmo.xml'), 'utf8');
  const json = readFileSync(fixture('capital-homes.json'), 'utf8');
  const INTERNALS = /state|STRING_DEFAULT|Invalid '\[|position "|\[object|undefined/;
  const endOf = (text: string) => {
    const lines = text.split('\n');
    return `line ${lines.length}, column ${lines.at(-1)!.length + 1}`;
  };
  const message = (p: Promise<unknown>) => p.then(() => 'no error', (e: Error) => e.message);

  it.each([0.3, 0.6, 0.95, 0.999])('XML cut at %d of its length: where it ends and which record it was in', async (f) => {
    const cut = xml.slice(0, Math.floor(xml.length * f));
    const m = await message(parseOpenImmo(cut));
    expect(m).toContain(`ends unexpectedly at ${endOf(cut)}`);
    expect(m).toMatch(/not well-formed.*(in|after) immobilie \d \(line \d+\).*truncated/);
    expect(m).not.toMatch(/line 1, column 1\b/);
    expect(m).not.toMatch(INTERNALS);
  });

  it('XML with a missing closing tag: the line and column of the mismatch', async () => {
    const broken = xml.replace('</preise>', '');
    const line = broken.slice(0, broken.indexOf('</immobilie>')).split('\n').length;
    const m = await message(parseOpenImmo(broken));
    expect(m).toMatch(new RegExp(`not well-formed at line ${line}, column \\d+: unexpected close tag \\(in immobilie 1 \\(line 7\\)\\)`));
    expect(m).not.toMatch(INTERNALS);
  });

  // An outside probe: "Maison & jardin" was reported at the file's end as a possible truncation.
  it('XML with a bare "&" in a title: the line of the "&", in a file read whole or in chunks of any size', async () => {
    const lines = xml.split('\n');
    const at = lines.findIndex((l) => l.includes('<objekttitel>'));
    lines[at] = lines[at].replace('<objekttitel>', '<objekttitel>Maison & jardin, ');
    const broken = lines.join('\n');
    const hint = `a bare "&" at line ${at + 1}, which XML does not allow (write &amp;), is the likely cause`;
    for (const size of [broken.length, 7, 64, 1000]) {
      const chunks = Array.from({ length: Math.ceil(broken.length / size) }, (_, k) => broken.slice(k * size, (k + 1) * size));
      const m = await message((async () => {
        for await (const _ of readOpenImmo((async function* () { yield* chunks; })())) void _;
      })());
      expect(m, String(size)).toContain(hint);
      expect(m, String(size)).not.toContain('truncated');
    }
    // A "&" in CDATA or a comment is allowed: not named, in a file cut short nor before a bare one
    // (the regression probe: the hint named a legal "&" in CDATA).
    const legal = xml.replace('<objekttitel>', '<!-- R&D --><objekttitel><![CDATA[Maison & jardin]]>');
    for (const size of [legal.length, 5, 64]) {
      const cut = legal.slice(0, Math.floor(legal.length * 0.6));
      const chunksOf = (t: string) => Array.from({ length: Math.ceil(t.length / size) }, (_, k) => t.slice(k * size, (k + 1) * size));
      const read = (t: string) => message((async () => {
        for await (const _ of readOpenImmo((async function* () { yield* chunksOf(t); })())) void _;
      })());
      expect(await read(legal), String(size)).toBe('no error');
      expect(await read(cut), String(size)).toMatch(/the file may be truncated$/);
      const both = legal.split('\n');
      const later = both.findIndex((l, k) => k > at && l.includes('<objekttitel>'));
      both[later] = both[later].replace('<objekttitel>', '<objekttitel>Haus & Hof ');
      expect(await read(both.join('\n')), String(size)).toContain(`a bare "&" at line ${later + 1},`);
    }
    // Entities and character references are no bare "&"; a file cut short still says so.
    const fine = xml.replace('<objekttitel>', '<objekttitel>Maison &amp; jardin &#233; &#xE9; ');
    expect(await message(parseOpenImmo(fine))).toBe('no error');
    expect(await message(parseOpenImmo(fine.slice(0, Math.floor(fine.length * 0.6))))).toMatch(/truncated$/);
  });

  it.each([0.1, 0.5, 0.9, 0.999])('JSON cut at %d of its length: where it ends and after which listing', async (f) => {
    const cut = json.slice(0, Math.floor(json.length * f));
    const m = await message(parseJsonFeed(cut));
    expect(m).toContain(`not valid JSON: it ends unexpectedly at ${endOf(cut)}`);
    expect(m).toMatch(/\((after listings\[\d\]|before the first listing)\); the file may be truncated/);
    expect(m).not.toMatch(INTERNALS);
  });

  it('JSON with a stray character: its line and column, and the listing before it', async () => {
    const i = json.indexOf('"offer"', json.indexOf('CH-1077'));
    const broken = `${json.slice(0, i)}x${json.slice(i)}`;
    const before = broken.slice(0, i).split('\n');
    const m = await message(parseJsonFeed(broken));
    expect(m).toBe(`the file is not valid JSON: unexpected "x" at line ${before.length}, column ${before.at(-1)!.length + 1} (after listings[0])`);
  });

  it('JSON with text after the document, and a number cut short', async () => {
    expect(await message(parseJsonFeed(`${json.trimEnd()}\n{}`))).toMatch(/unexpected data after the end of the JSON document at line \d+, column 1 \(after listings\[2\]\)/);
    const m = await message(parseJsonFeed('{"mode":"full","listings":[{"ref":"A","price":1e}]}'));
    expect(m).toMatch(/^the file is not valid JSON: unexpected "}" at line 1, column 49 \(before the first listing\)$/);
  });
});
