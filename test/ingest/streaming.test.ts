import { describe, expect, it } from 'vitest';
import { FeedParseError, FeedTooLargeError, importFeed, type ImportOptions, type Reject } from '../../src/ingest/index.js';
import { useTestContext } from '../helpers/context.js';
import { CSV_HEADER_LINE, csvFeed, csvRow, gazetteer, snapshot } from './helpers.js';

const NOW = new Date('2026-11-22T08:00:00.000Z');
const PLACES = ['Strassen', 'Bertrange', 'Mamer', 'Hesperange', 'Walferdange', 'Sandweiler', 'Contern', 'Steinsel'];
const row = (i: number, over: Parameters<typeof csvRow>[0] = {}) =>
  csvRow({ ref: `ST-${i}`, place: PLACES[i % PLACES.length], price: String(1000 + (i % 900)), area: String(20 + (i % 150)), bedrooms: '1', ...over });

// Resolves when check() holds, polling; rejects after timeoutMs.
async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the importer reads its input as a stream, within a size limit', () => {
  const t = useTestContext();

  const base = (over: Partial<ImportOptions>): ImportOptions => ({ source: 'streamed', format: 'csv', now: NOW, gazetteer: gazetteer(), ...over });

  it('processes records while the delivery is still arriving', async () => {
    const rejects: Reject[] = [];
    let ended = false;
    // The first rows include a rejected one; the rest of the delivery only comes once the
    // importer has read, normalized and judged those rows. An importer that waited for the
    // whole input would never see the end of it.
    async function* delivery() {
      yield `${CSV_HEADER_LINE}\n`;
      for (let i = 0; i < 50; i++) yield `${row(i, i === 7 ? { price: '4 900 CHF' } : {})}\n`;
      // Enough further text to push the first rows through any buffer on the way.
      for (let i = 50; i < 3000; i++) yield `${row(i)}\n`;
      await until(() => rejects.length > 0, 'the importer to reject line 9 before the delivery ends');
      for (let i = 3000; i < 3100; i++) yield `${row(i)}\n`;
      ended = true;
    }
    const r = await importFeed(t.db, base({ input: { stream: delivery() }, onReject: (x) => rejects.push(x) }));
    expect(ended).toBe(true);
    expect(r.status).toBe('ok');
    expect(r.counts).toMatchObject({ read: 3100, created: 3099, rejected: 1 });
    expect(rejects).toEqual([{ external_id: 'ST-7', position: 'line 9', reason: 'price in CHF: only EUR is accepted' }]);
    expect(await t.db('listings').where({ source: 'streamed', status: 'active' }).count('* as n').first()).toEqual({ n: 3099 });
  });

  it('finds an external id seen again far apart in the file (records are staged a batch at a time)', async () => {
    // Batches of 100 here (2,000 by default): the repeats come three and one batches later.
    const rows = Array.from({ length: 450 }, (_, i) => row(i));
    rows.push(row(3, { price: '1999' }), row(420, { price: '1999' }));
    const r = await importFeed(t.db, base({ source: 'dups', input: { text: csvFeed(rows) }, stageBatch: 100 }));
    expect(r.counts).toMatchObject({ read: 452, created: 450, rejected: 2 });
    expect(r.rejects).toEqual([
      { external_id: 'ST-3', position: 'line 452', reason: 'external id appears again (imported at line 5); only the first is imported' },
      { external_id: 'ST-420', position: 'line 453', reason: 'external id appears again (imported at line 422); only the first is imported' },
    ]);
    expect((await t.db('listings').where({ source: 'dups', external_id: 'ST-3' }).first()).price_eur).toBe(1003);
  });

  it('refuses a file over maxBytes before reading it: nothing changed, a failed run recorded', async () => {
    const before = await snapshot(t.db);
    const text = csvFeed(Array.from({ length: 40 }, (_, i) => row(i)));
    const err = await importFeed(t.db, base({ input: { text }, maxBytes: 1000 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FeedTooLargeError);
    expect(err).toBeInstanceOf(FeedParseError);
    expect((err as Error).message).toMatch(/more than the limit of 1,000 bytes \(--max-bytes\)/);
    expect(await snapshot(t.db)).toEqual(before);
    const run = await t.db('import_runs').orderBy('id', 'desc').first();
    expect([run.status, run.error]).toEqual(['failed', (err as Error).message]);
  });

  it('stops reading an endless delivery at maxBytes, and closes it', async () => {
    const before = await snapshot(t.db);
    let produced = 0;
    let closed = false;
    async function* endless() {
      try {
        yield `${CSV_HEADER_LINE}\n`;
        for (let i = 0; ; i++) {
          const line = `${row(i)}\n`;
          produced += line.length;
          yield line;
        }
      } finally {
        closed = true;
      }
    }
    const err = await importFeed(t.db, base({ input: { stream: endless() }, maxBytes: 2 * 1024 * 1024 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FeedTooLargeError);
    expect((err as Error).message).toMatch(/larger than the limit of 2 MB/);
    expect(produced).toBeLessThan(2 * 1024 * 1024 + 1000);
    expect(closed).toBe(true);
    expect(await snapshot(t.db)).toEqual(before);
  });

  it('refuses an invalid maxBytes or stageBatch as a usage error', async () => {
    await expect(importFeed(t.db, base({ input: { text: csvFeed([row(1)]) }, maxBytes: 0 }))).rejects.toThrow(/maxBytes must be a positive/);
    await expect(importFeed(t.db, base({ input: { text: csvFeed([row(1)]) }, stageBatch: 0.5 }))).rejects.toThrow(/stageBatch must be a positive/);
  });

  it('reads a file in pieces: a character cut between two pieces is read whole', async () => {
    // Files are read in pieces of 64 KiB: put a two-byte character across the first cut.
    const head = `${CSV_HEADER_LINE}\n`;
    const filler = (n: number) => row(1, { title: 'x'.repeat(n) });
    const before2 = 'ST-2;Location;Appartement;';
    const titleAt = 65_536 - 11;
    const n = titleAt - Buffer.byteLength(head) - Buffer.byteLength(filler(0)) - 1 - Buffer.byteLength(before2);
    const title = `${'é'.repeat(20)} Strassen 🏠`;
    const bytes = Buffer.from(`${head}${filler(n)}\n${row(2, { title })}\n`);
    expect(bytes.subarray(titleAt, titleAt + 2).toString()).toBe('é');
    expect(bytes[65_535]).toBe(0xc3);
    const r = await importFeed(t.db, base({ source: 'pieces', input: bytes }));
    expect(r.counts).toMatchObject({ read: 2, created: 2, rejected: 0 });
    expect((await t.db('listings').where({ source: 'pieces', external_id: 'ST-2' }).first()).title).toBe(title);
  });
});
