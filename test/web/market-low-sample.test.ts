import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { takeMarketSnapshot } from '../../src/repositories/market-snapshots.js';
import { useTestContext } from '../helpers/context.js';
import { insertListing } from '../helpers/factory.js';
import { buildWebApp } from './helpers.js';

// Every figure of the /market page that rests on fewer than 10 listings is marked "low sample",
// as the page and docs/integrators.md say: the per-m² figures rest on the listings with an area,
// which may be fewer than the listings (an outside probe of stop 48 found them unmarked, and the
// month-by-month table without any mark).
const now = new Date('2026-11-20T09:00:00Z');
const t = useTestContext();
let app: Awaited<ReturnType<typeof buildWebApp>>;

beforeAll(async () => {
  // Mamer: 11 rentals, 9 with an area. Strassen: 12, all with one.
  for (let i = 0; i < 11; i++) await insertListing(t.db, { commune: 'Mamer', listing_type: 'RENT', rooms: 2, area_m2: i < 9 ? 60 + i : null, price_eur: 1800 + i * 20 });
  for (let i = 0; i < 12; i++) await insertListing(t.db, { commune: 'Strassen', listing_type: 'RENT', rooms: 2, area_m2: 70 + i, price_eur: 2000 + i * 20 });
  await takeMarketSnapshot(t.db, { day: now.toISOString().slice(0, 10), takenAt: now });
  app = await buildWebApp(t.db, { clock: () => now });
}, 300_000);

const rowOf = (html: string, commune: string) => new RegExp(`${commune}</a></td>([^]*?)</tr>`).exec(html)?.[1] ?? '';
// A cell's content: its figure and mark, in the one span that keeps them together on a phone.
const cell = (row: string, label: string) => new RegExp(`<td data-label="${label}" class="num"><span>([^]*?)</span></td>`).exec(row)?.[1] ?? '';

describe('GET /market: low samples', () => {
  it('marks the per-m² figure of a commune with 10 listings or more but fewer than 10 with an area, and not the count', async () => {
    const res = await request(app).get('/market');
    expect(res).toHaveStatus(200);
    const mamer = rowOf(res.text, 'Mamer');
    expect(cell(mamer, 'Listings')).toBe('11');
    expect(cell(mamer, 'Median rent per m²')).toMatch(/€ <span class="low" title="fewer than 10 listings with an area">low sample<\/span>$/);
    const strassen = rowOf(res.text, 'Strassen');
    expect(cell(strassen, 'Median rent per m²')).not.toContain('low sample');
  });

  it('marks the month-by-month table too', async () => {
    const res = await request(app).get('/market?commune=Mamer');
    expect(res).toHaveStatus(200);
    const table = res.text.slice(res.text.indexOf('The figures, month by month'));
    const row = /<tr><td data-label="Month">[^]*?<\/tr>/.exec(table)![0];
    expect(cell(row, 'Listings')).toBe('11');
    expect(cell(row, 'Median per m²')).toContain('<span class="low" title="fewer than 10 listings with an area">low sample</span>');
  });
});
