import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTING_TYPES, NATIVE_SOURCE } from '../../src/domain/listing.js';
import { generateDemoData, type DemoData, type DemoFeedStep, type DemoNativeStep } from '../../src/demo/generate.js';
import { loadDemoUnlessLoaded, seedDemo, type SeedResult } from '../../src/demo/seed.js';
import { FILE_READERS, collectFeed } from '../../src/ingest/adapters/index.js';
import { DEMO_HISTORY_WEEKS } from '../../src/demo/history.js';
import { marketPrices } from '../../src/repositories/market.js';
import { presentListing, writeListing } from '../../src/http/present.js';
import { findActiveListingsByIds, findActiveListingsJson } from '../../src/repositories/listings.js';
import { ALL_ROOMS, marketHistory } from '../../src/repositories/market-snapshots.js';
import { readCommunes, readDataCsv } from '../../src/reference/csv.js';
import { createTestDb, type TestDb } from '../helpers/pg.js';

const now = new Date('2026-11-22T10:00:00.000Z');
const DAY = 86_400_000;

const feedsOf = (d: DemoData) => d.steps.filter((s): s is DemoFeedStep => s.kind === 'feed');

describe('generateDemoData: the demo feed files', () => {
  let data: DemoData;
  beforeAll(() => {
    data = generateDemoData({ now });
  });

  it('renders byte-identical files for a seed and other files for another seed', () => {
    const again = generateDemoData({ now });
    expect(again.steps.map((s) => [s.kind, s.source, s.at.toISOString()])).toEqual(data.steps.map((s) => [s.kind, s.source, s.at.toISOString()]));
    feedsOf(data).forEach((f, i) => {
      const g = feedsOf(again)[i];
      expect(g.fileName).toBe(f.fileName);
      expect(g.bytes.equals(f.bytes), f.fileName).toBe(true);
    });
    const natives = (d: DemoData) => d.steps.flatMap((s) => (s.kind === 'native' ? [s.posts] : []));
    expect(natives(again)).toEqual(natives(data));

    const other = feedsOf(generateDemoData({ now, seed: 7 }));
    feedsOf(data).forEach((f, i) => expect(other[i].bytes.equals(f.bytes), f.fileName).toBe(false));
  });

  it('has full snapshots of at least four agencies in the three formats, plus native posts', async () => {
    const feeds = feedsOf(data);
    const agencies = new Set(feeds.map((f) => f.source));
    expect(agencies.size).toBeGreaterThanOrEqual(4);
    expect(new Set(feeds.map((f) => f.format))).toEqual(new Set(['openimmo', 'csv', 'json']));
    for (const f of feeds) {
      const parsed = await collectFeed(FILE_READERS[f.format], f.bytes);
      expect(parsed.mode, f.fileName).not.toBe('delta');
      expect(parsed.records.length, f.fileName).toBeGreaterThan(50);
    }
    // Some sources deliver twice (an older snapshot, then the current one); steps run oldest first.
    expect(feeds.length).toBeGreaterThan(agencies.size);
    const times = data.steps.map((s) => s.at.getTime());
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times.every((t) => t < now.getTime())).toBe(true);
    const native = data.steps.filter((s): s is DemoNativeStep => s.kind === 'native');
    expect(native.length).toBeGreaterThanOrEqual(1);
    expect(native.at(-1)!.posts.length).toBeGreaterThan(200);
    // A byte-order mark on some files, not on others.
    const bom = feeds.filter((f) => f.bytes[0] === 0xef && f.bytes[1] === 0xbb && f.bytes[2] === 0xbf);
    expect(bom.length).toBeGreaterThan(0);
    expect(bom.length).toBeLessThan(feeds.length);
  });

  it('lists about 15 % of the properties on offer with two or three sources, never twice with one', () => {
    const onOffer = data.market.properties.filter((p) => p.removedAt === null);
    expect(onOffer.length).toBe(6000);
    const multi = onOffer.filter((p) => p.copies.length >= 2).length / onOffer.length;
    expect(multi).toBeGreaterThan(0.12);
    expect(multi).toBeLessThan(0.2);
    expect(onOffer.some((p) => p.copies.length === 3)).toBe(true);
    expect(data.market.properties.filter((p) => new Set(p.copies.map((c) => c.source)).size !== p.copies.length)).toEqual([]);
  });

  it('carries the variations of docs/feed-formats.md', () => {
    const text = (format: string) =>
      feedsOf(data)
        .filter((f) => f.format === format)
        .map((f) => f.bytes.toString('utf8'))
        .join('\n');
    const csv = text('csv');
    const xml = text('openimmo');
    const json = text('json');
    const present = (s: string, re: RegExp) => expect(re.test(s), String(re)).toBe(true);
    // csv: place and number notations, bedrooms only, Windows line ends, an extra column.
    for (const re of [/;ESCH\/ALZETTE;|;Esch\/Alzette;/, /;Luxembourg-Gare;/, /;Petange;|;PETANGE;/, /;L-\d{4};/, /;\d{4};/, /"\d\.\d{3},00"/, /"\d \d{3} €"/, /;€ \d \d{3};/, /m²/, /;;\d;/, /\r\n/, /;Agent\r\n/]) {
      present(csv, re);
    }
    // openimmo: fractional rooms, floor plans beside photos, warm rents, swapped coordinates.
    for (const re of [/\.5<\/anzahl_zimmer>/, /gruppe="GRUNDRISS"/, /<warmmiete>/, /breitengrad="6\.\d+" laengengrad="49\./, /<regionaler_zusatz>/]) present(xml, re);
    // json: weekly rents, videos, no coordinates, multilingual titles, amounts as text.
    for (const re of [/"period": "week"/, /"type": "video"/, /"geo": null/, /"title": \{\n\s+"\w\w": "[^"]+",\n\s+"\w\w"/, /"amount":"\d/]) present(json, re);
  });
});

describe('seedDemo: the demo data set through the importer', () => {
  let t: TestDb;
  let data: DemoData;
  let first: SeedResult;
  const q = async <T = Record<string, unknown>>(sql: string, bindings: unknown[] = []) => (await t.db.raw(sql, bindings as never[])).rows as T[];
  const one = async <T = Record<string, unknown>>(sql: string, bindings: unknown[] = []) => (await q<T>(sql, bindings))[0];

  beforeAll(async () => {
    t = await createTestDb();
    data = generateDemoData({ now });
    first = await seedDemo(t.db, { now });
  }, 360_000); // about 8 s on a quiet machine (the market history's backfill included), 90 s seen on a very loaded one
  afterAll(async () => t?.drop());

  it('comes with 13 months of market history, a snapshot a week through the snapshot code, ending with today live', async () => {
    const days = await q<{ day: string; kind: string }>(`SELECT day::text AS day, kind FROM market_snapshot_days ORDER BY day`);
    expect(days).toHaveLength(DEMO_HISTORY_WEEKS + 1);
    expect(days.at(-1)).toEqual({ day: '2026-11-22', kind: 'live' });
    expect(days.slice(0, -1).every((d) => d.kind === 'demo_backfill')).toBe(true);
    expect(days[0].day <= '2025-11-01').toBe(true);
    // Today's snapshot holds exactly the live figures, commune by commune.
    const live = await marketPrices(t.db, { listingType: 'RENT' });
    const today = await q<Record<string, unknown>>(
      `SELECT commune, listings, listings_with_area, avg_price, p25_price, median_price, p75_price, avg_per_m2, p25_per_m2, median_per_m2, p75_per_m2
         FROM market_snapshots WHERE day = '2026-11-22' AND listing_type = 'RENT' AND rooms = -1`,
    );
    const byCommune = (a: Record<string, unknown>, b: Record<string, unknown>) => String(a.commune).localeCompare(String(b.commune));
    expect(today.sort(byCommune)).toEqual([...live].sort(byCommune as never));
    // A plausible past: per month, the capital's median rent per m2 moves by little each month,
    // a few per cent over the year, and the market was thinner a year ago.
    const months = await marketHistory(t.db, { commune: 'Luxembourg', listingType: 'RENT', rooms: ALL_ROOMS, interval: 'month', from: '2025-11-01', to: '2026-11-30' });
    expect(months).toHaveLength(13);
    const perM2 = months.map((m) => Number(m.median_per_m2));
    for (let i = 1; i < perM2.length; i++) expect(Math.abs(perM2[i] / perM2[i - 1] - 1), months[i].period_start).toBeLessThan(0.04);
    const yearly = perM2.at(-1)! / perM2[0] - 1;
    expect(yearly).toBeGreaterThan(0);
    expect(yearly).toBeLessThan(0.09);
    expect(new Set(perM2).size).toBeGreaterThan(6);
    expect(months[0].listings).toBeLessThan(months.at(-1)!.listings);
    expect(months[0].listings).toBeGreaterThan(0.7 * months.at(-1)!.listings);
  });

  it('imports every delivery through the importer, oldest first, each recorded in import_runs', async () => {
    expect(first.reports.map((r) => [r.source, r.status])).toEqual(data.steps.map((s) => [s.source, 'ok']));
    const runs = await q<{ source: string; status: string; file_name: string | null; started_at: Date; counts: Record<string, number>; rejects: unknown[] }>(
      `SELECT source, status, file_name, started_at, counts, rejects FROM import_runs ORDER BY id`,
    );
    expect(runs.map((r) => [r.source, r.status, r.started_at.toISOString()])).toEqual(data.steps.map((s) => [s.source, 'ok', s.at.toISOString()]));
    for (const [i, r] of runs.entries()) {
      const step = data.steps[i];
      if (step.kind === 'feed') {
        expect(r.file_name).toBe(step.fileName);
        // Bad records in every agency delivery: rejected with a reason, counted, stored.
        expect(r.counts.rejected, step.fileName).toBeGreaterThanOrEqual(3);
        expect(r.rejects.length, step.fileName).toBe(r.counts.rejected);
      } else expect(r.counts.rejected).toBe(0);
    }
    const reasons = first.reports.flatMap((r) => r.rejects.map((x) => x.reason)).join('\n');
    for (const re of [/only EUR is accepted/, /unknown commune or locality|names a place abroad/, /no price/, /area .* (negative|not a number|not plausible)/, /neither MIETE_PACHT nor KAUF/, /is not Luxembourg/, /fields, 16 expected/, /is not a home to rent or buy/]) {
      expect(re.test(reasons), String(re)).toBe(true);
    }
  });

  it('ends with at least 5,000 active listings over all 100 communes and the four listing types', async () => {
    const { active, total } = await one<{ active: number; total: number }>(
      `SELECT count(*) FILTER (WHERE status = 'active')::int AS active, count(*)::int AS total FROM listings`,
    );
    expect({ active, total }).toEqual({ active: first.active, total: first.total });
    expect(active).toBeGreaterThanOrEqual(5000);
    const communes = await q<{ commune: string }>(`SELECT DISTINCT commune FROM listings WHERE status = 'active'`);
    expect(communes.map((c) => c.commune).sort()).toEqual(readCommunes().map((c) => c.name).sort());
    const types = await q<{ listing_type: string; n: number }>(`SELECT listing_type, count(*)::int AS n FROM listings WHERE status = 'active' GROUP BY 1`);
    expect(types.map((r) => r.listing_type).sort()).toEqual([...LISTING_TYPES].sort());
    const byType = Object.fromEntries(types.map((r) => [r.listing_type, r.n]));
    expect(byType.RENT / active).toBeGreaterThan(0.5);
    expect(byType.SALE / active).toBeGreaterThan(0.18);
  });

  it('has at least four agency sources in three formats, and native posts', async () => {
    const rows = await q<{ name: string; format: string; display_name: string; active: number }>(
      `SELECT s.name, s.format, s.display_name, count(l.id)::int AS active
         FROM sources s LEFT JOIN listings l ON l.source = s.name AND l.status = 'active' GROUP BY 1, 2, 3`,
    );
    const agencies = rows.filter((r) => r.format !== 'native' && r.active > 0);
    expect(agencies.length).toBeGreaterThanOrEqual(4);
    expect(new Set(agencies.map((r) => r.format))).toEqual(new Set(['openimmo', 'csv', 'json']));
    expect(rows.find((r) => r.name === NATIVE_SOURCE)?.active).toBeGreaterThan(200);
    expect(rows.every((r) => r.display_name)).toBe(true);
    const native = await one<{ bad: number }>(`SELECT count(*)::int AS bad FROM listings WHERE source = ? AND source_url IS NOT NULL`, [NATIVE_SOURCE]);
    expect(native.bad).toBe(0);
  });

  it('merges the copies of one property into an active listing of another source', async () => {
    const merged = await q<{ source: string; target_source: string; target_status: string; same_commune: boolean; same_type: boolean }>(
      `SELECT m.source, c.source AS target_source, c.status AS target_status,
              m.commune = c.commune AS same_commune, m.listing_type = c.listing_type AS same_type
         FROM listings m JOIN listings c ON c.id = m.merged_into WHERE m.status = 'merged'`,
    );
    expect(merged.length).toBeGreaterThan(300);
    expect(merged.filter((m) => m.target_status !== 'active' || m.target_source === m.source || !m.same_type)).toEqual([]);
    expect(merged.filter((m) => !m.same_commune).length / merged.length).toBeLessThan(0.02);
    const orphans = await one<{ n: number }>(`SELECT count(*)::int AS n FROM listings WHERE (status = 'merged') <> (merged_into IS NOT NULL)`);
    expect(orphans.n).toBe(0);

    // The truth behind the files: how well the importer put the copies of one property together.
    const owner = new Map<string, string>();
    for (const p of data.market.properties) for (const c of p.copies) owner.set(`${c.source}\u0000${c.externalId}`, p.key);
    const live = await q<{ id: string; source: string; external_id: string; grp: string }>(
      `SELECT id, source, external_id, coalesce(merged_into, id) AS grp FROM listings WHERE status IN ('active', 'merged')`,
    );
    const pairs = (key: (l: (typeof live)[number]) => string) => {
      const groups = new Map<string, string[]>();
      for (const l of live) groups.set(key(l), [...(groups.get(key(l)) ?? []), l.id]);
      const out = new Set<string>();
      for (const g of groups.values()) for (let i = 0; i < g.length; i++) for (let j = i + 1; j < g.length; j++) out.add([g[i], g[j]].sort().join('|'));
      return out;
    };
    const truth = pairs((l) => owner.get(`${l.source}\u0000${l.external_id}`) ?? l.id);
    const found = pairs((l) => l.grp);
    const hit = [...found].filter((p) => truth.has(p)).length;
    const precision = hit / found.size;
    const recall = hit / truth.size;
    console.log(`demo data set: ${truth.size} duplicate pairs, ${found.size} merged pairs; precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)}`);
    // 0.897 and 0.933 on 2026-11-28 (docs/demo-data.md): crowded look-alikes are the demo's hard part.
    expect(precision).toBeGreaterThan(0.88);
    expect(recall).toBeGreaterThan(0.85);
  });

  it('withdraws what a later snapshot no longer holds, and flags stale, outlier and possible duplicate listings', async () => {
    const inactive = await q<{ source: string; n: number }>(
      `SELECT source, count(*)::int AS n FROM listings WHERE status = 'inactive' AND removed_at IS NOT NULL GROUP BY 1`,
    );
    expect(inactive.reduce((s, r) => s + r.n, 0)).toBeGreaterThan(200);
    const flags = Object.fromEntries(
      (await q<{ f: string; n: number }>(`SELECT f, count(*)::int AS n FROM listings, unnest(flags) f WHERE status = 'active' GROUP BY 1`)).map((r) => [r.f, r.n]),
    );
    // Only a listing with two equally good candidates in one other source (and ranking below
    // them) is a possible duplicate: a handful in the demo.
    expect(flags.possible_duplicate).toBeGreaterThan(2);
    expect(flags.price_outlier).toBeGreaterThan(20);
    expect(flags.stale).toBeGreaterThan(50);
    // Stale: exactly the live listings not confirmed for 14 days (the agency that stopped delivering).
    const stale = await one<{ wrong: number }>(
      `SELECT count(*)::int AS wrong FROM listings
        WHERE status IN ('active', 'merged') AND ('stale' = ANY (flags)) <> (last_seen_at < ?::timestamptz - interval '14 days')`,
      [now],
    );
    expect(stale.wrong).toBe(0);
    const gaps = await one<{ nocoords: number; noarea: number; norooms: number; withlocality: number }>(
      `SELECT count(*) FILTER (WHERE lat IS NULL)::int AS nocoords, count(*) FILTER (WHERE area_m2 IS NULL)::int AS noarea,
              count(*) FILTER (WHERE rooms IS NULL)::int AS norooms, count(*) FILTER (WHERE locality IS NOT NULL)::int AS withlocality
         FROM listings WHERE status = 'active'`,
    );
    expect(gaps.nocoords).toBeGreaterThan(100);
    expect(gaps.noarea).toBeGreaterThan(100);
    expect(gaps.norooms).toBeGreaterThan(50);
    expect(gaps.withlocality).toBeGreaterThan(1000);
    const times = await one<{ future: number; old: number }>(
      `SELECT count(*) FILTER (WHERE created_at > ? OR first_seen_at > ? OR last_seen_at > ?)::int AS future,
              count(*) FILTER (WHERE created_at < ?::timestamptz - interval '240 days')::int AS old FROM listings`,
      [now, now, now, now],
    );
    expect(times).toEqual({ future: 0, old: 0 });
  });

  it('prices rentals in line with the Observatoire figures (median EUR/m2 within 40 %)', async () => {
    const medians = new Map(
      (
        await q<{ commune: string; n: number; med: number }>(
          `SELECT commune, count(*)::int AS n, percentile_cont(0.5) WITHIN GROUP (ORDER BY price_eur / area_m2) AS med
             FROM listings WHERE status = 'active' AND listing_type = 'RENT' AND area_m2 > 0 GROUP BY 1`,
        )
      ).map((r) => [r.commune, r]),
    );
    let checked = 0;
    for (const r of readDataCsv('rents.csv')) {
      const m = medians.get(r.commune);
      if (!r.apt_rent_avg_eur_m2_month || !m || m.n < 20) continue;
      checked++;
      const ratio = m.med / Number(r.apt_rent_avg_eur_m2_month);
      expect(ratio, `${r.commune}: median ${m.med.toFixed(2)} vs ${r.apt_rent_avg_eur_m2_month}`).toBeGreaterThan(0.6);
      expect(ratio, `${r.commune}: median ${m.med.toFixed(2)} vs ${r.apt_rent_avg_eur_m2_month}`).toBeLessThan(1.4);
    }
    expect(checked).toBeGreaterThanOrEqual(15);
  });

  it('lands market prices near the Observatoire averages (rent within 25 %, rent per m2 within 12 %) where 40 rentals count', async () => {
    const ref = new Map(readDataCsv('rents.csv').map((r) => [r.commune, r]));
    let checked = 0;
    for (const m of await marketPrices(t.db, { listingType: 'RENT' })) {
      const r = ref.get(m.commune);
      if (!r?.apt_rent_avg_eur_month || !r.apt_rent_avg_eur_m2_month || m.listings < 40) continue;
      checked++;
      const rent = m.avg_price! / Number(r.apt_rent_avg_eur_month);
      const perM2 = m.avg_per_m2! / Number(r.apt_rent_avg_eur_m2_month);
      expect(rent, `${m.commune}: average rent ${m.avg_price} vs ${r.apt_rent_avg_eur_month}`).toBeGreaterThan(0.75);
      expect(rent, `${m.commune}: average rent ${m.avg_price} vs ${r.apt_rent_avg_eur_month}`).toBeLessThan(1.25);
      expect(perM2, `${m.commune}: per m2 ${m.avg_per_m2} vs ${r.apt_rent_avg_eur_m2_month}`).toBeGreaterThan(0.88);
      expect(perM2, `${m.commune}: per m2 ${m.avg_per_m2} vs ${r.apt_rent_avg_eur_m2_month}`).toBeLessThan(1.12);
    }
    expect(checked).toBeGreaterThanOrEqual(8);
  });

  // Pages are written from the JSON PostgreSQL writes for each listing (src/services/listing-rows.ts):
  // on the demo's real-looking data it must be presentListing's, byte for byte, for every row.
  it('has every listing written as JSON by PostgreSQL, byte for byte as presentListing writes it', async () => {
    const ids = (await q<{ id: string }>(`SELECT id FROM listings WHERE status = 'active'`)).map((r) => r.id);
    const json = await findActiveListingsJson(t.db, ids);
    const columns = new Map((await findActiveListingsByIds(t.db, ids, true)).map((r) => [r.id, r]));
    expect(json).toHaveLength(ids.length);
    const o = { baseUrl: 'https://api.example', showFlags: true };
    const differ = json.filter((r) => r.fields === null || writeListing({ id: r.id, flags: r.flags_json, fields: r.fields }, o, 2.5) !== JSON.stringify(presentListing(columns.get(r.id)!, o, 2.5)));
    expect(differ.map((r) => r.id)).toEqual([]);
  });

  it('leaves no rental visible unflagged at five times the usual rent of its rooms in its commune, with or without an area', async () => {
    const wild = await q<{ external_id: string; price_eur: number; area_m2: number | null }>(
      `WITH m AS (SELECT commune, rooms, percentile_cont(0.5) WITHIN GROUP (ORDER BY price_eur) AS med, count(*) AS n
                    FROM listings WHERE status = 'active' AND listing_type = 'RENT' GROUP BY 1, 2)
       SELECT l.external_id, l.price_eur, l.area_m2 FROM listings l JOIN m ON m.commune = l.commune AND m.rooms = l.rooms
        WHERE l.status = 'active' AND l.listing_type = 'RENT' AND cardinality(l.flags) = 0 AND m.n >= 10
          AND (l.price_eur > 5 * m.med OR l.price_eur < m.med / 5)`,
    );
    expect(wild).toEqual([]);
  });
});

// Idempotence is a property of the code, not of the size: checked on a small data set (the
// full one takes half a minute a run on this machine).
describe('seedDemo run twice', () => {
  const SMALL = 600;
  let t: TestDb;
  let first: SeedResult;
  const q = async <T = Record<string, unknown>>(sql: string, bindings: unknown[] = []) => (await t.db.raw(sql, bindings as never[])).rows as T[];
  const one = async <T = Record<string, unknown>>(sql: string, bindings: unknown[] = []) => (await q<T>(sql, bindings))[0];

  beforeAll(async () => {
    t = await createTestDb();
    first = await seedDemo(t.db, { now, listings: SMALL });
  }, 300_000);
  afterAll(async () => t?.drop());

  it('gives the same result when run again', async () => {
    const state = async () => ({
      byStatus: await q(`SELECT source, status, count(*)::int AS n, count(*) FILTER (WHERE flagged)::int AS flagged FROM listings GROUP BY 1, 2 ORDER BY 1, 2`),
      ids: await one(`SELECT md5(string_agg(id || status || coalesce(merged_into, ''), ',' ORDER BY id)) AS h FROM listings`),
      posts: await one(`SELECT count(*)::int AS n FROM native_posts`),
      runs: await q(`SELECT source, status, counts FROM import_runs ORDER BY id`),
      sources: await one(`SELECT count(*)::int AS n FROM sources`),
      history: await one(`SELECT count(*)::int AS n, md5(string_agg(concat_ws(',', day, commune, listing_type, rooms, listings, median_price, p75_per_m2), ';' ORDER BY day, commune, listing_type, rooms)) AS h FROM market_snapshots`),
    });
    const before = await state();
    const second = await seedDemo(t.db, { now, listings: SMALL });
    expect({ active: second.active, total: second.total }).toEqual({ active: first.active, total: first.total });
    expect(await state()).toEqual(before);
  }, 300_000);
});

// An outside probe of stop 44: Ctrl-C during the embedded mode's first start, once the first
// demo import had committed, left 148 listings of one agency (every one stale, none visible to a
// Free key), and every later start kept them, since it loaded the demo only into an empty database.
describe('the embedded start after a first start stopped while it loaded the demo', () => {
  const SMALL = 600;
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => t?.drop());

  it('loads the demo data set again, whole; once loaded to its end, keeps it', async () => {
    const logs: string[] = [];
    const log = (what: string) => logs.push(what);
    // The first start, stopped after the second import (as a signal would end it there). Its feed
    // files are written to feedsDir, not to the system's temporary folder (a stopped load left
    // 7.8 MB there each time), and removed once loaded.
    const feedsDir = path.join(await mkdtemp(path.join(os.tmpdir(), 'demo-load-test-')), 'demo-feeds');
    let imports = 0;
    await expect(
      loadDemoUnlessLoaded(t.db, { now, listings: SMALL, log, feedsDir, onStep: () => {
        if (++imports === 2) throw new Error('stopped');
      } }),
    ).rejects.toThrow('stopped');
    const partial = Number((await t.db.raw(`SELECT count(*) AS n FROM listings`)).rows[0].n);
    expect(partial).toBeGreaterThan(0);
    expect(logs).toEqual(['first start: loading the demo data set']);
    // The next start loads it again, and gives what an uninterrupted load gives.
    const again = await loadDemoUnlessLoaded(t.db, { now, listings: SMALL, log, feedsDir });
    expect(again.outcome).toBe('reloaded');
    expect(existsSync(feedsDir)).toBe(false);
    await rm(path.dirname(feedsDir), { recursive: true, force: true });
    expect(logs[1]).toMatch(/^the demo data set was not loaded to its end/);
    const whole = await createTestDb();
    try {
      const direct = await seedDemo(whole.db, { now, listings: SMALL });
      expect(again).toEqual({ outcome: 'reloaded', active: direct.active });
      expect(direct.active).toBeGreaterThan(partial);
    } finally {
      await whole.drop();
    }
    // And the start after keeps what is there (an import made since included).
    const { id } = await t.db('listings').select('id').orderBy('id').first();
    await t.db('listings').where({ id }).update({ title: 'changed since' });
    expect(await loadDemoUnlessLoaded(t.db, { now, listings: SMALL, log })).toEqual({ outcome: 'kept' });
    expect(Number((await t.db('listings').where({ title: 'changed since' }).count('* as n').first())?.n)).toBe(1);
  }, 300_000);
});

// Kept apart so that a failure says which figure moved.
describe('generateDemoData: timestamps', () => {
  it('keeps every delivery and listing date within the last 120 days before now', () => {
    const data = generateDemoData({ now, listings: 300 });
    for (const p of data.market.properties) {
      for (const c of p.copies) {
        expect(c.listedAt).toBeLessThan(now.getTime());
        expect(now.getTime() - c.listedAt).toBeLessThan(135 * DAY);
      }
      if (p.removedAt !== null) expect(p.removedAt).toBeGreaterThan(p.listedAt);
    }
  });
});
