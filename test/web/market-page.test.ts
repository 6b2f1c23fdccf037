import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/context.js';
import { createKey, insertListing } from '../helpers/factory.js';
import { seedSmallMarket } from '../helpers/market-data.js';
import { buildWebApp } from './helpers.js';

const now = new Date('2026-11-20T09:00:00Z');
const t = useTestContext();
let app: Awaited<ReturnType<typeof buildWebApp>>;

beforeAll(async () => {
  await seedSmallMarket(t.db, now);
  app = await buildWebApp(t.db, { clock: () => now });
}, 300_000);

const communesInOrder = (html: string) => [...html.matchAll(/<td data-label="Commune"><a href="[^"]*">([^<]+)<\/a><\/td>/g)].map((m) => m[1]);

describe('GET /market (public, no key)', () => {
  it('shows the communes with median rent, quartiles, per m2 and sample size, no script, under the pages CSP', async () => {
    const res = await request(app).get('/market');
    expect(res).toHaveStatus(200);
    expect(res.headers['content-type']).toMatch(/^text\/html; charset=utf-8/);
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("style-src 'self'");
    expect(res.text).not.toMatch(/<script|style="/);
    expect(communesInOrder(res.text)).toEqual(['Bech', 'Differdange', 'Esch-sur-Alzette', 'Luxembourg', 'Strassen', 'Vianden']);
    // Bech: 6 listings, low sample; Vianden: 2, figures not shown.
    expect(res.text).toMatch(/Bech<\/a><\/td>\s*<td data-label="Listings" class="num"><span>6 <span class="low"/);
    expect(res.text).toMatch(/Vianden<\/a><\/td>\s*<td data-label="Listings" class="num"><span>2 <span class="low"[^]*?<td data-label="Median rent" class="num">–<\/td>/);
    // The figures are those of the API.
    const api = await request(app).get('/api/v1/market/prices?commune=Strassen').set('Authorization', `Bearer ${await key()}`);
    const s = api.body.data[0];
    const eur = (n: number) => n.toLocaleString('en-IE');
    expect(res.text).toContain(`<td data-label="Median rent" class="num">${eur(s.median_rent_eur)} €</td>`);
    expect(res.text).toContain(`<td data-label="Middle half" class="num">${eur(s.p25_rent_eur)}–${eur(s.p75_rent_eur)} €</td>`);
  });

  it('draws the history of a commune as SVG with the sample size of every month', async () => {
    const res = await request(app).get('/market?commune=strassen');
    expect(res).toHaveStatus(200);
    expect(res.text).toContain('<h2 id="history-title">Strassen: the last 12 months</h2>');
    const svgs = res.text.match(/<svg class="chart" viewBox="0 0 \d+ \d+"/g) ?? [];
    expect(svgs).toHaveLength(2);
    // 12 months (Dec 2025 .. Nov 2026), each with its listings count under it.
    const periods = [...res.text.matchAll(/<text class="period"[^>]*>([A-Z][a-z]{2})<\/text><text class="n"[^>]*>(\d+)<\/text>/g)];
    expect(periods.slice(0, 12).map((m) => m[1])).toEqual(['Dec', 'Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov']);
    expect(periods.at(11)![2]).toBe('24'); // today's snapshot: every Strassen rental
    expect(res.text).toContain('<polyline class="line"');
    expect(res.text).toContain('<polygon class="band"');
    // The year under January (an outside probe: Dec..Nov with no year), and the first month's
    // (a customer probe: Dec had none), drawn ending under Dec so as not to overlap Jan's.
    const years = (text: string) => [...text.matchAll(/<text class="year" x="([\d.]+)"[^>]*text-anchor="(\w+)">(\d{4})<\/text>/g)];
    const drawn = years(res.text);
    expect(drawn.map((m) => [m[2], m[3]])).toEqual([['end', '2025'], ['middle', '2026'], ['end', '2025'], ['middle', '2026']]);
    // At most 32 px wide ("2026" at 11 px): the first ends 8 px right of Dec, short of where Jan's begins.
    expect(Number(drawn[1][1]) - 16 - Number(drawn[0][1])).toBeGreaterThan(4);
    expect(res.text).toContain('a hollow dot: fewer than 10 listings');
  });

  it('sorts by link, suppressed figures last', async () => {
    const asc = await request(app).get('/market?sort=median_rent');
    const desc = await request(app).get('/market?sort=-median_rent');
    expect(communesInOrder(asc.text).at(-1)).toBe('Vianden');
    expect(communesInOrder(desc.text).at(-1)).toBe('Vianden');
    expect(communesInOrder(desc.text).slice(0, -1)).toEqual(communesInOrder(asc.text).slice(0, -1).reverse());
    const byCount = await request(app).get('/market?sort=-listings');
    expect(communesInOrder(byCount.text)).toEqual(['Luxembourg', 'Esch-sur-Alzette', 'Strassen', 'Differdange', 'Bech', 'Vianden']);
    // The header links keep the commune and flip the direction of the current sort.
    expect(desc.text).toContain('aria-sort="descending"><a href="/market?sort=median_rent">Median rent ▼</a>');
  });

  it('filters by rooms', async () => {
    const res = await request(app).get('/market?rooms=5&commune=Luxembourg');
    expect(res).toHaveStatus(200);
    expect(res.text).toContain('5 rooms or more');
    expect(res.text).toContain('<strong aria-current="true">5+</strong>');
  });

  it('answers bad parameters with a 400 page, never a 500', async () => {
    for (const [query, text] of [
      ['sort=price', 'sort must be one of commune, -commune'],
      ['rooms=7', 'rooms must be a whole number from 1 to 5'],
      ['rooms=0', 'a studio counts 1 room'],
      ['commune=Atlantis', 'Atlantis is not a commune of Luxembourg'],
      // Communes alone are suggested: the page refuses a locality (an outside probe of stop 53
      // was sent from "Nowhere" to "Nocher", then refused).
      ['commune=Nowhere', 'Nowhere is not a commune of Luxembourg.</'],
      ['commune=Diferdange', 'Diferdange is not a commune of Luxembourg (did you mean Differdange, Walferdange?)'],
      ['commune=Kirchberg', 'Kirchberg is a locality of Luxembourg: this page shows figures per commune (commune=Luxembourg).'],
      ['commune=Bruch', 'Bruch names the localities Bruch (Esch-sur-Alzette), Brouch (Helperknapp): this page shows figures per commune (commune=Esch-sur-Alzette, commune=Helperknapp).'],
      ['colour=red', 'Unknown parameter: colour'],
      ['sort=commune&sort=listings', 'sort must be given once.'],
      ['sort=colour', 'sort must be one of'],
      ['commune=Mamer&commune=Strassen', 'commune must be given once.'],
      ['rooms=1&rooms=2', 'rooms must be given once.'],
      // The query parser's own words, with the way back to this page (an outside probe: a
      // vague message and a link to the key page).
      ['commune=K%E4erjeng', 'The query string holds a percent-encoding that is not UTF-8'],
      ['commune=%', 'The query string holds a &quot;%&quot; not followed by two hexadecimal digits'],
      // What the address said is shown back with its text-direction characters as escapes (an
      // outside probe: U+202E made the page read as the attacker's message, ours reversed).
      // (A commune with one is refused as such: stop 46.)
      ['commune=%E2%80%AEmoc.live%20ot%20ngis', 'commune must not contain invisible characters'],
      ['%E2%80%8Fcolour=red', 'Unknown parameter: \\u200fcolour'],
    ]) {
      const res = await request(app).get(`/market?${query}`);
      expect(res, query).toHaveStatus(400);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.text, query).toContain(text);
      expect(res.text, query).toContain('<a href="/market">Back to the market prices</a>');
    }
  });

  it('is live: a new rental shows at once in the table', async () => {
    await insertListing(t.db, { commune: 'Vianden', listing_type: 'RENT', price_eur: 1234, area_m2: 50, rooms: 2 });
    const res = await request(app).get('/market');
    expect(res.text).toMatch(/Vianden<\/a><\/td>\s*<td data-label="Listings" class="num"><span>3 <span class="low"/);
  });
});

// Last in the file: it deletes snapshots. An outside probe: with March and April missing, the
// chart joined February to May as if they were consecutive months.
describe('GET /market, months without a snapshot', () => {
  it('are shown as gaps: the line breaks there and their count is –', async () => {
    await t.db('market_snapshot_days').whereRaw(`day >= '2026-03-01' AND day < '2026-05-01'`).delete();
    const fresh = await buildWebApp(t.db, { clock: () => now });
    const res = await request(fresh).get('/market?commune=Strassen');
    expect(res).toHaveStatus(200);
    const rent = res.text.slice(res.text.indexOf('<svg class="chart"'), res.text.indexOf('</svg>'));
    const periods = [...rent.matchAll(/<text class="period"[^>]*>([A-Z][a-z]{2})<\/text><text class="n"[^>]*>([^<]+)<\/text>/g)].map((m) => [m[1], m[2]]);
    expect(periods.map((p) => p[0])).toEqual(['Dec', 'Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov']);
    expect(periods[2][1]).not.toBe('–');
    expect([periods[3][1], periods[4][1]]).toEqual(['–', '–']);
    // Two lines: Dec-Feb and May-Nov.
    expect(rent.match(/<polyline class="line"/g)).toHaveLength(2);
    expect(res.text).toContain('<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">');
    expect(await request(fresh).get('/docs/assets/favicon-32x32.png')).toHaveStatus(200);
  });
});

async function key(): Promise<string> {
  return (await createKey(t.db, 'pro')).key;
}
