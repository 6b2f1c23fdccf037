import type { Gazetteer } from '../../src/reference/gazetteer.js';

// A generated market with known truth, for deduplication tests and the benchmark:
// properties in real localities, each listed by one agency or by two or three (with the
// noise of real feeds: rounded areas, slightly different prices, coordinates missing or
// a few tens of metres off, a missing locality, titles in other languages), plus the hard
// negatives: flats of the same size in one new building at different prices, and
// neighbouring flats on different floors with different sizes and prices.

// The same seeded generator as the demo data.
import { mulberry32 as rng } from '../../src/demo/random.js';

export { rng };

export interface Property {
  key: string;
  type: 'rent' | 'sale';
  commune: string;
  locality: string;
  lat: number;
  lng: number;
  area: number;
  rooms: number;
  price: number;
}

export interface GeneratedSet {
  // source -> JSON feed
  feeds: Map<string, { mode: 'full'; listings: Record<string, unknown>[] }>;
  // `${source}\u0000${ref}` -> property key
  truth: Map<string, string>;
  properties: number;
  hardNegatives: number;
}

export const AGENCIES = ['agence-alpha', 'beta-immo', 'gamma-homes', 'delta-realty'];

export function generateSet(gz: Gazetteer, opts: { properties: number; seed: number; duplicateShare?: number }): GeneratedSet {
  const rand = rng(opts.seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  const places = gz.communes
    .flatMap((c) => gz.localitiesOf(c.name).filter((l) => l.lat !== null && l.locality !== c.name))
    // Names several communes share would need a postcode; this set is about duplicates.
    .filter((l) => { const p = gz.resolve(l.locality); return p?.kind === 'locality' && p.communes.length === 1; })
    .filter((_, i) => i % 9 === 0);
  const jitterKm = (lat: number, lng: number, km: number) => {
    const r = km * Math.sqrt(rand());
    const th = rand() * 2 * Math.PI;
    return { lat: lat + (r * Math.cos(th)) / 111.2, lng: lng + (r * Math.sin(th)) / (111.2 * Math.cos((lat * Math.PI) / 180)) };
  };

  const props: Property[] = [];
  let hardNegatives = 0;
  const newProperty = (): Property => {
    const place = pick(places);
    const p = jitterKm(place.lat!, place.lng!, 1.2);
    const type = rand() < 0.8 ? 'rent' : 'sale';
    const area = Math.round((25 + rand() * 130) * 2) / 2;
    const rooms = Math.max(1, Math.min(7, Math.round(area / 28 + rand())));
    const ppm = (type === 'rent' ? 28 : 9500) * (0.75 + rand() * 0.5);
    const price = type === 'rent' ? Math.round((area * ppm) / 10) * 10 : Math.round((area * ppm) / 1000) * 1000;
    return { key: `P${props.length}`, type, commune: place.commune, locality: place.locality, ...p, area, rooms, price };
  };
  while (props.length < opts.properties) {
    const p = newProperty();
    props.push(p);
    const roll = rand();
    if (roll < 0.1 && props.length < opts.properties) {
      // Same size in the same new building, another floor: a few per cent dearer or cheaper.
      const sign = rand() < 0.5 ? -1 : 1;
      const price = Math.round((p.price * (1 + sign * (0.04 + rand() * 0.08))) / 10) * 10;
      props.push({ ...p, key: `P${props.length}`, ...jitterKm(p.lat, p.lng, 0.02), price });
      hardNegatives++;
    } else if (roll < 0.18 && props.length < opts.properties) {
      // The flat next door: a little larger or smaller, another price.
      const area = Math.round(p.area * (1 + (rand() < 0.5 ? -1 : 1) * (0.02 + rand() * 0.06)) * 2) / 2;
      const price = Math.round((p.price * (1 + (rand() < 0.5 ? -1 : 1) * (0.05 + rand() * 0.15))) / 10) * 10;
      props.push({ ...p, key: `P${props.length}`, ...jitterKm(p.lat, p.lng, 0.03), area, price });
      hardNegatives++;
    }
  }

  const feeds = new Map<string, { mode: 'full'; listings: Record<string, unknown>[] }>();
  for (const a of AGENCIES) feeds.set(a, { mode: 'full', listings: [] });
  const truth = new Map<string, string>();
  const dupShare = opts.duplicateShare ?? 0.15;
  let n = 0;
  for (const p of props) {
    const roll = rand();
    const count = roll < dupShare * 0.7 ? 2 : roll < dupShare ? 3 : 1;
    const agencies = [...AGENCIES].sort(() => rand() - 0.5).slice(0, count);
    for (const source of agencies) {
      const ref = `${source.slice(0, 2).toUpperCase()}-${++n}`;
      truth.set(`${source}\u0000${ref}`, p.key);
      const dup = count > 1;
      const priceNoise = !dup ? 0 : rand() < 0.6 ? 0 : rand() < 0.75 ? (rand() - 0.5) * 0.02 : (rand() - 0.5) * 0.05;
      const price = Math.round(p.price * (1 + priceNoise));
      const area = dup && rand() < 0.3 ? Math.round(p.area) : p.area;
      const coords = rand() < 0.2 ? null : jitterKm(p.lat, p.lng, 0.04);
      const locality = rand() < 0.05 ? p.commune : p.locality;
      const lang = pick(['en', 'fr', 'de']);
      const words = { en: 'Flat', fr: 'Appartement', de: 'Wohnung' }[lang];
      feeds.get(source)!.listings.push({
        ref,
        offer: p.type,
        status: 'available',
        title: { [lang]: `${words} ${p.rooms}, ${p.locality}` },
        price: { amount: price, currency: 'EUR', period: 'month' },
        surface_m2: area,
        rooms: rand() < 0.1 ? undefined : p.rooms,
        address: { locality, country: 'LU' },
        geo: coords ? { lat: Number(coords.lat.toFixed(6)), lon: Number(coords.lng.toFixed(6)) } : null,
        media: [{ type: 'photo', url: `https://img.${source}.example/${ref}/1.jpg` }],
        students: false,
        published_at: new Date(Date.UTC(2026, 9, 1) + Math.floor(rand() * 40 * 86_400_000)).toISOString(),
        link: `https://${source}.example/${ref}`,
      });
    }
  }
  return { feeds, truth, properties: props.length, hardNegatives };
}

// Pairwise precision and recall of the merge decisions against the truth: a pair of
// listings is "predicted the same" when they end in one group (same public listing).
export function pairScores(groupOf: Map<string, string>, truth: Map<string, string>): { precision: number; recall: number; tp: number; fp: number; fn: number } {
  const byGroup = new Map<string, string[]>();
  const byTruth = new Map<string, string[]>();
  for (const [k, g] of groupOf) {
    byGroup.set(g, [...(byGroup.get(g) ?? []), k]);
    const t = truth.get(k)!;
    byTruth.set(t, [...(byTruth.get(t) ?? []), k]);
  }
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const members of byGroup.values()) {
    for (let i = 0; i < members.length; i++)
      for (let j = i + 1; j < members.length; j++) {
        if (truth.get(members[i]) === truth.get(members[j])) tp++;
        else fp++;
      }
  }
  for (const members of byTruth.values()) {
    for (let i = 0; i < members.length; i++)
      for (let j = i + 1; j < members.length; j++) if (groupOf.get(members[i]) !== groupOf.get(members[j])) fn++;
  }
  return { precision: tp + fp === 0 ? 1 : tp / (tp + fp), recall: tp + fn === 0 ? 1 : tp / (tp + fn), tp, fp, fn };
}
