import { listingId, NATIVE_SOURCE, type Flag, type ListingRow, type ListingType } from '../domain/listing.js';
import { readCommunes, readDataCsv, readLocalities, type CommuneRow, type LocalityRow } from '../reference/csv.js';
import { buildGazetteer, type Gazetteer } from '../reference/gazetteer.js';

// A realistic, reproducible demo data set: the same options always give the same rows
// (one seeded PRNG, no clock, no Math.random), so demos, screenshots and tests agree.
// Prices follow the Observatoire de l'Habitat figures in data/rents.csv.

export interface SourceRow {
  name: string;
  display_name: string;
  format: 'openimmo' | 'csv' | 'json' | 'native';
}

export interface NativePostRow {
  id: string;
  account_email: string;
  title: string;
  price_eur: number;
  area_m2: number | null;
  rooms: number | null;
  commune_text: string;
  lat: number | null;
  lng: number | null;
  listing_type: ListingType;
  accepts_students: boolean;
  images: string[];
  status: 'published' | 'withdrawn';
  created_at: Date;
  updated_at: Date;
}

export interface ImportRunRow {
  source: string;
  mode: 'full';
  status: 'ok';
  file_name: string;
  started_at: Date;
  finished_at: Date;
  counts: Record<string, number>;
  rejects: unknown[];
}

export interface DemoData {
  sources: SourceRow[];
  listings: ListingRow[];
  nativePosts: NativePostRow[];
  importRuns: ImportRunRow[];
}

export interface DemoOptions {
  now: Date;
  seed?: number;
  // Number of active listings; a few hundred inactive and merged ones come on top.
  listings?: number;
}

export const DEMO_DEFAULT_SEED = 20261122;
export const DEMO_DEFAULT_LISTINGS = 6000;

// Advertised national averages (rents.csv, "Moyenne nationale"), for communes without figures.
const NATIONAL = { aptRent: 42.53, houseRent: 19.46, aptSale: 9391, houseSale: 6054 };

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const MAX_AGE_DAYS = 120;
const MIN_PER_COMMUNE = 5;

type Lang = 'fr' | 'en' | 'de';
type Kind = 'studio' | 'apt1' | 'apt2' | 'apt3' | 'house' | 'room';

interface AgencySource extends SourceRow {
  urlPath: string;
  externalId: (n: number) => string;
  langs: Record<Lang, number>;
  // Regional agencies: weight per canton (default `elsewhere`).
  cantons: Record<string, number>;
  elsewhere: number;
}

const NORTH = ['Clervaux', 'Wiltz', 'Vianden', 'Diekirch'];

const AGENCIES: AgencySource[] = [
  {
    name: 'immo-nord',
    display_name: 'Immo Nord',
    format: 'openimmo',
    urlPath: 'annonce',
    externalId: (n) => `IN-${String(n).padStart(6, '0')}`,
    langs: { fr: 5, de: 4, en: 1 },
    cantons: { ...byCantons(NORTH, 5), Redange: 2, Mersch: 2 },
    elsewhere: 0.3,
  },
  {
    name: 'moselle-immo',
    display_name: 'Moselle Immo',
    format: 'csv',
    urlPath: 'angebot',
    externalId: (n) => `MI${n}`,
    langs: { de: 5, fr: 4, en: 1 },
    cantons: { Remich: 5, Grevenmacher: 5, Echternach: 3, Luxembourg: 1 },
    elsewhere: 0.4,
  },
  {
    name: 'capital-homes',
    display_name: 'Capital Homes',
    format: 'json',
    urlPath: 'listings',
    externalId: (n) => `ch-${((n * 2654435761) >>> 0).toString(16).padStart(8, '0')}`,
    langs: { en: 6, fr: 3, de: 1 },
    cantons: { Luxembourg: 5, Capellen: 2.5, Esch: 1.2, Mersch: 1 },
    elsewhere: 0.3,
  },
  {
    name: 'luxhome',
    display_name: 'LuxHome',
    format: 'csv',
    urlPath: 'bien',
    externalId: (n) => `LH${100000 + n}`,
    langs: { fr: 6, en: 2.5, de: 1.5 },
    cantons: {},
    elsewhere: 3,
  },
  {
    name: 'ardennes-immo',
    display_name: 'Ardennes Immo',
    format: 'openimmo',
    urlPath: 'offre',
    externalId: (n) => `ARD-2026-${String(n).padStart(5, '0')}`,
    langs: { fr: 6, de: 3.5, en: 0.5 },
    cantons: { ...byCantons(NORTH, 4), Redange: 3 },
    elsewhere: 0.2,
  },
];

const NATIVE: SourceRow = { name: NATIVE_SOURCE, display_name: 'Posted on this service', format: 'native' };
const NATIVE_LANGS: Record<Lang, number> = { fr: 4, en: 4, de: 2 };
// Private posters offer rooms and sublets far more often than whole homes for sale.
const NATIVE_SHARE: Record<ListingType, number> = { RENT: 0.03, SALE: 0.01, FLATSHARE: 0.3, SUBLET: 0.3 };

const TYPE_WEIGHTS: [ListingType, number][] = [
  ['RENT', 60],
  ['SALE', 25],
  ['FLATSHARE', 8],
  ['SUBLET', 7],
];

function byCantons(cantons: string[], w: number): Record<string, number> {
  return Object.fromEntries(cantons.map((c) => [c, w]));
}

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  private readonly next: () => number;
  constructor(seed: number) {
    this.next = mulberry32(seed);
  }
  float(): number {
    return this.next();
  }
  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
  weighted<T>(entries: readonly (readonly [T, number])[]): T {
    const total = entries.reduce((s, [, w]) => s + w, 0);
    let r = this.next() * total;
    for (const [item, w] of entries) {
      r -= w;
      if (r < 0) return item;
    }
    return entries[entries.length - 1][0];
  }
  // Standard normal (Box-Muller).
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }
}

interface Spot {
  locality: string | null;
  lat: number;
  lng: number;
  jitterM: number;
  weight: number;
  // Per-quarter figures (Luxembourg City); the commune's otherwise.
  aptRent?: number;
  aptSale?: number;
  houseSale?: number;
}

interface Place {
  commune: CommuneRow;
  aptRent: number;
  houseRent: number;
  aptSale: number;
  houseSale: number;
  rural: boolean;
  spots: Spot[];
  // How posters type the commune, each known to resolve back to it.
  typedNames: [string, number][];
}

interface Reference {
  communes: CommuneRow[];
  places: Map<string, Place>;
}

let reference: Reference | undefined;

function loadReference(): Reference {
  if (reference) return reference;
  const communes = readCommunes();
  const localities = readLocalities();
  const num = (s: string | undefined) => (s === undefined || s === '' ? undefined : Number(s));
  const rents = new Map(readDataCsv('rents.csv').map((r) => [r.commune, r]));
  const quartiers = new Map(readDataCsv('rents_luxembourg_city_quartiers.csv').map((r) => [r.quartier, r]));
  const gazetteer = buildGazetteer(
    communes.map((c) => ({ ...c })),
    localities.map(({ lau2: _lau2, ...l }) => l),
  );

  // Canton averages stand in for communes with too few ads to have a published figure.
  const cantonAvg = (field: string): Map<string, number> => {
    const acc = new Map<string, number[]>();
    for (const c of communes) {
      const v = num(rents.get(c.name)?.[field]);
      if (v !== undefined) acc.set(c.canton, [...(acc.get(c.canton) ?? []), v]);
    }
    return new Map([...acc].map(([k, vs]) => [k, vs.reduce((a, b) => a + b, 0) / vs.length]));
  };
  const avgAptRent = cantonAvg('apt_rent_avg_eur_m2_month');
  const avgAptSale = cantonAvg('apt_sale_advertised_avg_eur_m2');
  const avgHouseSale = cantonAvg('house_sale_advertised_avg_eur_m2');

  const places = new Map<string, Place>();
  for (const c of communes) {
    const r = rents.get(c.name);
    const aptRent = num(r?.apt_rent_avg_eur_m2_month) ?? avgAptRent.get(c.canton) ?? NATIONAL.aptRent;
    // Only four communes publish house rents; elsewhere follow the apartment level, within reason.
    const houseRent =
      num(r?.house_rent_avg_eur_m2_month) ?? NATIONAL.houseRent * Math.min(1.3, Math.max(0.75, aptRent / NATIONAL.aptRent));
    const place: Place = {
      commune: c,
      aptRent,
      houseRent,
      aptSale: num(r?.apt_sale_advertised_avg_eur_m2) ?? avgAptSale.get(c.canton) ?? NATIONAL.aptSale,
      houseSale: num(r?.house_sale_advertised_avg_eur_m2) ?? avgHouseSale.get(c.canton) ?? NATIONAL.houseSale,
      rural: (c.population ?? 0) < 6000,
      spots: [],
      typedNames: [],
    };
    const own = localities.filter((l) => l.commune === c.name);
    if (c.name === 'Luxembourg') {
      for (const q of own.filter((l) => l.kind === 'quartier_luxembourg_city')) {
        const qr = quartiers.get(q.locality);
        place.spots.push({
          ...spotOf(q, c, 350),
          // The big residential quarters carry more of the market.
          weight: ['Kirchberg', 'Gare', 'Belair', 'Limpertsberg', 'Bonnevoie-Nord / Verlorenkost', 'Bonnevoie-Sud', 'Gasperich'].includes(q.locality)
            ? 2
            : 1,
          aptRent: num(qr?.apt_rent_avg_eur_m2_month),
          aptSale: num(qr?.apt_sale_advertised_avg_eur_m2),
          houseSale: num(qr?.house_sale_advertised_avg_eur_m2),
        });
      }
    } else {
      for (const l of own) {
        const main = l.locality === c.name;
        place.spots.push({ ...spotOf(l, c, 400), locality: main ? null : l.locality, weight: main ? 3 : 1 });
      }
    }
    if (place.spots.length === 0) place.spots.push({ locality: null, lat: c.lat, lng: c.lng, jitterM: 800, weight: 1 });
    place.typedNames = typedNames(c, own, gazetteer);
    places.set(c.name, place);
  }
  reference = { communes, places };
  return reference;
}

function spotOf(l: LocalityRow, c: CommuneRow, jitterM: number): Spot {
  // A locality without a point falls back to the commune's centre, spread wider.
  return l.lat !== null && l.lng !== null
    ? { locality: l.locality, lat: l.lat, lng: l.lng, jitterM, weight: 1 }
    : { locality: l.locality, lat: c.lat, lng: c.lng, jitterM: 900, weight: 1 };
}

const TYPED_ALIASES: Record<string, string[]> = {
  Luxembourg: ['Lëtzebuerg', 'Luxembourg-Ville', 'Luxemburg', 'Luxembourg City', 'luxembourg ville'],
  'Esch-sur-Alzette': ['Esch/Alzette', 'Esch-Alzette', 'Esch'],
  'Redange/Attert': ['Redange', 'Redange-sur-Attert'],
  'Mondorf-les-Bains': ['Mondorf'],
};

function typedNames(c: CommuneRow, own: LocalityRow[], gazetteer: Gazetteer): [string, number][] {
  const candidates: [string, number][] = [
    [c.name, 8],
    [c.name.toLowerCase(), 1],
    [c.name.toUpperCase(), 0.5],
    [c.name_lb, 2],
    [c.name_de, 1],
    ...(TYPED_ALIASES[c.name] ?? []).map((n): [string, number] => [n, 1.5]),
    ...own.filter((l) => l.locality !== c.name && l.kind === 'locality').slice(0, 3).map((l): [string, number] => [l.locality, 0.7]),
  ];
  const seen = new Set<string>();
  const ok = candidates.filter(([name]) => {
    if (seen.has(name)) return false;
    seen.add(name);
    const place = gazetteer.resolve(name);
    return place?.kind === 'commune' ? place.commune === c.name : place?.kind === 'locality' && place.communes.length === 1 && place.communes[0] === c.name;
  });
  return ok.length ? ok : [[c.name, 1]];
}

interface Property {
  kind: Kind;
  area: number;
  rooms: number;
  price: number;
}

const KIND_RANGES: Record<Kind, [number, number]> = {
  studio: [25, 40],
  apt1: [40, 65],
  apt2: [62, 95],
  apt3: [88, 135],
  house: [120, 260],
  room: [9, 25],
};

function kindWeights(type: ListingType, place: Place): [Kind, number][] {
  const city = place.commune.name === 'Luxembourg';
  switch (type) {
    case 'RENT':
      return [
        ['studio', city ? 26 : 18],
        ['apt1', 34],
        ['apt2', 27],
        ['apt3', 11],
        ['house', place.rural ? 18 : 6],
      ];
    case 'SUBLET':
      return [
        ['studio', 50],
        ['apt1', 35],
        ['apt2', 15],
      ];
    case 'SALE':
      return [
        ['studio', 6],
        ['apt1', 20],
        ['apt2', 27],
        ['apt3', 14],
        ['house', place.rural ? 60 : city ? 12 : 33],
      ];
    case 'FLATSHARE':
      return [['room', 1]];
  }
}

function makeProperty(rng: Rng, type: ListingType, place: Place, spot: Spot): Property {
  const kind = rng.weighted(kindWeights(type, place));
  const [lo, hi] = KIND_RANGES[kind];
  // Triangular: most homes sit mid-range.
  const area = Math.round(lo + (hi - lo) * ((rng.float() + rng.float()) / 2));
  const rooms = kind === 'studio' || kind === 'room' ? 1 : kind === 'apt1' ? 2 : kind === 'apt2' ? 3 : kind === 'apt3' ? 4 : 5 + Math.floor((area - 120) / 45);
  const noise = (sd: number) => Math.exp(sd * rng.normal());
  let price: number;
  if (type === 'FLATSHARE') {
    // 600-1,100 EUR: mostly the room's size, then the commune's rent level, then luck.
    const size = (area - 9) / 16;
    const level = Math.min(1, Math.max(0, ((spot.aptRent ?? place.aptRent) - 18) / 36));
    const mix = 0.5 * size + 0.3 * level + 0.2 * rng.float();
    price = roundTo(600 + 500 * Math.min(1, Math.max(0, mix)), 10);
  } else if (type === 'SALE') {
    const rate = kind === 'house' ? (spot.houseSale ?? place.houseSale) : (spot.aptSale ?? place.aptSale);
    const raw = rate * area * noise(0.14);
    price = roundTo(raw, raw >= 1_000_000 ? 5000 : 1000);
  } else {
    const rate = kind === 'house' ? place.houseRent : (spot.aptRent ?? place.aptRent);
    // Small flats cost more per m2, as in the Observatoire's figures.
    const sizeFactor = kind === 'house' ? 1 : Math.pow(area / 62, -0.18);
    const furnished = type === 'SUBLET' ? rng.between(1.0, 1.12) : 1;
    price = roundTo(rate * area * sizeFactor * furnished * noise(0.12), 10);
  }
  return { kind, area, rooms, price };
}

function roundTo(v: number, step: number): number {
  return Math.max(step, Math.round(v / step) * step);
}

const ADJ: Record<Lang, string[]> = {
  fr: ['lumineux', 'rénové', 'moderne', 'spacieux', 'neuf', 'calme'],
  en: ['Bright', 'Renovated', 'Modern', 'Spacious', 'New', 'Quiet'],
  de: ['Helle', 'Renovierte', 'Moderne', 'Geräumige', 'Neue', 'Ruhige'],
};
const EXTRA: Record<Lang, string[]> = {
  fr: ['avec balcon', 'avec terrasse', 'proche gare', 'avec parking', 'meublé', 'près du tram'],
  en: ['with balcony', 'with terrace', 'near the station', 'with parking', 'furnished', 'near the tram'],
  de: ['mit Balkon', 'mit Terrasse', 'nahe Bahnhof', 'mit Stellplatz', 'möbliert', 'nahe Tram'],
};

function makeTitle(rng: Rng, lang: Lang, type: ListingType, kind: Kind, rooms: number, placeName: string, city: boolean): string {
  const beds = rooms - 1;
  // Only the capital has a tram.
  const extras = city ? EXTRA[lang] : EXTRA[lang].filter((e) => !/tram/i.test(e));
  const extra = rng.chance(0.45) ? ' ' + rng.pick(extras) : '';
  let core: string;
  if (lang === 'fr') {
    const plural = beds > 1 ? 's' : '';
    core =
      kind === 'room'
        ? rng.pick([`Chambre en colocation à ${placeName}`, `Colocation : chambre meublée à ${placeName}`, `Chambre dans colocation ${placeName}`])
        : kind === 'studio'
          ? `Studio ${rng.pick(ADJ.fr)}${extra} à ${placeName}`
          : kind === 'house'
            ? rng.pick([`Maison ${beds} chambres${extra} à ${placeName}`, `Maison avec jardin à ${placeName}`])
            : `Appartement ${beds} chambre${plural}${extra} à ${placeName}`;
    if (type === 'SALE') core = rng.chance(0.5) ? `À vendre : ${core}` : core;
    if (type === 'SUBLET') core = `Sous-location : ${core}`;
    if (type === 'RENT' && rng.chance(0.3)) core = `À louer : ${core}`;
  } else if (lang === 'en') {
    core =
      kind === 'room'
        ? rng.pick([`Room in shared flat – ${placeName}`, `Furnished room in flatshare, ${placeName}`, `Flatshare room in ${placeName}`])
        : kind === 'studio'
          ? `${rng.pick(ADJ.en)} studio${extra} in ${placeName}`
          : kind === 'house'
            ? rng.pick([`${beds}-bedroom house${extra} in ${placeName}`, `Family house with garden in ${placeName}`])
            : `${rng.pick(ADJ.en)} ${beds}-bedroom apartment${extra} in ${placeName}`;
    if (type === 'SALE') core = `For sale: ${core}`;
    if (type === 'SUBLET') core = `Sublet: ${core}`;
  } else {
    core =
      kind === 'room'
        ? rng.pick([`WG-Zimmer in ${placeName}`, `Möbliertes Zimmer in Wohngemeinschaft, ${placeName}`])
        : kind === 'studio'
          ? `${rng.pick(['Möbliertes', 'Helles', 'Modernes'])} Studio${extra} in ${placeName}`
          : kind === 'house'
            ? rng.pick([`Einfamilienhaus${extra} in ${placeName}`, `Haus mit ${beds} Schlafzimmern in ${placeName}`])
            : `${rng.pick(ADJ.de)} ${rooms}-Zimmer-Wohnung${extra} in ${placeName}`;
    if (type === 'SALE') core = `Zu verkaufen: ${core}`;
    if (type === 'SUBLET') core = `Untermiete: ${core}`;
  }
  return core;
}

const FIRST_NAMES = ['marie', 'laura', 'tom', 'luc', 'sarah', 'paul', 'anne', 'max', 'lea', 'noah', 'julie', 'ben', 'sofia', 'mia', 'jeff', 'claude', 'ana', 'joao', 'marco', 'elena'];
const LAST_NAMES = ['schmit', 'muller', 'weber', 'hoffmann', 'wagner', 'thill', 'schroeder', 'reuter', 'klein', 'kremer', 'faber', 'schneider', 'meyer', 'becker', 'da.silva', 'ferreira'];
const MAIL_DOMAINS = ['example.lu', 'example.com', 'mail.example'];

interface Draft {
  row: ListingRow;
  kind: Kind;
  lang: Lang;
  post?: NativePostRow;
}

export function generateDemoData(opts: DemoOptions): DemoData {
  const ref = loadReference();
  const rng = new Rng(opts.seed ?? DEMO_DEFAULT_SEED);
  const now = opts.now.getTime();
  const activeTarget = Math.max(1, Math.floor(opts.listings ?? DEMO_DEFAULT_LISTINGS));
  const duplicateN = Math.round(activeTarget * 0.02);
  const primaryActiveN = activeTarget - duplicateN;
  const inactiveN = Math.round(activeTarget * 0.05);
  const mergedN = Math.round(activeTarget / 60);

  // Each agency's latest full import ran a little before `now`; what it saw then is
  // what "last seen" means for its listings.
  const runs = new Map<string, { started: number; finished: number }>();
  for (const a of AGENCIES) {
    const finished = now - Math.round(rng.between(15 * 60_000, 2 * HOUR));
    runs.set(a.name, { started: finished - Math.round(rng.between(4_000, 90_000)), finished });
  }
  const counters = new Map<string, number>();
  const nextExternalId = (source: string): string => {
    const n = (counters.get(source) ?? 0) + (source === NATIVE_SOURCE ? 1 : rng.int(1, 7));
    counters.set(source, n);
    if (source === NATIVE_SOURCE) return `np_${String(n).padStart(6, '0')}`;
    return AGENCIES.find((a) => a.name === source)!.externalId(n);
  };

  const pickSource = (place: Place, type: ListingType): string => {
    const agencies = AGENCIES.map((a): [string, number] => [a.name, a.cantons[place.commune.canton] ?? a.elsewhere]);
    const agencyTotal = agencies.reduce((s, [, w]) => s + w, 0);
    const share = NATIVE_SHARE[type];
    return rng.weighted([...agencies, [NATIVE_SOURCE, (agencyTotal * share) / (1 - share)]]);
  };

  const jitter = (lat: number, lng: number, metres: number): [number, number] => {
    const r = metres * Math.sqrt(rng.float());
    const theta = 2 * Math.PI * rng.float();
    const dLat = (r * Math.cos(theta)) / 111_320;
    const dLng = (r * Math.sin(theta)) / (111_320 * Math.cos((lat * Math.PI) / 180));
    return [round5(lat + dLat), round5(lng + dLng)];
  };

  const images = (source: string, externalId: string): string[] => {
    const n = rng.weighted([
      [0, 8],
      [1, 10],
      [2, 14],
      [3, 20],
      [4, 20],
      [5, 15],
      [6, 13],
    ] as const);
    const slug = externalId.toLowerCase();
    return Array.from({ length: n }, (_, i) => `https://img.${source}.example/${slug}/${i + 1}.jpg`);
  };

  const langFor = (source: string): Lang => {
    const langs = AGENCIES.find((a) => a.name === source)?.langs ?? NATIVE_LANGS;
    return rng.weighted(Object.entries(langs) as [Lang, number][]);
  };

  const placeName = (place: Place, spot: Spot): string => {
    if (!spot.locality) return place.commune.name;
    if (place.commune.name === 'Luxembourg') return rng.chance(0.5) ? `Luxembourg-${spot.locality}` : spot.locality;
    return spot.locality;
  };

  // Recent listings are more numerous: older ones have been let or sold.
  const createdAgo = (maxDays: number, minMs: number): number => minMs + Math.pow(rng.float(), 1.25) * (maxDays * DAY - minMs);

  interface Status {
    status: ListingRow['status'];
    removedAt?: number;
  }

  const makeDraft = (place: Place, type: ListingType, source: string, st: Status): Draft => {
    const spot = rng.weighted(place.spots.map((s): [Spot, number] => [s, s.weight]));
    const prop = makeProperty(rng, type, place, spot);
    const flags: Flag[] = [];
    const active = st.status === 'active';
    if (active && rng.chance(0.03)) {
      flags.push('price_outlier');
      // Clearly off: a missing zero, a sale price typed as a rent, or the other way round.
      prop.price = Math.max(1, Math.round(prop.price * (rng.chance(0.5) ? rng.between(0.22, 0.4) : rng.between(2.6, 4.5))));
    }
    const stale = active && source !== NATIVE_SOURCE && rng.chance(0.01);
    if (stale) flags.push('stale');

    const externalId = nextExternalId(source);
    const lang = langFor(source);
    const title = makeTitle(rng, lang, type, prop.kind, prop.rooms, placeName(place, spot), place.commune.name === 'Luxembourg');

    let createdAt: number;
    let lastSeen: number;
    let removedAt: number | null = null;
    if (st.status === 'inactive') {
      createdAt = now - createdAgo(MAX_AGE_DAYS, 3 * DAY);
      removedAt = Math.round(rng.between(createdAt + DAY, now - HOUR));
      lastSeen = Math.max(createdAt, removedAt - Math.round(rng.between(0, DAY)));
    } else if (stale) {
      lastSeen = now - Math.round(rng.between(15 * DAY, 45 * DAY));
      createdAt = lastSeen - Math.round(rng.between(DAY, lastSeen - (now - MAX_AGE_DAYS * DAY)));
    } else {
      createdAt = now - createdAgo(MAX_AGE_DAYS, 3 * HOUR);
      lastSeen = source === NATIVE_SOURCE ? now - Math.round(rng.between(60_000, 90 * 60_000)) : runs.get(source)!.finished;
    }
    createdAt = Math.round(createdAt);
    const updatedAt = removedAt ?? (rng.chance(0.4) ? createdAt : Math.round(rng.between(createdAt, lastSeen)));

    const [lat, lng] = jitter(spot.lat, spot.lng, spot.jitterM);
    const noCoords = rng.chance(0.11);
    const noArea = rng.chance(type === 'FLATSHARE' ? 0.04 : 0.09);
    const noRooms = rng.chance(noArea ? 0.3 : 0.05);
    const row: ListingRow = {
      id: listingId(source, externalId),
      source,
      external_id: externalId,
      title,
      price_eur: prop.price,
      area_m2: noArea ? null : prop.area,
      rooms: noRooms ? null : prop.rooms,
      commune: place.commune.name,
      locality: spot.locality,
      lat: noCoords ? null : lat,
      lng: noCoords ? null : lng,
      listing_type: type,
      accepts_students: rng.chance(type === 'FLATSHARE' ? 0.3 : 0.05),
      images: images(source, externalId),
      source_url: source === NATIVE_SOURCE ? null : `https://www.${source}.example/${AGENCIES.find((a) => a.name === source)!.urlPath}/${externalId}`,
      status: st.status,
      merged_into: null,
      flags,
      created_at: new Date(createdAt),
      updated_at: new Date(updatedAt),
      first_seen_at: new Date(createdAt),
      last_seen_at: new Date(lastSeen),
      removed_at: removedAt === null ? null : new Date(removedAt),
    };
    const draft: Draft = { row, kind: prop.kind, lang };
    if (source === NATIVE_SOURCE) draft.post = nativePost(row, place);
    return draft;
  };

  const nativePost = (row: ListingRow, place: Place): NativePostRow => ({
    id: row.external_id,
    account_email: `${rng.pick(FIRST_NAMES)}.${rng.pick(LAST_NAMES)}${rng.chance(0.4) ? rng.int(1, 99) : ''}@${rng.pick(MAIL_DOMAINS)}`,
    title: row.title,
    price_eur: row.price_eur,
    area_m2: row.area_m2,
    rooms: row.rooms,
    commune_text: rng.weighted(place.typedNames),
    lat: row.lat,
    lng: row.lng,
    listing_type: row.listing_type,
    accepts_students: row.accepts_students,
    images: row.images,
    status: row.status === 'active' ? 'published' : 'withdrawn',
    created_at: row.created_at,
    updated_at: row.updated_at,
  });

  const drafts: Draft[] = [];
  const typeOf = () => rng.weighted(TYPE_WEIGHTS);

  // Active listings: a floor in every commune, the rest by population.
  for (const communeName of allocate(rng, ref.communes, primaryActiveN)) {
    const place = ref.places.get(communeName)!;
    const type = typeOf();
    drafts.push(makeDraft(place, type, pickSource(place, type), { status: 'active' }));
  }
  for (let i = 0; i < inactiveN; i++) {
    const place = ref.places.get(rng.weighted(ref.communes.map((c): [string, number] => [c.name, c.population ?? 1])))!;
    const type = typeOf();
    drafts.push(makeDraft(place, type, pickSource(place, type), { status: 'inactive' }));
  }

  // Copies of an agency listing seen through another agency: the merged ones are sure
  // duplicates (hidden, pointing at the public one), the flagged ones only look alike.
  const candidates = rng.shuffle(
    drafts.filter((d) => d.row.status === 'active' && d.row.source !== NATIVE_SOURCE && d.row.flags.length === 0 && d.row.area_m2 !== null),
  );
  const copyOf = (target: Draft, status: 'merged' | 'active'): Draft => {
    const t = target.row;
    const source = rng.pick(AGENCIES.filter((a) => a.name !== t.source)).name;
    const externalId = nextExternalId(source);
    const lang = langFor(source);
    const merged = status === 'merged';
    const [lo, hi] = KIND_RANGES[target.kind];
    const area = merged ? t.area_m2 : Math.min(hi, Math.max(lo, (t.area_m2 ?? lo) + rng.int(-3, 3)));
    const price = roundTo(t.price_eur * (merged ? rng.between(0.98, 1.03) : rng.between(0.92, 1.08)), t.listing_type === 'SALE' ? 1000 : 10);
    const createdAt = Math.min(now - 3 * HOUR, Math.max(now - MAX_AGE_DAYS * DAY, t.created_at.getTime() + Math.round(rng.between(-5 * DAY, 5 * DAY))));
    const lastSeen = runs.get(source)!.finished;
    const coords = t.lat !== null && t.lng !== null && rng.chance(0.9) ? jitter(t.lat, t.lng, 60) : null;
    const row: ListingRow = {
      ...t,
      id: listingId(source, externalId),
      source,
      external_id: externalId,
      title: makeTitle(rng, lang, t.listing_type, target.kind, t.rooms ?? 2, t.locality ?? t.commune, t.commune === 'Luxembourg'),
      price_eur: price,
      area_m2: area,
      lat: coords ? coords[0] : null,
      lng: coords ? coords[1] : null,
      images: images(source, externalId),
      source_url: `https://www.${source}.example/${AGENCIES.find((a) => a.name === source)!.urlPath}/${externalId}`,
      status,
      merged_into: merged ? t.id : null,
      flags: merged ? [] : ['possible_duplicate'],
      created_at: new Date(createdAt),
      updated_at: new Date(Math.max(createdAt, rng.chance(0.5) ? createdAt : Math.round(rng.between(createdAt, lastSeen)))),
      first_seen_at: new Date(createdAt),
      last_seen_at: new Date(lastSeen),
      removed_at: null,
    };
    return { row, kind: target.kind, lang };
  };
  const copies: Draft[] = [];
  for (let i = 0; i < duplicateN + mergedN && i < candidates.length; i++) {
    copies.push(copyOf(candidates[i], i < duplicateN ? 'active' : 'merged'));
  }
  // Merged rows last: they reference their target, which must be written first.
  copies.sort((a, b) => (a.row.status === b.row.status ? 0 : a.row.status === 'merged' ? 1 : -1));
  drafts.push(...copies);

  const listings = drafts.map((d) => d.row);
  const nativePosts = drafts.filter((d) => d.post).map((d) => d.post!);

  const importRuns: ImportRunRow[] = AGENCIES.map((a) => {
    const run = runs.get(a.name)!;
    const mine = listings.filter((l) => l.source === a.name);
    const since = run.started - DAY;
    const seen = mine.filter((l) => l.status !== 'inactive' && !l.flags.includes('stale'));
    const created = seen.filter((l) => l.first_seen_at.getTime() > since).length;
    const updated = seen.filter((l) => l.first_seen_at.getTime() <= since && l.updated_at.getTime() > since).length;
    const rejected = rng.int(0, 4);
    const ext = a.format === 'openimmo' ? 'xml' : a.format;
    return {
      source: a.name,
      mode: 'full',
      status: 'ok',
      file_name: `${a.name}-${new Date(run.started).toISOString().slice(0, 10)}.${ext}`,
      started_at: new Date(run.started),
      finished_at: new Date(run.finished),
      counts: {
        received: seen.length + rejected,
        created,
        updated,
        unchanged: seen.length - created - updated,
        removed: mine.filter((l) => l.removed_at && l.removed_at.getTime() > since).length,
        merged: seen.filter((l) => l.status === 'merged').length,
        rejected,
      },
      rejects: [],
    };
  });

  return {
    sources: [...AGENCIES.map(({ name, display_name, format }) => ({ name, display_name, format })), NATIVE],
    listings,
    nativePosts,
    importRuns,
  };
}

// Commune of each active listing, in random order: MIN_PER_COMMUNE everywhere, the rest
// shared by population (largest remainders, so the split is exact).
function allocate(rng: Rng, communes: CommuneRow[], n: number): string[] {
  const floor = Math.min(MIN_PER_COMMUNE, Math.floor(n / communes.length));
  const rest = n - floor * communes.length;
  const totalPop = communes.reduce((s, c) => s + (c.population ?? 0), 0);
  const shares = communes.map((c) => {
    const exact = (rest * (c.population ?? 0)) / totalPop;
    return { name: c.name, count: Math.floor(exact), frac: exact - Math.floor(exact) };
  });
  let left = rest - shares.reduce((s, x) => s + x.count, 0);
  for (const s of [...shares].sort((a, b) => b.frac - a.frac || a.name.localeCompare(b.name))) {
    if (left-- <= 0) break;
    s.count++;
  }
  const out: string[] = [];
  for (const s of shares) for (let i = 0; i < floor + s.count; i++) out.push(s.name);
  return rng.shuffle(out);
}

function round5(x: number): number {
  return Math.round(x * 1e5) / 1e5;
}
