import { NATIVE_SOURCE, type ListingType } from '../domain/listing.js';
import { resolvePlace } from '../ingest/place.js';
import { AGENCIES, AGENCY_BY_NAME, NATIVE, NATIVE_SHARE, type Agency, type Lang, type RoomsMode } from './agencies.js';
import { placeText, type PlaceText } from './place-text.js';
import { allocate, jitter, type Kind, makeProperty, roundPrice } from './properties.js';
import { Rng } from './random.js';
import { loadReference, type Place, type Reference, type Spot } from './reference.js';
import { makeTitle } from './titles.js';

// The demo market: real-world PROPERTIES (flats, houses, rooms) in the communes of the
// reference data, priced after data/rents.csv, each on offer for a while, and the COPIES
// of each property that agencies and private posters publish: most properties have one
// copy, about 15 % have two or three, each with its agency's own habits (rounding, prices
// a little off, coordinates a few metres apart or missing, titles in another language,
// places written their way). The feed files are rendered from the copies (render.ts).
// The properties themselves come from properties.ts, the places as written from
// place-text.ts, the titles from titles.ts.

// A record a feed cannot turn into a listing (docs/feed-formats.md: rejected, counted, never
// half-filled).
export type Problem = 'currency' | 'commune' | 'country' | 'price' | 'area' | 'offer' | 'columns';

export interface Copy {
  property: string;
  source: string;
  // The agency's reference; its number orders the records of a file.
  externalId: string;
  seq: number;
  listedAt: number;
  lang: Lang;
  title: string;
  // A second language version of the title (json title objects).
  altTitle: { lang: Lang; text: string } | null;
  // The agency's price is the property's times this (then rounded the agency's way).
  priceFactor: number;
  area: number | null;
  rooms: RoomsMode;
  // As the agency gives them: perhaps swapped, perhaps (0, 0).
  coords: { lat: number; lng: number } | null;
  place: PlaceText;
  imageCount: number;
  attachment: 'floorplan' | 'video' | null;
  problem: Problem | null;
  // Seed of the copy's formatting choices: the same in every delivery.
  style: number;
}

export interface DemoProperty {
  key: string;
  type: ListingType;
  kind: Kind;
  commune: string;
  locality: string | null;
  lat: number;
  lng: number;
  area: number;
  rooms: number;
  price: number;
  // The price before a cut at priceChangedAt.
  oldPrice: number | null;
  priceChangedAt: number | null;
  listedAt: number;
  // Let or sold: no longer on offer from then on.
  removedAt: number | null;
  students: boolean;
  copies: Copy[];
}

export interface Market {
  properties: DemoProperty[];
  // Records with a problem, one synthetic property each (not part of the market).
  junk: DemoProperty[];
}

export interface MarketOptions {
  now: number;
  seed: number;
  // Properties on offer at `now`.
  listings: number;
}

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const MAX_AGE_DAYS = 120;
// About 15 % of properties are listed by a second source, a fifth of those by a third.
const SECOND_COPY = 0.15;
const THIRD_COPY = 0.22;
// Properties let or sold since the older snapshots, as a share of those on offer now.
const REMOVED_SHARE = 0.08;
// Share of properties (listed before the older snapshots) whose price was cut since.
const PRICE_CUT = 0.15;
// Copies with a price typed with a zero too many or too few.
const ODD_PRICE = 0.012;

const TYPE_WEIGHTS: [ListingType, number][] = [
  ['RENT', 60],
  ['SALE', 25],
  ['FLATSHARE', 8],
  ['SUBLET', 7],
];

export function priceAt(p: DemoProperty, t: number): number {
  return p.oldPrice !== null && p.priceChangedAt !== null && t < p.priceChangedAt ? p.oldPrice : p.price;
}

export function isOnOffer(p: DemoProperty, c: Copy, t: number): boolean {
  return c.listedAt <= t && (p.removedAt === null || t < p.removedAt);
}

// The price a copy shows at time t, rounded as agencies round.
export function copyPrice(p: DemoProperty, c: Copy, t: number): number {
  const base = priceAt(p, t);
  if (c.priceFactor === 1) return base;
  return roundPrice(base * c.priceFactor, p.type);
}

export function deliveryTimes(source: string, now: number): number[] {
  const ago = source === NATIVE_SOURCE ? NATIVE.deliveriesAgoMs : AGENCY_BY_NAME.get(source)!.deliveriesAgoMs;
  return ago.map((ms) => now - ms);
}

export function generateMarket(opts: MarketOptions): Market {
  const ref = loadReference();
  const rng = new Rng(opts.seed);
  const now = opts.now;
  const oldest = Math.min(...[...AGENCIES.map((a) => a.name), NATIVE_SOURCE].flatMap((s) => deliveryTimes(s, now)));
  const deliveries = new Map([...AGENCIES.map((a) => a.name), NATIVE_SOURCE].map((s) => [s, deliveryTimes(s, now)]));
  // A source can list a copy only if one of its deliveries sees it on offer.
  const sees = (source: string, listedAt: number, removedAt: number | null) =>
    deliveries.get(source)!.some((d) => listedAt <= d && (removedAt === null || d < removedAt));

  const pickSource = (place: Place, type: ListingType, listedAt: number, removedAt: number | null, exclude: string[]): string | null => {
    const agencies = AGENCIES.filter((a) => !exclude.includes(a.name) && sees(a.name, listedAt, removedAt)).map(
      (a): [string, number] => [a.name, a.cantons[place.commune.canton] ?? a.elsewhere],
    );
    const agencyTotal = agencies.reduce((s, [, w]) => s + w, 0);
    const share = NATIVE_SHARE[type];
    const entries = [...agencies];
    if (!exclude.includes(NATIVE_SOURCE) && sees(NATIVE_SOURCE, listedAt, removedAt)) {
      entries.push([NATIVE_SOURCE, ((agencyTotal || 1) * share) / (1 - share)]);
    }
    const usable = entries.filter(([, w]) => w > 0);
    return usable.length ? rng.weighted(usable) : null;
  };

  // Recent listings are more numerous: older ones have been let or sold.
  const createdAgo = (maxDays: number, minMs: number): number => minMs + Math.pow(rng.float(), 1.25) * (maxDays * DAY - minMs);

  const properties: DemoProperty[] = [];
  const makeOne = (communeName: string, removed: boolean): void => {
    const place = ref.places.get(communeName)!;
    const type = rng.weighted(TYPE_WEIGHTS);
    const spot = rng.weighted(place.spots.map((s): [Spot, number] => [s, s.weight]));
    const prop = makeProperty(rng, type, place, spot);
    const [lat, lng] = jitter(rng, spot.lat, spot.lng, spot.jitterM);
    let listedAt: number;
    let removedAt: number | null = null;
    if (removed) {
      removedAt = Math.round(rng.between(oldest + DAY, now - 3 * HOUR));
      listedAt = Math.round(oldest - createdAgo(90, DAY));
    } else {
      listedAt = Math.round(now - createdAgo(MAX_AGE_DAYS, 3 * HOUR));
    }
    let oldPrice: number | null = null;
    let priceChangedAt: number | null = null;
    if (!removed && listedAt < oldest - DAY && rng.chance(PRICE_CUT)) {
      oldPrice = roundPrice(prop.price * rng.between(1.03, 1.08), type);
      priceChangedAt = Math.round(rng.between(oldest + DAY, now - 3 * HOUR));
    }
    const p: DemoProperty = {
      key: `P${String(properties.length + 1).padStart(6, '0')}`,
      type,
      kind: prop.kind,
      commune: communeName,
      locality: spot.locality,
      lat,
      lng,
      area: prop.area,
      rooms: prop.rooms,
      price: prop.price,
      oldPrice,
      priceChangedAt,
      listedAt,
      removedAt,
      students: rng.chance(type === 'FLATSHARE' ? 0.3 : 0.05),
      copies: [],
    };
    const listers: string[] = [];
    const addCopy = (at: number): boolean => {
      const source = pickSource(place, type, at, removedAt, listers);
      if (!source) return false;
      listers.push(source);
      p.copies.push(makeCopy(rng, ref, p, place, spot, source, at, listers.length === 1));
      return true;
    };
    if (!addCopy(listedAt)) return;
    if (rng.chance(SECOND_COPY)) {
      const later = (): number => Math.round(Math.min(listedAt + rng.between(0, 6 * DAY), (removedAt ?? now) - 3 * HOUR));
      if (addCopy(later()) && rng.chance(THIRD_COPY)) addCopy(later());
    }
    properties.push(p);
  };

  for (const communeName of allocate(rng, ref, opts.listings)) makeOne(communeName, false);
  const byPopulation = ref.communes.map((c): [string, number] => [c.name, c.population ?? 1]);
  const removedN = Math.round(opts.listings * REMOVED_SHARE);
  for (let i = 0; i < removedN; i++) makeOne(rng.weighted(byPopulation), true);

  const junk = makeJunk(rng, ref, now, byPopulation);
  assignExternalIds(rng, [...properties, ...junk]);
  return { properties, junk };
}

// Records each agency gets wrong: a currency other than EUR, a place outside Luxembourg,
// no price, an area that is not one, an offer that is not a home, a cut-off CSV line.
const PROBLEMS: Record<Agency['format'], Problem[]> = {
  csv: ['currency', 'commune', 'price', 'area', 'offer', 'columns'],
  openimmo: ['currency', 'commune', 'country', 'price', 'area', 'offer'],
  json: ['currency', 'commune', 'country', 'price', 'area', 'offer'],
};
const FOREIGN_TOWNS = ['Thionville', 'Arlon', 'Trier', 'Longwy', 'Metz', 'Saarburg', 'Aubange', 'Perl-Nennig'];

function makeJunk(rng: Rng, ref: Reference, now: number, byPopulation: [string, number][]): DemoProperty[] {
  const junk: DemoProperty[] = [];
  const foreign = FOREIGN_TOWNS.filter((t) => !resolvePlace(ref.gazetteer, { town: t, coords: null }).ok);
  for (const agency of AGENCIES) {
    const first = Math.min(...agency.deliveriesAgoMs.map((ms) => now - ms));
    const problems = rng.shuffle([...PROBLEMS[agency.format]]).slice(0, rng.int(3, 5));
    for (const problem of problems) {
      const place = ref.places.get(rng.weighted(byPopulation))!;
      const type = rng.weighted(TYPE_WEIGHTS);
      const spot = rng.weighted(place.spots.map((s): [Spot, number] => [s, s.weight]));
      const prop = makeProperty(rng, type, place, spot);
      const [lat, lng] = jitter(rng, spot.lat, spot.lng, spot.jitterM);
      const p: DemoProperty = {
        key: `X${String(junk.length + 1).padStart(6, '0')}`,
        type,
        kind: prop.kind,
        commune: place.commune.name,
        locality: spot.locality,
        lat,
        lng,
        area: prop.area,
        rooms: prop.rooms,
        price: prop.price,
        oldPrice: null,
        priceChangedAt: null,
        listedAt: Math.round(first - rng.between(DAY, 40 * DAY)),
        removedAt: null,
        students: false,
        copies: [],
      };
      const copy = makeCopy(rng, ref, p, place, spot, agency.name, p.listedAt, true);
      copy.problem = problem;
      copy.priceFactor = 1;
      if (problem === 'commune' || problem === 'country') {
        const town = rng.pick(foreign);
        copy.place = { town, quarter: null, postcode: problem === 'country' ? String(rng.int(54000, 66999)) : null };
        copy.coords = null;
        copy.title = copy.title.replace(/ (à|in) .*$/, ` $1 ${town}`);
      }
      p.copies.push(copy);
      junk.push(p);
    }
  }
  return junk;
}

// References grow with time at each agency (with gaps: withdrawn drafts, other branches).
function assignExternalIds(rng: Rng, properties: DemoProperty[]): void {
  const bySource = new Map<string, { copy: Copy; key: string }[]>();
  for (const p of properties) {
    for (const c of p.copies) {
      const list = bySource.get(c.source) ?? [];
      list.push({ copy: c, key: p.key });
      bySource.set(c.source, list);
    }
  }
  for (const source of [...bySource.keys()].sort()) {
    const list = bySource.get(source)!.sort((a, b) => a.copy.listedAt - b.copy.listedAt || (a.key < b.key ? -1 : 1));
    let n = 0;
    for (const { copy } of list) {
      n += source === NATIVE_SOURCE ? 1 : rng.int(1, 4);
      copy.seq = n;
      copy.externalId = source === NATIVE_SOURCE ? `np_${String(n).padStart(6, '0')}` : AGENCY_BY_NAME.get(source)!.externalId(n);
    }
  }
}

function makeCopy(rng: Rng, ref: Reference, p: DemoProperty, place: Place, spot: Spot, source: string, listedAt: number, first: boolean): Copy {
  const native = source === NATIVE_SOURCE;
  const agency = AGENCY_BY_NAME.get(source);
  const lang = rng.weighted(Object.entries(agency?.langs ?? NATIVE.langs) as [Lang, number][]);

  let priceFactor = first || rng.chance(agency?.noise.samePrice ?? 0.7) ? 1 : 1 + (rng.chance(0.5) ? -1 : 1) * rng.between(0.004, 0.018);
  // A zero too many or too few: a price outlier.
  if (rng.chance(ODD_PRICE)) priceFactor = rng.chance(0.5) ? 10 : 0.1;

  let area: number | null = p.area;
  if (rng.chance((agency?.noise.areaMissing ?? 0.05) * (p.type === 'FLATSHARE' ? 0.5 : 1))) area = null;
  else if (agency?.noise.area === 'integer') area = Math.round(p.area);
  // Measured by the agency itself: within 1 %.
  else if (!native && rng.chance(0.1)) area = Math.round(p.area * (1 + rng.between(-0.008, 0.008)) * 10) / 10;

  let rooms: RoomsMode = native ? (rng.chance(0.93) ? 'rooms' : 'none') : rng.weighted(agency!.noise.rooms);
  if (rooms === 'half' && (p.kind === 'studio' || p.kind === 'room')) rooms = 'rooms';

  let coords: { lat: number; lng: number } | null = null;
  if (!rng.chance(agency?.noise.coordsMissing ?? 0.25)) {
    const [lat, lng] = jitter(rng, p.lat, p.lng, rng.between(2, 25));
    const [dmin, dmax] = agency?.noise.coordDecimals ?? [5, 6];
    const d = rng.int(dmin, dmax);
    const r = (x: number) => Math.round(x * 10 ** d) / 10 ** d;
    coords = { lat: r(lat), lng: r(lng) };
    if (agency && rng.chance(agency.noise.swappedCoords)) coords = { lat: coords.lng, lng: coords.lat };
    else if (agency && rng.chance(agency.noise.zeroCoords)) coords = { lat: 0, lng: 0 };
  }

  const city = place.commune.name === 'Luxembourg';
  const shownPlace = spot.locality ? (city && rng.chance(0.5) ? `Luxembourg-${spot.locality}` : spot.locality) : place.commune.name;
  const title = makeTitle(rng, lang, p.type, p.kind, p.rooms, shownPlace, city);
  let altTitle: Copy['altTitle'] = null;
  if (source === 'capital-homes' && rng.chance(0.4)) {
    const other = rng.pick((['fr', 'en', 'de'] as Lang[]).filter((l) => l !== lang));
    altTitle = { lang: other, text: makeTitle(rng, other, p.type, p.kind, p.rooms, shownPlace, city) };
  }

  const imageCount = rng.weighted([
    [0, 8],
    [1, 10],
    [2, 14],
    [3, 20],
    [4, 20],
    [5, 15],
    [6, 13],
  ] as const);
  let attachment: Copy['attachment'] = null;
  if (agency?.format === 'openimmo' && rng.chance(0.3)) attachment = 'floorplan';
  if (source === 'capital-homes' && rng.chance(0.25)) attachment = 'video';

  return {
    property: p.key,
    source,
    externalId: '',
    seq: 0,
    listedAt,
    lang,
    title,
    altTitle,
    priceFactor,
    area,
    rooms,
    coords,
    place: placeText(rng, ref, source, place, spot),
    imageCount,
    attachment,
    problem: null,
    style: rng.uint32(),
  };
}
