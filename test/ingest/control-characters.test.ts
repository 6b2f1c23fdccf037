import { describe, expect, it } from 'vitest';
import { importFeed } from '../../src/ingest/index.js';
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
