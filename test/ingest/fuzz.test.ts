import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCsvFeed, parseJsonFeed, parseOpenImmo } from '../../src/ingest/adapters/index.js';
import { FeedParseError } from '../../src/ingest/errors.js';
import { normalizeRecord } from '../../src/ingest/normalize.js';
import type { ParsedFeed } from '../../src/ingest/types.js';
import { TEST_LISTING_IDS } from '../helpers/factory.js';
import { CSV_HEADER_LINE, fixture, gazetteer } from './helpers.js';

const NOW = new Date('2026-11-22T08:00:00.000Z');
const RUNS = 300;

// The contract of an adapter plus the normalizer: a feed either parses (each record then
// becomes a listing or a reject with a reason) or fails as a whole with a FeedParseError.
// Nothing else may escape: no TypeError, no RangeError, no hang.
async function survives(parse: () => Promise<ParsedFeed>): Promise<void> {
  let feed: ParsedFeed;
  try {
    feed = await parse();
  } catch (e) {
    if (e instanceof FeedParseError) return;
    throw e;
  }
  for (const r of feed.records) {
    if (r.action !== 'upsert') continue;
    const n = normalizeRecord(r, { source: 'fuzz', gazetteer: gazetteer(), now: NOW, listingId: TEST_LISTING_IDS });
    if (n.ok) {
      expect(n.listing.price_eur).toBeGreaterThan(0);
      expect(Number.isInteger(n.listing.price_eur)).toBe(true);
      expect(n.listing.title.length).toBeGreaterThan(0);
      expect(['RENT', 'SALE', 'SUBLET', 'FLATSHARE']).toContain(n.listing.listing_type);
      expect(gazetteer().commune(n.listing.commune)).toBeTruthy();
    } else {
      expect(typeof n.reason).toBe('string');
      expect(n.reason.length).toBeGreaterThan(0);
    }
  }
  for (const r of feed.rejects) expect(r.reason.length).toBeGreaterThan(0);
}

// Cuts, splices and byte flips of a real sample: close enough to the format to get past
// the first checks.
const mutated = (sample: string) =>
  fc
    .tuple(fc.nat({ max: sample.length }), fc.nat({ max: sample.length }), fc.string({ maxLength: 40 }), fc.constantFrom('cut', 'splice', 'insert'))
    .map(([i, j, s, op]) => {
      const [a, b] = i < j ? [i, j] : [j, i];
      if (op === 'cut') return sample.slice(0, a);
      if (op === 'splice') return sample.slice(0, a) + s + sample.slice(b);
      return sample.slice(0, a) + s + sample.slice(a);
    });

const xml = readFileSync(fixture('immo-nord.openimmo.xml'), 'utf8');
const csv = readFileSync(fixture('moselle-immo.csv'), 'utf8');
const json = readFileSync(fixture('capital-homes.json'), 'utf8');

describe('fuzzing: adapters only ever reject records or fail with a parse error', () => {
  it('openimmo: arbitrary text and bytes', async () => {
    await fc.assert(fc.asyncProperty(fc.string(), (s) => survives(() => parseOpenImmo(s))), { numRuns: RUNS });
    await fc.assert(fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), (b) => survives(() => parseOpenImmo(Buffer.from(b)))), { numRuns: RUNS });
  });
  it('openimmo: mutated sample', async () => {
    await fc.assert(fc.asyncProperty(mutated(xml), (s) => survives(() => parseOpenImmo(s))), { numRuns: RUNS });
  });
  it('openimmo: arbitrary element values in a valid structure', async () => {
    const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ maxLength: 30 }), { minLength: 8, maxLength: 8 }), async (v) => {
        const doc = xml
          .replace('2150.00', esc(v[0])).replace('78.50', esc(v[1])).replace('<anzahl_zimmer>3<', `<anzahl_zimmer>${esc(v[2])}<`)
          .replace('Belair', esc(v[3])).replace('49.61152', esc(v[4])).replace('IN-2026-0042', esc(v[5]))
          .replace('2026-11-19', esc(v[6])).replace('MIETE_PACHT="true"', `MIETE_PACHT="${esc(v[7])}"`);
        await survives(() => parseOpenImmo(doc));
      }),
      { numRuns: RUNS },
    );
  });

  it('csv: arbitrary text and bytes, after a valid header too', async () => {
    await fc.assert(fc.asyncProperty(fc.string(), (s) => survives(() => parseCsvFeed(s))), { numRuns: RUNS });
    await fc.assert(fc.asyncProperty(fc.string(), (s) => survives(() => parseCsvFeed(`${CSV_HEADER_LINE}\n${s}`))), { numRuns: RUNS });
    await fc.assert(fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), (b) => survives(() => parseCsvFeed(Buffer.from(b)))), { numRuns: RUNS });
  });
  it('csv: rows of arbitrary fields', async () => {
    const field = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('1 250 €', '85,5 m²', '', 'oui', '49,6', '6.1', 'Belvaux', 'Vente', '21/11/2026 14:03', '4 900 CHF'));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(field, { minLength: 0, maxLength: 18 }), { maxLength: 5 }), async (rows) => {
        const q = (s: string) => `"${s.replace(/"/g, '""')}"`;
        await survives(() => parseCsvFeed([CSV_HEADER_LINE, ...rows.map((r) => r.map(q).join(';'))].join('\n')));
      }),
      { numRuns: RUNS },
    );
  });
  it('csv: mutated sample', async () => {
    await fc.assert(fc.asyncProperty(mutated(csv), (s) => survives(() => parseCsvFeed(s))), { numRuns: RUNS });
  });

  it('json: arbitrary text, bytes and JSON values', async () => {
    await fc.assert(fc.asyncProperty(fc.string(), (s) => survives(() => parseJsonFeed(s))), { numRuns: RUNS });
    await fc.assert(fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), (b) => survives(() => parseJsonFeed(Buffer.from(b)))), { numRuns: RUNS });
    await fc.assert(fc.asyncProperty(fc.jsonValue(), (v) => survives(() => parseJsonFeed(JSON.stringify(v)))), { numRuns: RUNS });
  });
  it('json: listings of arbitrary values in every field', async () => {
    const sample = JSON.parse(json) as { listings: Record<string, unknown>[] };
    const keys = Object.keys(sample.listings[0]);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...keys), fc.jsonValue({ maxDepth: 3 })), { maxLength: 6 }), fc.nat({ max: 2 }), async (edits, i) => {
        const listing = { ...sample.listings[i] };
        for (const [k, v] of edits) listing[k] = v;
        await survives(() => parseJsonFeed(JSON.stringify({ mode: 'full', listings: [listing] })));
      }),
      { numRuns: RUNS },
    );
  });
  it('json: mutated sample', async () => {
    await fc.assert(fc.asyncProperty(mutated(json), (s) => survives(() => parseJsonFeed(s))), { numRuns: RUNS });
  });
});
