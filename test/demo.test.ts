import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLAGS, LISTING_TYPES, listingId, NATIVE_SOURCE, type ListingRow } from '../src/domain/listing.js';
import { generateDemoData, type DemoData } from '../src/demo/generate.js';
import { seedDemo } from '../src/demo/seed.js';
import { readCommunes, readDataCsv, readLocalities } from '../src/reference/csv.js';
import { buildGazetteer } from '../src/reference/gazetteer.js';
import { createTestDb, type TestDb } from './helpers/pg.js';

const now = new Date('2026-11-22T10:00:00.000Z');
const DAY = 86_400_000;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function countBy<T>(items: T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[key(i)] = (out[key(i)] ?? 0) + 1;
  return out;
}

describe('generateDemoData', () => {
  let data: DemoData;
  let active: ListingRow[];
  beforeAll(() => {
    data = generateDemoData({ now });
    active = data.listings.filter((l) => l.status === 'active');
  });

  it('is deterministic for a seed and differs for another', () => {
    expect(generateDemoData({ now })).toEqual(data);
    const other = generateDemoData({ now, seed: 7 });
    expect(other.listings.map((l) => l.id)).not.toEqual(data.listings.map((l) => l.id));
  });

  it('has at least 5,000 active listings in every one of the 100 communes', () => {
    expect(active.length).toBeGreaterThanOrEqual(5000);
    const perCommune = countBy(active, (l) => l.commune);
    const communes = readCommunes().map((c) => c.name);
    expect(communes).toHaveLength(100);
    const thin = communes.filter((c) => (perCommune[c] ?? 0) < 3);
    expect(thin, `communes with fewer than 3 active listings: ${thin.join(', ')}`).toEqual([]);
  });

  it('mixes the four listing types in roughly the intended shares', () => {
    const byType = countBy(active, (l) => l.listing_type);
    for (const t of LISTING_TYPES) expect(byType[t], t).toBeGreaterThan(0);
    expect(byType.RENT / active.length).toBeGreaterThan(0.5);
    expect(byType.SALE / active.length).toBeGreaterThan(0.18);
  });

  it('has agency sources and native posts, with stable ids and sane urls', () => {
    const agencies = data.sources.filter((s) => s.format !== 'native');
    expect(agencies.length).toBeGreaterThanOrEqual(4);
    expect(data.sources.map((s) => s.name)).toContain(NATIVE_SOURCE);
    for (const a of agencies) expect(active.some((l) => l.source === a.name), a.name).toBe(true);
    expect(data.importRuns.map((r) => r.source).sort()).toEqual(agencies.map((a) => a.name).sort());
    for (const r of data.importRuns) {
      expect(r.finished_at.getTime()).toBeLessThan(now.getTime());
      expect(r.started_at.getTime()).toBeLessThan(r.finished_at.getTime());
    }

    const bad = data.listings.filter(
      (l) =>
        l.id !== listingId(l.source, l.external_id) ||
        (l.source === NATIVE_SOURCE ? l.source_url !== null : !l.source_url?.startsWith(`https://www.${l.source}.example/`)) ||
        l.images.length > 6 ||
        l.images.some((img) => !img.startsWith(`https://img.${l.source}.example/`)),
    );
    expect(bad).toEqual([]);
    expect(new Set(data.listings.map((l) => l.id)).size).toBe(data.listings.length);
  });

  it('pairs every native listing with its post, typed in a way the gazetteer resolves', () => {
    const gazetteer = buildGazetteer(
      readCommunes(),
      readLocalities().map(({ lau2: _lau2, ...l }) => l),
    );
    const posts = new Map(data.nativePosts.map((p) => [p.id, p]));
    const native = data.listings.filter((l) => l.source === NATIVE_SOURCE);
    expect(native.length).toBeGreaterThanOrEqual(200);
    expect(posts.size).toBe(native.length);
    for (const l of native) {
      const p = posts.get(l.external_id)!;
      expect(p, l.external_id).toBeDefined();
      expect(p.id).toMatch(/^np_\d{6}$/);
      expect(p.status).toBe(l.status === 'active' ? 'published' : 'withdrawn');
      expect([p.price_eur, p.listing_type, p.title]).toEqual([l.price_eur, l.listing_type, l.title]);
      const place = gazetteer.resolve(p.commune_text);
      const commune = place?.kind === 'commune' ? place.commune : place?.communes[0];
      expect(commune, p.commune_text).toBe(l.commune);
    }
    expect(data.nativePosts.some((p) => p.commune_text !== native.find((l) => l.external_id === p.id)!.commune)).toBe(true);
  });

  it('has flagged listings of each flag, and gaps in area, rooms and coordinates', () => {
    for (const f of FLAGS) expect(active.filter((l) => l.flags.includes(f)).length, f).toBeGreaterThan(10);
    const age = (l: ListingRow) => now.getTime() - l.last_seen_at.getTime();
    expect(active.filter((l) => l.flags.includes('stale') && age(l) <= 14 * DAY)).toEqual([]);
    expect(active.filter((l) => !l.flags.includes('stale') && age(l) >= DAY)).toEqual([]);
    expect(active.filter((l) => l.lat === null).length).toBeGreaterThan(100);
    expect(active.filter((l) => l.area_m2 === null).length).toBeGreaterThan(100);
    expect(active.filter((l) => l.rooms === null).length).toBeGreaterThan(50);
    expect(data.listings.filter((l) => (l.lat === null) !== (l.lng === null))).toEqual([]);
  });

  it('keeps timestamps consistent and within the last 120 days', () => {
    const bad = data.listings.filter((l) => {
      const created = l.created_at.getTime();
      return (
        l.first_seen_at.getTime() !== created ||
        l.updated_at.getTime() < created ||
        l.last_seen_at.getTime() < created ||
        now.getTime() - created > 120 * DAY ||
        created >= now.getTime() ||
        (l.removed_at !== null) !== (l.status === 'inactive') ||
        (l.removed_at !== null && l.removed_at.getTime() < created)
      );
    });
    expect(bad).toEqual([]);
    expect(data.listings.filter((l) => l.status === 'inactive').length).toBeGreaterThanOrEqual(200);
  });

  it('merges duplicates into an active listing of another source with the same commune, type and area', () => {
    const byId = new Map(data.listings.map((l) => [l.id, l]));
    const merged = data.listings.filter((l) => l.status === 'merged');
    expect(merged.length).toBeGreaterThanOrEqual(80);
    for (const m of merged) {
      const t = byId.get(m.merged_into!)!;
      expect(t, m.id).toBeDefined();
      expect(t.status).toBe('active');
      expect(t.source).not.toBe(m.source);
      expect([t.commune, t.listing_type, t.area_m2]).toEqual([m.commune, m.listing_type, m.area_m2]);
    }
    for (const l of data.listings.filter((x) => x.status !== 'merged')) expect(l.merged_into).toBeNull();
  });

  it('prices rentals in line with the Observatoire figures (median EUR/m2 within 40 %)', () => {
    const perM2 = new Map<string, number[]>();
    for (const l of active) {
      if (l.listing_type !== 'RENT' || l.flags.length > 0 || !l.area_m2) continue;
      perM2.set(l.commune, [...(perM2.get(l.commune) ?? []), l.price_eur / l.area_m2]);
    }
    let checked = 0;
    for (const r of readDataCsv('rents.csv')) {
      const ref = Number(r.apt_rent_avg_eur_m2_month);
      const xs = perM2.get(r.commune) ?? [];
      if (!r.apt_rent_avg_eur_m2_month || xs.length < 20) continue;
      checked++;
      const ratio = median(xs) / ref;
      expect(ratio, `${r.commune}: median ${median(xs).toFixed(2)} vs ${ref}`).toBeGreaterThan(0.6);
      expect(ratio, `${r.commune}: median ${median(xs).toFixed(2)} vs ${ref}`).toBeLessThan(1.4);
    }
    expect(checked).toBeGreaterThanOrEqual(20);

    const flatshares = active.filter((l) => l.listing_type === 'FLATSHARE' && !l.flags.includes('price_outlier'));
    expect(flatshares.length).toBeGreaterThan(100);
    const odd = flatshares.filter((l) => l.price_eur < 600 || l.price_eur > 1100 || (l.area_m2 !== null && (l.area_m2 < 9 || l.area_m2 > 25)));
    expect(odd).toEqual([]);
  });

  it('gives Luxembourg City listings their quarter', () => {
    const quarters = new Set(readLocalities().filter((l) => l.kind === 'quartier_luxembourg_city').map((l) => l.locality));
    const city = active.filter((l) => l.commune === 'Luxembourg');
    expect(city.length).toBeGreaterThan(500);
    expect(city.filter((l) => !quarters.has(l.locality ?? ''))).toEqual([]);
    expect(new Set(city.map((l) => l.locality)).size).toBe(quarters.size);
  });
});

describe('seedDemo', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => t?.drop());

  async function counts() {
    const db = t.db;
    const byStatus = await db('listings').select('status').count<{ status: string; count: number }[]>('* as count').groupBy('status');
    const one = async (table: string) => Number((await db(table).count<{ c: number }[]>('* as c'))[0].c);
    return {
      byStatus: Object.fromEntries(byStatus.map((r) => [r.status, Number(r.count)])),
      listings: await one('listings'),
      nativePosts: await one('native_posts'),
      importRuns: await one('import_runs'),
      sources: await one('sources'),
      communes: await one('communes'),
    };
  }

  it('loads the generated data and gives the same result when run again', async () => {
    const data = generateDemoData({ now });
    const first = await seedDemo(t.db, { now });
    expect(first).toEqual({ active: data.listings.filter((l) => l.status === 'active').length, total: data.listings.length });
    const after1 = await counts();
    expect(after1).toEqual({
      byStatus: countBy(data.listings, (l) => l.status),
      listings: data.listings.length,
      nativePosts: data.nativePosts.length,
      importRuns: data.importRuns.length,
      sources: data.sources.length,
      communes: 100,
    });

    // Stored as written: jsonb images, text[] flags, the generated flagged column.
    const sample = data.listings.find((l) => l.images.length > 1 && l.flags.length > 0)!;
    const row = await t.db('listings').where({ id: sample.id }).first();
    expect(row.images).toEqual(sample.images);
    expect(row.flags).toEqual(sample.flags);
    expect(row.flagged).toBe(true);
    expect(row.created_at.toISOString()).toBe(sample.created_at.toISOString());

    const second = await seedDemo(t.db, { now });
    expect(second).toEqual(first);
    expect(await counts()).toEqual(after1);
  });
});
