import { describe, expect, it } from 'vitest';
import { formatReport, importFeed } from '../../src/ingest/index.js';
import { CONTROL_CHARACTER } from '../../src/lib/text.js';
import { useTestContext } from '../helpers/context.js';
import { gazetteer } from './helpers.js';

// Issue 10 (item 2, the same class elsewhere): a JSON feed may carry a NUL as "\u0000" in a
// string. In a link or a photo address it passed the URL check (the parser percent-encodes
// it) and failed the whole import in PostgreSQL (22021; 22P05 in the images' jsonb).
const t = useTestContext();

const record = (over: Record<string, unknown>) => ({
  ref: 'J1', offer: 'rent', status: 'available', title: { en: 'Flat' }, price: { amount: 1700, currency: 'EUR', period: 'month' },
  surface_m2: 74, bedrooms: 2, address: { locality: 'Belvaux', postcode: 'L-4410', country: 'LU' }, geo: { lat: 49.5127, lon: 5.9301 },
  media: [{ type: 'photo', url: 'https://cdn.example/1.jpg' }], students: false, published_at: '2026-11-16T08:12:00Z', link: 'https://x.example/J1',
  ...over,
});

describe('control characters in feed addresses', () => {
  it('drop the link or the photo (the listing is kept), never fail the import', async () => {
    const cases = {
      link: record({ link: 'https://agency.example/a\u0000b' }),
      photo: record({ media: [{ type: 'photo', url: 'https://img.example/a\u0000b.jpg' }, { type: 'photo', url: 'https://img.example/ok.jpg' }] }),
      c1: record({ link: 'https://agency.example/a\u0085b' }),
    };
    for (const [label, r] of Object.entries(cases)) {
      const report = await importFeed(t.db, { source: `ctl-${label}`, format: 'json', input: { text: JSON.stringify({ agency: 'X', mode: 'full', listings: [r] }) }, gazetteer: gazetteer() });
      expect(report.status, label).toBe('ok');
      expect(report.counts.created, label).toBe(1);
    }
    expect((await t.db('listings').where({ source: 'ctl-link' }).first()).source_url).toBeNull();
    expect((await t.db('listings').where({ source: 'ctl-photo' }).first()).images).toEqual(['https://img.example/ok.jpg']);
  });
});

// The same class in what the importer stores and prints: C1 control characters (U+0080 to
// U+009F, U+009B is the 8-bit CSI of terminals) were kept in titles and external ids while
// C0 ones were removed; and reject reasons quote the feed's values to the operator's terminal.
describe('control characters in feed texts', () => {
  it('are removed from titles and external ids, C1 included', async () => {
    const r = record({ ref: 'C\u009b1\u0085', title: { en: 'Flat\u009b2J with\u0085a\u0007view' } });
    const report = await importFeed(t.db, { source: 'ctl-text', format: 'json', input: { text: JSON.stringify({ agency: 'X', mode: 'full', listings: [r] }) }, gazetteer: gazetteer() });
    expect(report.counts.created).toBe(1);
    const row = await t.db('listings').where({ source: 'ctl-text' }).first();
    expect(row.external_id).toBe('C1');
    expect(row.title).toBe('Flat 2J with a view');
  });

  it('are shown escaped, never sent to the terminal, in the report of rejected records', async () => {
    const evil = '\u001b]0;owned\u0007\u001b[2J';
    const r = record({ ref: `R${evil}`, address: { locality: `Nowhere${evil}`, country: 'LU' }, geo: null });
    const report = await importFeed(t.db, { source: 'ctl-report', format: 'json', input: { text: JSON.stringify({ agency: 'X', mode: 'full', listings: [r] }) }, gazetteer: gazetteer() });
    expect(report.counts.rejected).toBe(1);
    expect(report.rejects[0].reason).toContain('\u001b'); // the report itself keeps the value as given
    const text = formatReport(report);
    expect(text.replace(/\n/g, '')).not.toMatch(CONTROL_CHARACTER);
    expect(text).toContain('Nowhere\\u001b]0;owned\\u0007\\u001b[2J');
  });
});
