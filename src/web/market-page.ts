import { Router, type Request } from 'express';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { LiveState } from '../cache/live-state.js';
import { VersionedCache } from '../cache/versioned-cache.js';
import { describePeriod, historyRange, LOW_SAMPLE_BELOW, publishFigures, ROOMS_TOP_BUCKET, utcDay, type RentFigures } from '../domain/market.js';
import { placeCommunes, type Gazetteer } from '../reference/gazetteer.js';
import { NAME_CHARACTER_RULES, showDirectionCharacters } from '../lib/text.js';
import { currentDataVersion } from '../repositories/data-version.js';
import { marketPrices } from '../repositories/market.js';
import { ALL_ROOMS, marketHistory, snapshotVersion } from '../repositories/market-snapshots.js';
import { htmlErrorHandler, htmlNotFound } from './errors.js';
import { html, SafeHtml } from './html.js';
import { refuseControlCharacters } from './input.js';
import { messagePage, page } from './layout.js';
import { lineChart, type ChartPoint } from './market-chart.js';
import { onlyMethods } from './methods.js';

// GET /market: public, no key, no script. The communes' median rents (RENT, active unflagged
// listings, as /api/v1/market/prices computes them) in a table sortable by links, and one
// commune's last 12 months as SVG charts drawn here from the daily snapshots (as
// /api/v1/market/history gives them), with the number of listings behind every figure.

const SORTS = ['commune', 'listings', 'median_rent', 'rent_per_m2'] as const;
type SortKey = (typeof SORTS)[number];
const SORT_VALUES = SORTS.flatMap((s) => [s, `-${s}`]) as [string, ...string[]];

const pageQuery = z
  .object({
    sort: z.enum(SORT_VALUES, `sort must be one of ${SORT_VALUES.join(', ')}`).optional(),
    commune: NAME_CHARACTER_RULES.reduce((schema, rule) => schema.refine((s) => !rule.refused(s), `commune ${rule.message}.`), z.string())
      .transform((s) => s.trim())
      .pipe(z.string().min(1, 'commune must not be empty').max(100, 'commune is too long'))
      .optional(),
    rooms: z
      .string()
      // No listing has 0 rooms (a studio counts 1): the page offers 1 to 5 and says so, where it
      // showed "0-room rentals" and an empty table (an outside probe). The API's rooms=0 finds none.
      .regex(/^[1-5]$/, `rooms must be a whole number from 1 to ${ROOMS_TOP_BUCKET} (a studio counts 1 room; ${ROOMS_TOP_BUCKET}: ${ROOMS_TOP_BUCKET} or more)`)
      .transform(Number)
      .optional(),
  })
  .strict();
type PageQuery = { sort: string; commune: string; rooms: number | null };

const DEFAULT_COMMUNE = 'Luxembourg';
const eur = new Intl.NumberFormat('en-IE', { maximumFractionDigits: 0 });
const cents = new Intl.NumberFormat('en-IE', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const money = (v: number | null) => (v === null ? '–' : `${eur.format(v)} €`);
const perM2 = (v: number | null) => (v === null ? '–' : `${cents.format(v)} €`);
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

interface Row extends RentFigures {
  commune: string;
}

function sortRows(rows: Row[], sort: string): Row[] {
  const desc = sort.startsWith('-');
  const key = (desc ? sort.slice(1) : sort) as SortKey;
  const value = (r: Row): number | string | null =>
    key === 'commune' ? r.commune : key === 'listings' ? r.listings : key === 'median_rent' ? r.median_rent_eur : r.median_price_per_m2_eur;
  const byName = new Intl.Collator('fr', { sensitivity: 'base' });
  return [...rows].sort((a, b) => {
    const va = value(a);
    const vb = value(b);
    // Suppressed figures last, whichever the direction; ties by name.
    if (va === null || vb === null) return va === vb ? byName.compare(a.commune, b.commune) : va === null ? 1 : -1;
    const c = typeof va === 'string' ? byName.compare(va, vb as string) : va - (vb as number);
    return (desc ? -c : c) || byName.compare(a.commune, b.commune);
  });
}

function href(q: PageQuery, change: Partial<PageQuery>, anchor = ''): string {
  const n = { ...q, ...change };
  const p = new URLSearchParams();
  if (n.sort !== 'commune') p.set('sort', n.sort);
  if (n.commune !== DEFAULT_COMMUNE) p.set('commune', n.commune);
  if (n.rooms !== null) p.set('rooms', String(n.rooms));
  const s = p.toString();
  return `/market${s ? `?${s}` : ''}${anchor}`;
}

// A figure shown on fewer than 10 listings (of those it rests on: all, or those with an area) is
// marked, and so is a count of 1 to 9 listings: the per-m² figures and the month-by-month table
// were not (an outside probe of stop 48). `shown`: whether the figure is there to be marked.
function lowMark(n: number, what: string, shown = true): SafeHtml | '' {
  return shown && n > 0 && n < LOW_SAMPLE_BELOW ? html` <span class="low" title="fewer than ${LOW_SAMPLE_BELOW} ${what}">low sample</span>` : '';
}

function table(rows: Row[], q: PageQuery): SafeHtml {
  const header = (key: SortKey, label: string, numeric: boolean) => {
    const active = q.sort === key || q.sort === `-${key}`;
    const next = q.sort === key ? `-${key}` : key;
    const arrow = !active ? '' : q.sort.startsWith('-') ? ' ▼' : ' ▲';
    const ariaSort = !active ? '' : q.sort.startsWith('-') ? 'descending' : 'ascending';
    return html`<th scope="col"${numeric ? html` class="num"` : ''}${ariaSort ? html` aria-sort="${ariaSort}"` : ''}><a href="${href(q, { sort: next })}">${label}${arrow}</a></th>`;
  };
  return html`<table class="keys market">
<thead><tr>${header('commune', 'Commune', false)}${header('listings', 'Listings', true)}${header('median_rent', 'Median rent', true)}<th scope="col" class="num nosort">Middle half (p25–p75)</th>${header('rent_per_m2', 'Median rent per m²', true)}</tr></thead>
<tbody>
${rows.map(
  (r) => html`<tr${r.commune === q.commune ? html` class="current"` : ''}>
<td data-label="Commune"><a href="${href(q, { commune: r.commune }, '#history')}">${r.commune}</a></td>
<td data-label="Listings" class="num"><span>${r.listings}${lowMark(r.listings, 'listings')}</span></td>
<td data-label="Median rent" class="num">${money(r.median_rent_eur)}</td>
<td data-label="Middle half" class="num">${r.p25_rent_eur === null ? '–' : `${eur.format(r.p25_rent_eur)}–${eur.format(r.p75_rent_eur!)} €`}</td>
<td data-label="Median rent per m²" class="num"><span>${perM2(r.median_price_per_m2_eur)}${lowMark(r.listings_with_area, 'listings with an area', r.median_price_per_m2_eur !== null)}</span></td>
</tr>`,
)}
</tbody>
</table>`;
}

function historySection(commune: string, rooms: number | null, rows: ReturnType<typeof historyPoints>): SafeHtml {
  const what = rooms === null ? 'all rentals' : rooms === ROOMS_TOP_BUCKET ? `${ROOMS_TOP_BUCKET} rooms or more` : `${rooms}-room rentals`;
  if (rows.length === 0) return html`<p class="muted">No history yet for ${commune}: the service takes a snapshot of the figures every day.</p>`;
  const rent = withGaps(rows, (r) => ({ ...r.base, median: r.f.median_rent_eur, p25: r.f.p25_rent_eur, p75: r.f.p75_rent_eur, title: `${r.long}: median rent ${money(r.f.median_rent_eur)}, ${r.f.listings} listings` }));
  const area = withGaps(rows, (r) => ({
    ...r.base,
    n: r.f.listings_with_area,
    median: r.f.median_price_per_m2_eur,
    p25: r.f.p25_price_per_m2_eur,
    p75: r.f.p75_price_per_m2_eur,
    title: `${r.long}: median ${perM2(r.f.median_price_per_m2_eur)} per m², ${r.f.listings_with_area} listings with an area`,
  }));
  return html`<div class="grid-2">
<figure class="card chart-card"><figcaption><strong>Median monthly rent</strong>, ${commune}, ${what}. Band: the middle half of the listings (p25–p75); under each month, the listings counted (n); a hollow dot: fewer than 10 listings.</figcaption>
${lineChart({ id: 'chart-rent', title: `Median monthly rent in ${commune}, ${what}, by month`, points: rent, format: (v) => eur.format(v) })}
</figure>
<figure class="card chart-card"><figcaption><strong>Median rent per m²</strong>, ${commune}, ${what}; n: the listings with an area; a hollow dot: fewer than 10 of them.</figcaption>
${lineChart({ id: 'chart-m2', title: `Median rent per m² in ${commune}, ${what}, by month`, points: area, format: (v, step) => v.toFixed(Number.isInteger(step) ? 0 : 1) })}
</figure>
</div>
<details class="card"><summary>The figures, month by month</summary>
<table class="keys"><thead><tr><th scope="col">Month</th><th scope="col">Snapshot</th><th scope="col" class="num">Listings</th><th scope="col" class="num">Median rent (p25–p75)</th><th scope="col" class="num">Median per m²</th></tr></thead>
<tbody>${rows.map(
    (r) => html`<tr><td data-label="Month">${r.long}</td><td data-label="Snapshot">${r.day}</td><td data-label="Listings" class="num"><span>${r.f.listings}${lowMark(r.f.listings, 'listings')}</span></td><td data-label="Median rent" class="num">${money(r.f.median_rent_eur)}${
      r.f.p25_rent_eur === null ? '' : ` (${eur.format(r.f.p25_rent_eur)}–${eur.format(r.f.p75_rent_eur!)})`
    }</td><td data-label="Median per m²" class="num"><span>${perM2(r.f.median_price_per_m2_eur)}${lowMark(r.f.listings_with_area, 'listings with an area', r.f.median_price_per_m2_eur !== null)}</span></td></tr>`,
  )}</tbody></table>
</details>`;
}

// The chart's points, with a point without figures for each month that has no snapshot
// between two that have one: the line breaks there instead of joining them as if consecutive
// (an outside probe).
function withGaps(rows: ReturnType<typeof historyPoints>, point: (r: ReturnType<typeof historyPoints>[number]) => ChartPoint): ChartPoint[] {
  const out: ChartPoint[] = [];
  const index = (period: string) => Number(period.slice(0, 4)) * 12 + Number(period.slice(5, 7)) - 1;
  rows.forEach((r, i) => {
    if (i > 0) {
      for (let m = index(rows[i - 1].period) + 1; m < index(r.period); m++) {
        const year = String(Math.floor(m / 12));
        out.push({ label: MONTHS[m % 12], year: m % 12 === 0 ? year : undefined, n: null, median: null, p25: null, p75: null, title: `${MONTHS[m % 12]} ${year}: no snapshot` });
      }
    }
    out.push(point(r));
  });
  return out;
}

function historyPoints(rows: Awaited<ReturnType<typeof marketHistory>>, rooms: number | null) {
  return rows.map((r, index) => {
    const p = describePeriod('month', r.period_start);
    const month = Number(p.period.slice(5, 7)) - 1;
    const f = publishFigures(r, 'RENT', rooms) as RentFigures;
    // The year under the first month and under each January (the chart moves the first one
    // aside when a January follows closely).
    const year = month === 0 || index === 0 ? p.period.slice(0, 4) : undefined;
    const base: Omit<ChartPoint, 'median' | 'p25' | 'p75' | 'title'> = { label: MONTHS[month], year, n: f.listings };
    return { base, f, day: r.snapshot_date, long: `${MONTHS[month]} ${p.period.slice(0, 4)}`, period: p.period };
  });
}

export interface MarketPageDeps {
  db: Knex;
  logger: Logger;
  clock: () => Date;
  gazetteer: Gazetteer;
  live?: LiveState;
}

export function marketPageRouter(deps: MarketPageDeps): Router {
  // Fragments kept per version: the table while the data is the same, the history while no
  // snapshot was taken.
  const tables = new VersionedCache<string>(64, (s) => s.length, 8 * 1024 * 1024);
  const histories = new VersionedCache<string>(512, (s) => s.length, 8 * 1024 * 1024);
  const r = Router();
  r.use(refuseControlCharacters);
  r.all('/', onlyMethods('GET'));
  r.get('/', async (req: Request, res) => {
    const parsed = pageQuery.safeParse(req.query);
    // The message may repeat what the address said (a commune, a parameter's name).
    const bad = (message: string) =>
      res.status(400).type('html').send(messagePage({ title: 'Bad request', message: showDirectionCharacters(message), back: { href: '/market', label: 'Back to the market prices' } }));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      if (issue.code === 'unrecognized_keys') return bad(`Unknown parameter: ${issue.keys.join(', ')}. This page takes sort, commune and rooms.`);
      // A parameter given twice arrives as an array: said as such, whatever check refused it
      // (zod's own wording would say "expected string", or list sort's values).
      const twice = parsed.error.issues.map((i) => String(i.path[0])).find((k) => Array.isArray(req.query[k]));
      if (twice) return bad(`${twice} must be given once.`);
      return bad(issue.message);
    }
    const place = deps.gazetteer.resolve(parsed.data.commune ?? DEFAULT_COMMUNE);
    if (place?.kind === 'locality') {
      // Every commune a locality of that name lies in (an outside probe of stop 50: "Bruch" named
      // Esch-sur-Alzette alone, though it is also Brouch in Helperknapp).
      const communes = placeCommunes(place);
      const named = place.options.length > 1 ? `names the localities ${place.options.map((o) => `${o.locality} (${o.commune})`).join(', ')}` : `is a locality of ${communes[0]}`;
      return bad(`${parsed.data.commune} ${named}: this page shows figures per commune (${communes.map((c) => `commune=${c}`).join(', ')}).`);
    }
    if (!place) {
      const hints = deps.gazetteer.suggest(parsed.data.commune ?? '', 3, true);
      return bad(`${parsed.data.commune} is not a commune of Luxembourg${hints.length ? ` (did you mean ${hints.join(', ')}?)` : ''}.`);
    }
    const q: PageQuery = { sort: parsed.data.sort ?? 'commune', commune: place.commune, rooms: parsed.data.rooms ?? null };
    const [dataVersion, snapVersion] = await Promise.all([deps.live?.currentVersion() ?? currentDataVersion(deps.db), deps.live?.currentSnapshotVersion() ?? snapshotVersion(deps.db)]);
    const tableHtml = await tables.get(dataVersion, JSON.stringify([q.sort, q.rooms, q.commune]), async () => {
      const figures = await marketPrices(deps.db, { listingType: 'RENT', rooms: q.rooms ?? undefined });
      const rows = figures.map((f) => ({ commune: f.commune, ...(publishFigures(f, 'RENT', q.rooms) as RentFigures) }));
      return table(sortRows(rows, q.sort), q).value;
    });
    const { from, to } = historyRange('month', utcDay(deps.clock()), {});
    const historyHtml = await histories.get(snapVersion, JSON.stringify([q.commune, q.rooms, from, to]), async () => {
      const rows = await marketHistory(deps.db, { commune: q.commune, listingType: 'RENT', rooms: q.rooms ?? ALL_ROOMS, interval: 'month', from, to });
      return historySection(q.commune, q.rooms, historyPoints(rows, q.rooms)).value;
    });
    const roomLinks = [null, 1, 2, 3, 4, 5].map((n) => {
      const label = n === null ? 'All' : n === ROOMS_TOP_BUCKET ? '5+' : String(n);
      return n === q.rooms ? html`<strong aria-current="true">${label}</strong>` : html`<a href="${href(q, { rooms: n })}">${label}</a>`;
    });
    res.setHeader('Cache-Control', 'public, max-age=60');
    res.type('html').send(
      page({
        title: 'Market prices',
        main: html`<h1>Market prices</h1>
<p class="lead">Asking rents of the active listings by commune, live, with the number of listings behind every figure. Figures resting on fewer than 3 listings are not shown; fewer than 10 are marked <span class="low">low sample</span>.</p>
<nav class="actions" aria-label="Rooms"><p>Rooms:</p>${roomLinks}</nav>
<section id="history" aria-labelledby="history-title"><h2 id="history-title">${q.commune}: the last 12 months</h2>
${new SafeHtml(historyHtml)}
</section>
<section aria-labelledby="communes-title"><h2 id="communes-title">By commune</h2>
<p class="muted">Click a column to sort, a commune to see its history. Medians and quartiles as <code>GET /api/v1/market/prices</code> computes them; history from <code>GET /api/v1/market/history</code> (an <a href="/api-keys">API key</a> is needed).</p>
${new SafeHtml(tableHtml)}
</section>`,
      }),
    );
  });
  r.use(htmlNotFound);
  r.use(htmlErrorHandler(deps.logger));
  return r;
}
