import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { FeedParseError, importFeed, type ImportOptions } from '../../src/ingest/index.js';
import { useTestContext } from '../helpers/context.js';
import { csvFeed, csvRow, fixture, gazetteer, SAMPLES, snapshot } from './helpers.js';

const NOW = new Date('2026-11-22T08:00:00.000Z');
const xml = readFileSync(fixture('immo-nord.openimmo.xml'), 'utf8');
const csv = readFileSync(fixture('moselle-immo.csv'), 'utf8');
const json = readFileSync(fixture('capital-homes.json'), 'utf8');
const BIG = 'x'.repeat(10 * 1024 * 1024);

function garbage(n: number): Buffer {
  const b = Buffer.alloc(n);
  let s = 12345;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    b[i] = s >> 16;
  }
  return b;
}

const CASES: [string, Pick<ImportOptions, 'source' | 'format'>, Buffer | string, RegExp][] = [
  ['truncated XML', { source: 'immo-nord', format: 'openimmo' }, xml.slice(0, Math.floor(xml.length * 0.6)), /not well-formed.*truncated/],
  ['XML that is not OpenImmo', { source: 'immo-nord', format: 'openimmo' }, '<?xml version="1.0"?><rss><channel/></rss>', /not an OpenImmo file/],
  ['a CSV with a wrong header', { source: 'moselle-immo', format: 'csv' }, csv.replace('Référence;Type d\'offre', 'Ref;Offer'), /wrong CSV header: the columns "Référence", "Type d'offre" are missing/],
  ['a comma-separated CSV', { source: 'moselle-immo', format: 'csv' }, csv.replace(/;/g, ','), /wrong CSV header/],
  // An outside probe (stop 42): cut 20 bytes into a row, it withdrew every listing after the cut.
  ['a CSV cut off in a row', { source: 'moselle-immo', format: 'csv' }, csv.slice(0, csv.indexOf('\n', csv.indexOf('\n') + 1) + 20), /the CSV ends in the middle of a row: line 3 has \d+ fields of 16, and no line ending follows/],
  ['a CSV with an unclosed quote', { source: 'moselle-immo', format: 'csv' }, csvFeed([csvRow({ ref: 'Q1' }), 'Q2;Location;"unclosed;1500']), /CSV cannot be read/],
  ['JSON that is an array', { source: 'capital-homes', format: 'json' }, '[{"ref":"CH-1"}]', /JSON is not an object \(found an array\)/],
  ['JSON that is a string', { source: 'capital-homes', format: 'json' }, '"listings"', /JSON is not an object/],
  ['JSON without listings', { source: 'capital-homes', format: 'json' }, '{"mode":"full"}', /no "listings" array/],
  ['truncated JSON', { source: 'capital-homes', format: 'json' }, json.slice(0, 500), /not valid JSON/],
  ['a 10 MB title (json)', { source: 'capital-homes', format: 'json' }, json.replace('"Short sublet Kirchberg, furnished"', JSON.stringify(BIG)), /longer than 1,000,000 characters/],
  ['a 10 MB title (csv)', { source: 'moselle-immo', format: 'csv' }, csv.replace('Chambre en colocation', BIG), /CSV cannot be read/],
  ['a 10 MB title (xml)', { source: 'immo-nord', format: 'openimmo' }, xml.replace('Maison mitoyenne avec jardin', BIG), /longer than 1,000,000 characters/],
  ['binary garbage (xml)', { source: 'immo-nord', format: 'openimmo' }, garbage(4096), /not UTF-8|binary|not well-formed/],
  ['binary garbage (csv)', { source: 'moselle-immo', format: 'csv' }, garbage(4096), /not UTF-8|binary/],
  ['binary garbage (json)', { source: 'capital-homes', format: 'json' }, garbage(4096), /not UTF-8|binary/],
  ['a gzip file', { source: 'capital-homes', format: 'json' }, Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xff, 0xfe]), /not UTF-8|binary/],
  ['an empty file', { source: 'moselle-immo', format: 'csv' }, '', /empty/],
  // An outside probe of stop 59: records of empty objects or elements within the 16 M characters a
  // record may have, each an object the parser builds: three such JSON records took 2 GB.
  [
    'a record of 150,000 keys (json)',
    { source: 'capital-homes', format: 'json' },
    `{"mode":"full","listings":[{"ref":"CH-1",${Array.from({ length: 150_000 }, (_, i) => `"k${i}":{}`).join(',')}}]}`,
    /the record at the first listing \(or the text before it\) holds more than 100,000 values: the file is corrupt or not a feed/,
  ],
  [
    'an immobilie of 150,000 elements (xml)',
    { source: 'immo-nord', format: 'openimmo' },
    `<?xml version="1.0"?><openimmo><anbieter><immobilie><verwaltung_objekt>${'<x/>'.repeat(150_000)}</verwaltung_objekt></immobilie></anbieter></openimmo>`,
    /the record at immobilie 1 \(line 1\) \(or the text before it\) holds more than 100,000 values/,
  ],
  // A file of another shape says so, not that a record is too big.
  [
    'JSON of another shape with 60,000 listings of 2 values',
    { source: 'capital-homes', format: 'json' },
    `{"properties":[${'{"ref":"x"},'.repeat(60_000)}{}]}`,
    /the JSON has no "listings" array within its first 100,000 values; expected \{ "mode": \.\.\., "listings": \[\.\.\.\] \}/,
  ],
];

describe('a file that cannot be read changes nothing', () => {
  const t = useTestContext();
  beforeAll(async () => {
    for (const s of SAMPLES) await importFeed(t.db, { source: s.source, format: s.format, input: { path: fixture(s.file) }, now: NOW, gazetteer: gazetteer() });
  });

  it.each(CASES)('%s: a parse error with a clear message, nothing changed, a failed run recorded', async (_name, opts, content, message) => {
    const before = await snapshot(t.db);
    const input = typeof content === 'string' ? { text: content } : content;
    const err = await importFeed(t.db, { ...opts, input, now: NOW, gazetteer: gazetteer() }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FeedParseError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message.length).toBeLessThan(600);
    expect(await snapshot(t.db)).toEqual(before);
    const run = await t.db('import_runs').where({ source: opts.source }).orderBy('id', 'desc').first();
    expect([run.status, run.error]).toEqual(['failed', (err as Error).message]);
  });

  it('a missing file is a parse error too', async () => {
    await expect(importFeed(t.db, { source: 'moselle-immo', format: 'csv', input: { path: '/nonexistent/feed.csv' }, now: NOW })).rejects.toThrow(/no such file/);
  });

  it('the freshness of the API only counts successful runs', async () => {
    const ok = await t.db('import_runs').where({ status: 'ok' }).whereNotNull('finished_at').count('* as n').first();
    expect(ok?.n).toBe(3);
  });

  it('a whole CSV without a line ending after its last row is read (only a row short of fields there is a cut)', async () => {
    const r = await importFeed(t.db, { source: 'moselle-immo', format: 'csv', input: { text: csv.trimEnd() }, now: NOW, gazetteer: gazetteer() });
    expect(r.status).toBe('ok');
    expect(r.counts.withdrawn).toBe(0);
  });
});
