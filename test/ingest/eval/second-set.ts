import { haversineKm } from '../../../src/domain/geo.js';
import type { Gazetteer } from '../../../src/reference/gazetteer.js';
import { resolvePlace } from '../../../src/ingest/place.js';
import type { ListingType } from '../../../src/domain/listing.js';
import { writeCsv, writeJson, writeOpenImmo, type AgencyRecord, type FeedFile, type FeedFormat } from './feed-writers.js';
import { Rand } from './rand.js';
import { loadReference, postcodeOf, type Place, type Reference } from './reference.js';

/*
The second evaluation set for cross-source deduplication (issue 13). It is written from
its own description of the noise, below, and on purpose without looking at the
deduplication rule or at the first set's generator (test/ingest/dedup-set.ts).

THE MARKET
- N properties (3,000-3,500 for the full set) across Luxembourg. A property's commune is
  drawn by population (data/communes.csv; the capital counts 1.4 times, it has more than its
  share of adverts), then a place inside it: a quarter of Luxembourg City or of Esch, the
  main locality (weight 3) or another locality of the commune (weight 1), with its point
  from data/localities.csv. Each place has a few streets (a point within 250-600 m of the
  place and a direction); a building stands on a street, up to 250 m along it.
- Types: RENT 70 %, SALE 22 %, FLATSHARE 5 %, SUBLET 3 %. Rentals are studios (23 %,
  18-35 m2), flats of 1-4 bedrooms, houses (10 %); sales have more houses (35 %) and fewer
  studios (7 %). Rooms = bedrooms + 1 (a studio has 1 room, a room in a flatshare 1).
- Prices: rent per m2 of the commune (data/rents.csv; per quarter in the capital from
  rents_luxembourg_city_quartiers.csv; canton mean, then national, when a commune has no
  figure) times a log-normal spread (sd 0.12; studios 12 % dearer per m2); sale price per
  m2 of the commune (advertised, else registered) with the commune's p5-p95 spread of
  registered sales (test/ingest/eval/data, a copy of the shared sales file). The asking
  price itself is round: to 1 EUR (30 %), 10 (50 %) or 50 (20 %) for rents, to 1,000 or
  5,000 EUR for sales.

WHO LISTS WHAT
- About 25 % of properties are listed by two (75 % of them) or three (25 %) of the six
  agencies, the others by one. Agencies are drawn by market share with a regional bias
  (a Moselle agency, a Minett agency, a capital agency, a northern agency).
- The six agencies, two per format, each with its own habits:
  wohnen-lux (openimmo): area is the "surface utile" (habitable +0-3 m2, or +0-4 %), 2
    decimals; rooms as rooms, and on 12 % of flats of 2+ rooms a half room (2.5 for 3
    rooms, read as 2; or 3.5 for 3, read as 3); cold rent exact; ort = the commune (60 %,
    sometimes its German name) or the locality, regionaler_zusatz = the quarter, plz
    always; coordinates of the building (80 %), of the street (10 %), none (10 %); titles
    in German.
  mosel-wohnen (openimmo): area rounded to 5 m2 ("about 75 m2"); warm rent only
    (charges included: +2-4 %), rounded to 10 EUR; rooms left out on 30 %; ort = the
    locality, upper-case on 20 %, misspelt on 5 % (only with coordinates), a wrong but
    nearby locality on 8 % (a neighbouring village, in another commune one time in five);
    plz on 60 %; coordinates of the street (50 %), the building (20 %), the commune
    centroid (15 %), none (15 %); titles in German or French.
  agence-minett (csv): area rounded to whole m2; bedrooms only (Chambres); rent rounded to
    10 EUR, typed "1 850 €", "1850" or "1.850,00"; Localité = the commune only (40 %, often
    upper-case, "ESCH/ALZETTE" style), the locality or quarter ("Luxembourg-Gare") (50 %),
    or the commune with the postcode (10 %); coordinates of the street (45 %), the commune
    centroid (25 %), none (30 %), with a decimal comma; titles in French.
  immo-centre (csv): the habitable area with decimals ("85,35 m2"), no area at all on 15 %;
    bedrooms only, and on 10 % no rooms or bedrooms; price exact, or rounded to 50 EUR
    (30 % of rents); Localité = the locality or quarter (60 %: "Gare", "Bonnevoie"), the
    commune (30 %), a wrong but nearby locality (10 %); coordinates of the building (50 %),
    the commune centroid (20 %), none (30 %); titles in French or English.
  capital-realty (json): area exact; bedrooms (left out on 10 %); price exact, rents
    rounded to 50 EUR on half of them; address.locality with postcode and street, or
    address.commune + address.locality; coordinates of the street (60 %), the building
    (15 %), none (25 %); titles in English and French.
  oesling-homes (json): area to 1 decimal; bedrooms, and rooms too on 30 %; rents
    rounded to 50 EUR, sales to 5,000 EUR, sublets priced by the week; the commune only
    (50 %, upper-case on one in five), the locality (30 %) or the postcode and the
    commune (20 %); coordinates of the commune centroid (40 %), the building (35 %), none
    (25 %); titles in German, French or English.
- Geocoding: "building" is the building's point +-15 m, "street" a point 80-150 m along
  the street from the building, "centroid" exactly the commune's point in communes.csv
  (shared by many unrelated listings). An agency's geocoder gives the same point for the
  same building every time (two flats of one building listed by one agency share it).
- Multi-listed properties: on a third of them exactly one listing has no coordinates and
  the others have some; on the rest every listing has coordinates (each at its agency's
  level). Single-listed ones follow the agency's habit, missing coordinates included.
- A relisted flat: on 10 % of multi-listed properties one listing carries a price 5 %
  lower (a later price cut the other agency has not followed).
- Titles are written by each agency from its own templates, in its own languages: they
  say nothing reliable about identity.

HARD NEGATIVES (different properties that look alike; scaled with N, counts for 3,300)
- Sibling flats (70 groups of 2-3): one building (same building point), same type and
  rooms, areas 1-6 m2 apart, prices 2-8 % apart.
- Look-alikes (60 pairs): same place, same type and rooms, another building 150-800 m
  away, area within 0-3 m2, price within 0-3 %.
- Identical new-build flats (35 groups of 2-4): one building, same area and rooms, prices
  3-12 % apart from floor to floor (sales mostly).
- Same-agency twins (30 pairs): two flats with identical figures in one building listed
  by the same agency (one source never merges with itself), and by no other agency (were
  one of them also listed elsewhere, nothing could tell which of the two it is).
Each of these is then listed like any other property (by one agency, or two or three).

Every record is checked against the place resolver (src/ingest/place.ts) when it is
written: a place text the importer could not resolve is replaced by the commune's name,
so that the feeds are valid input (the count of such fixes is in `notes`).
*/

export const NOW = new Date('2026-11-22T08:00:00.000Z');

export type Coding = 'building' | 'street' | 'centroid' | 'none';
type Kind = AgencyRecord['kind'];

export interface Property {
  key: string;
  type: ListingType;
  kind: Kind;
  commune: string;
  canton: string;
  place: Place;
  street: Street;
  buildingId: string;
  lat: number;
  lng: number;
  area: number;
  bedrooms: number;
  rooms: number;
  price: number;
  students: boolean;
  since: Date;
  hardNegative: 'sibling' | 'lookalike' | 'newbuild' | 'same-agency-twin' | null;
  group: string | null;
}

interface Street {
  name: string;
  lat: number;
  lng: number;
  // Unit vector of the street's direction, in metres east / north.
  dx: number;
  dy: number;
}

export interface EvalSet {
  name: string;
  feeds: FeedFile[];
  // `${source}\u0000${external_id}` -> property key
  truth: Map<string, string>;
  properties: number;
  notes: Record<string, number>;
}

const M_PER_DEG_LAT = 111_320;
const mPerDegLng = (lat: number) => M_PER_DEG_LAT * Math.cos((lat * Math.PI) / 180);
function offset(lat: number, lng: number, east: number, north: number): { lat: number; lng: number } {
  return { lat: lat + north / M_PER_DEG_LAT, lng: lng + east / mPerDegLng(lat) };
}

const STREETS = [
  'Rue de la Gare', "Route d'Arlon", 'Rue Principale', "Rue de l'Église", 'Avenue de la Liberté', 'Rue des Jardins', 'Rue du Moulin',
  'Rue de Luxembourg', 'Rue Neuve', 'Rue des Prés', 'Rue de la Forêt', 'Rue des Champs', 'Rue du Parc', "Rue de l'École", 'Rue des Vignes',
  'Rue du Cimetière', 'Rue de la Montagne', 'Rue des Roses', 'Rue Jean-Pierre Michels', 'Rue Dicks', 'Boulevard Grande-Duchesse Charlotte',
  'Rue de Mamer', 'Rue des Alliés', 'Rue du Fort Neipperg', 'Rue de Strasbourg', 'Rue Michel Rodange', 'Rue de Hollerich', 'Rue du Verger',
  'Rue de la Chapelle', 'Rue Batty Weber', 'Rue Nicolas Welter', 'Rue des Sports', 'Rue du Château', 'Rue de la Source', 'Rue de Bettembourg',
];

// ---------------------------------------------------------------------------------------
// Agencies

interface Agency {
  source: string;
  format: FeedFormat;
  display: string;
  share: number;
  regional: (p: Property) => number;
  coding: readonly (readonly [Coding, number])[];
  refOf: (n: number) => string;
  render: (p: Property, r: Rand, ctx: RenderCtx) => AgencyRecord;
}

interface RenderCtx {
  ref: string;
  coding: Coding;
  priceFactor: number;
  ref_: Reference;
  gz: Gazetteer;
  notes: Record<string, number>;
  agency: Agency;
}

const roundTo = (x: number, step: number) => Math.max(step, Math.round(x / step) * step);
const fmtThousands = (n: number, sep: string) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, sep);

function displayCommune(ref: Reference, name: string, form: 'official' | 'de' | 'lb' | 'upper'): string {
  const c = ref.communeByName.get(name)!;
  if (form === 'de') return c.nameDe || name;
  if (form === 'lb') return c.nameLb || name;
  if (form === 'upper') return name.toUpperCase().replace('-SUR-', '/');
  return name;
}

// A place name as typed: quarters of the capital as "Luxembourg-Gare" or just "Gare", a
// quarter of several names by one of them ("Bonnevoie"), shared village names qualified.
function placeText(p: Place, r: Rand, style: 'short' | 'long'): string {
  let name = p.name;
  if (name.includes(' / ')) name = r.pick(name.split(' / '));
  else if (p.altNames.length && r.chance(0.3)) name = r.pick(p.altNames);
  if (p.kind === 'quarter' && p.commune === 'Luxembourg' && style === 'long') return `Luxembourg-${name}`;
  if (p.sharedName) return `${name} (${p.commune})`;
  return name;
}

function misspell(s: string, r: Rand): string {
  if (s.length < 5) return s;
  const i = r.int(1, s.length - 2);
  if (r.chance(0.5)) return s.slice(0, i) + s.slice(i + 1); // a letter dropped
  return s.slice(0, i) + s[i + 1] + s[i] + s.slice(i + 2); // two letters swapped
}

function wrongNearby(ref: Reference, p: Place, r: Rand): Place | null {
  const near = ref.near(p, 3);
  if (near.length === 0) return null;
  const same = near.filter((q) => q.commune === p.commune);
  const other = near.filter((q) => q.commune !== p.commune);
  if (same.length && (r.chance(0.8) || !other.length)) return same[0];
  return other[0] ?? null;
}

// The coordinates an agency's geocoder gives for a building: deterministic per (agency,
// building), so one agency gives one point for two flats of one building.
function geocode(p: Property, coding: Coding, agency: Agency, ref: Reference): { lat: number; lng: number } | null {
  if (coding === 'none') return null;
  if (coding === 'centroid') {
    const c = ref.communeByName.get(p.commune)!;
    return { lat: c.lat, lng: c.lng };
  }
  let h = 2166136261;
  for (const ch of `${agency.source}|${p.buildingId}|${coding}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  const g = new Rand(h);
  if (coding === 'building') {
    const d = 15 * Math.sqrt(g.float());
    const a = g.between(0, 2 * Math.PI);
    return offset(p.lat, p.lng, d * Math.cos(a), d * Math.sin(a));
  }
  const along = g.between(80, 150) * (g.chance(0.5) ? 1 : -1);
  const side = g.between(-6, 6);
  return offset(p.lat, p.lng, along * p.street.dx - side * p.street.dy, along * p.street.dy + side * p.street.dx);
}

function images(agency: string, ref: string, r: Rand, min: number, max: number): string[] {
  const n = r.int(min, max);
  return Array.from({ length: n }, (_, i) => `https://img.${agency}.example/${encodeURIComponent(ref)}/${i + 1}.jpg`);
}

function createdAt(p: Property, r: Rand): Date {
  const t = p.since.getTime() + r.between(0, 10) * 86_400_000;
  return new Date(Math.min(t, NOW.getTime() - 3_600_000 * r.between(1, 48)));
}

// Titles: each agency its own words; never the same text across agencies.
const KIND_WORDS = {
  de: { studio: 'Studio', flat: 'Wohnung', house: 'Haus', room: 'WG-Zimmer' },
  fr: { studio: 'Studio', flat: 'Appartement', house: 'Maison', room: 'Chambre en colocation' },
  en: { studio: 'Studio', flat: 'Flat', house: 'House', room: 'Room in shared flat' },
};
function title(lang: 'de' | 'fr' | 'en', p: Property, where: string, r: Rand): string {
  const k = KIND_WORDS[lang][p.kind];
  const b = p.bedrooms;
  if (lang === 'de') {
    const adj = r.pick(['Helle', 'Moderne', 'Renovierte', 'Schöne', 'Gepflegte', 'Großzügige']);
    const x = p.kind === 'flat' ? `${p.rooms}-Zimmer-${k}` : k;
    return `${adj} ${x} in ${where}${p.type === 'SALE' ? ' zu verkaufen' : ''}`;
  }
  if (lang === 'fr') {
    const adj = r.pick(['lumineux', 'rénové', 'moderne', 'spacieux', 'calme', 'proche commodités']);
    const x = p.kind === 'flat' ? `${k} ${b} chambre${b > 1 ? 's' : ''}` : p.kind === 'house' ? `${k} ${b} chambres` : k;
    return `${x} ${adj} à ${where}`;
  }
  const adj = r.pick(['Bright', 'Renovated', 'Modern', 'Spacious', 'Quiet', 'Central']);
  const x = p.kind === 'flat' ? `${b}-bedroom ${k.toLowerCase()}` : p.kind === 'house' ? `${b}-bedroom house` : k.toLowerCase();
  return `${adj} ${x}, ${where}`;
}

// Checks a record's place against the importer's resolver; a text it cannot resolve is
// replaced by the commune's name (the feed must be valid input).
function ensureResolvable(rec: AgencyRecord, p: Property, ctx: RenderCtx): void {
  const coords = typeof rec.lat === 'number' && typeof rec.lng === 'number' ? { lat: rec.lat, lng: rec.lng } : null;
  // The json adapter reads address.locality as the quarter only beside address.commune.
  const quarter = ctx.agency.format === 'json' && !rec.townIsCommune ? null : rec.quarter;
  const res = resolvePlace(ctx.gz, { town: rec.town, quarter, postcode: rec.postcode, coords });
  if (res.ok) {
    if (res.commune !== p.commune) ctx.notes['records placed in a neighbouring commune'] = (ctx.notes['records placed in a neighbouring commune'] ?? 0) + 1;
    return;
  }
  rec.town = p.commune;
  rec.quarter = null;
  rec.townIsCommune = ctx.agency.format === 'json' ? true : rec.townIsCommune;
  ctx.notes['place texts replaced by the commune (unresolvable)'] = (ctx.notes['place texts replaced by the commune (unresolvable)'] ?? 0) + 1;
}

function coordsOf(p: Property, ctx: RenderCtx) {
  return geocode(p, ctx.coding, ctx.agency, ctx.ref_);
}

function base(p: Property, ctx: RenderCtx, r: Rand): Pick<AgencyRecord, 'ref' | 'type' | 'kind' | 'students' | 'date' | 'street'> {
  return { ref: ctx.ref, type: p.type, kind: p.kind, students: p.type === 'SALE' ? null : p.students, date: createdAt(p, r), street: p.street.name };
}

const AGENCIES: Agency[] = [
  {
    source: 'wohnen-lux',
    format: 'openimmo',
    display: 'Wohnen Lux S.à r.l.',
    share: 0.2,
    regional: () => 1,
    coding: [['building', 0.8], ['street', 0.1], ['none', 0.1]],
    refOf: (n) => `WL-26-${String(n).padStart(5, '0')}`,
    render(p, r, ctx) {
      const area = r.chance(0.5) ? p.area + r.between(0, 3) : p.area * (1 + r.between(0, 0.04));
      let roomsText: string | undefined;
      if (p.kind === 'flat' && p.rooms >= 2 && r.chance(0.12)) roomsText = String(p.rooms + (r.chance(0.5) ? -0.5 : 0.5));
      const townAsCommune = r.chance(0.6) || p.place.kind === 'quarter';
      const c = coordsOf(p, ctx);
      const rec: AgencyRecord = {
        ...base(p, ctx, r),
        title: title('de', p, p.place.name, r),
        price: Math.round(p.price * ctx.priceFactor),
        area: Math.round(area * 100) / 100,
        rooms: p.rooms,
        roomsText,
        town: townAsCommune ? displayCommune(ctx.ref_, p.commune, r.chance(0.3) ? 'de' : 'official') : placeText(p.place, r, 'short'),
        quarter: p.place.kind === 'quarter' || (townAsCommune && p.place.kind === 'locality') ? p.place.name : null,
        postcode: r.chance(0.5) ? `L-${postcodeOf(p.place, p.canton)}` : postcodeOf(p.place, p.canton),
        lat: c?.lat ?? null,
        lng: c?.lng ?? null,
        coordDigits: 6,
        images: images('wohnen-lux', ctx.ref, r, 3, 14),
        date: new Date(NOW.getTime() - r.between(0, 10) * 86_400_000),
      };
      ensureResolvable(rec, p, ctx);
      return rec;
    },
  },
  {
    source: 'mosel-wohnen',
    format: 'openimmo',
    display: 'Mosel Wohnen',
    share: 0.14,
    regional: (p) => (['Remich', 'Grevenmacher', 'Echternach'].includes(p.canton) ? 3 : 1),
    coding: [['street', 0.5], ['building', 0.2], ['centroid', 0.15], ['none', 0.15]],
    refOf: (n) => `MW${7000 + n}`,
    render(p, r, ctx) {
      const c = coordsOf(p, ctx);
      const price =
        p.type === 'SALE' ? roundTo(p.price * ctx.priceFactor, 1000) : roundTo(p.price * ctx.priceFactor * (1 + r.between(0.02, 0.04)), 10);
      let town = placeText(p.place, r, 'long');
      const roll = r.float();
      if (roll < 0.08) {
        const w = wrongNearby(ctx.ref_, p.place, r);
        if (w) town = placeText(w, r, 'long');
      } else if (roll < 0.13 && c) town = misspell(town, r);
      if (r.chance(0.2)) town = town.toUpperCase();
      const rec: AgencyRecord = {
        ...base(p, ctx, r),
        title: title(r.chance(0.6) ? 'de' : 'fr', p, p.place.name, r),
        price,
        warmRent: p.type !== 'SALE',
        area: roundTo(p.area, 5),
        areaText: String(roundTo(p.area, 5)),
        rooms: r.chance(0.3) ? null : p.rooms,
        town,
        postcode: r.chance(0.6) ? postcodeOf(p.place, p.canton) : null,
        lat: c?.lat ?? null,
        lng: c?.lng ?? null,
        coordDigits: 5,
        images: images('mosel-wohnen', ctx.ref, r, 1, 8),
        date: new Date(NOW.getTime() - r.between(0, 10) * 86_400_000),
      };
      ensureResolvable(rec, p, ctx);
      return rec;
    },
  },
  {
    source: 'agence-minett',
    format: 'csv',
    display: 'Agence Minett',
    share: 0.2,
    regional: (p) => (p.canton === 'Esch-sur-Alzette' ? 2.5 : 1),
    coding: [['street', 0.45], ['centroid', 0.25], ['none', 0.3]],
    refOf: (n) => `AM-${1000 + n}`,
    render(p, r, ctx) {
      const c = coordsOf(p, ctx);
      const price = p.type === 'SALE' ? roundTo(p.price * ctx.priceFactor, 1000) : roundTo(p.price * ctx.priceFactor, 10);
      const priceText =
        p.type === 'SALE'
          ? `${fmtThousands(price, '.')} €`
          : r.outcome([[`${fmtThousands(price, ' ')} €`, 0.5], [String(price), 0.3], [`${fmtThousands(price, '.')},00`, 0.2]] as const);
      const area = Math.round(p.area);
      const form = r.outcome([['commune', 0.4], ['place', 0.5], ['postcode', 0.1]] as const);
      let town: string;
      let postcode: string | null = r.chance(0.7) ? `L-${postcodeOf(p.place, p.canton)}` : null;
      if (form === 'commune') town = displayCommune(ctx.ref_, p.commune, r.chance(0.4) ? 'upper' : 'official');
      else if (form === 'place') town = placeText(p.place, r, 'long');
      else {
        town = p.commune;
        postcode = `L-${postcodeOf(p.place, p.canton)}`;
      }
      const rec: AgencyRecord = {
        ...base(p, ctx, r),
        title: title('fr', p, p.place.name, r),
        price,
        priceText,
        area,
        areaText: r.chance(0.3) ? `${area} m²` : String(area),
        roomsText: p.type === 'FLATSHARE' ? '1' : '',
        bedrooms: p.type === 'FLATSHARE' ? 1 : p.bedrooms,
        town,
        postcode,
        lat: c?.lat ?? null,
        lng: c?.lng ?? null,
        coordDigits: 5,
        images: images('agence-minett', ctx.ref, r, 0, 6),
        link: `https://www.agence-minett.example/bien/${ctx.ref}`,
      };
      ensureResolvable(rec, p, ctx);
      return rec;
    },
  },
  {
    source: 'immo-centre',
    format: 'csv',
    display: 'Immo Centre',
    share: 0.16,
    regional: () => 1,
    coding: [['building', 0.5], ['centroid', 0.2], ['none', 0.3]],
    refOf: (n) => `IC/2026/${String(n).padStart(4, '0')}`,
    render(p, r, ctx) {
      const c = coordsOf(p, ctx);
      let price = Math.round(p.price * ctx.priceFactor);
      if (p.type !== 'SALE' && r.chance(0.3)) price = roundTo(price, 50);
      if (p.type === 'SALE') price = roundTo(price, 1000);
      const priceText = p.type === 'SALE' ? `€ ${fmtThousands(price, ' ')}` : r.chance(0.5) ? `${price},00` : fmtThousands(price, '.');
      const noArea = r.chance(0.15);
      const areaStr = p.area.toFixed(2).replace(/\.?0+$/, '').replace('.', ',');
      const noRooms = r.chance(0.1);
      const form = r.outcome([['place', 0.6], ['commune', 0.3], ['wrong', 0.1]] as const);
      let town = form === 'commune' ? p.commune : placeText(p.place, r, r.chance(0.5) ? 'long' : 'short');
      if (form === 'wrong') {
        const w = wrongNearby(ctx.ref_, p.place, r);
        if (w) town = placeText(w, r, 'short');
      }
      const rec: AgencyRecord = {
        ...base(p, ctx, r),
        title: title(r.chance(0.7) ? 'fr' : 'en', p, p.place.name, r),
        price,
        priceText,
        area: noArea ? null : p.area,
        areaText: noArea ? '' : r.chance(0.6) ? `${areaStr} m²` : areaStr,
        roomsText: '',
        bedrooms: noRooms ? null : p.type === 'FLATSHARE' ? 0 : p.bedrooms,
        town,
        postcode: r.chance(0.5) ? postcodeOf(p.place, p.canton) : null,
        lat: c?.lat ?? null,
        lng: c?.lng ?? null,
        coordDigits: 6,
        images: images('immo-centre', ctx.ref, r, 1, 10),
        link: `https://immo-centre.example/annonces/${encodeURIComponent(ctx.ref)}`,
      };
      ensureResolvable(rec, p, ctx);
      return rec;
    },
  },
  {
    source: 'capital-realty',
    format: 'json',
    display: 'Capital Realty',
    share: 0.18,
    regional: (p) => (p.commune === 'Luxembourg' ? 2 : 1),
    coding: [['street', 0.6], ['building', 0.15], ['none', 0.25]],
    refOf: (n) => `CR-${10000 + n}`,
    render(p, r, ctx) {
      const c = coordsOf(p, ctx);
      let price = Math.round(p.price * ctx.priceFactor);
      if (p.type !== 'SALE' && r.chance(0.5)) price = roundTo(price, 50);
      if (p.type === 'SALE') price = roundTo(price, 1000);
      const withCommune = r.chance(0.4);
      const rec: AgencyRecord = {
        ...base(p, ctx, r),
        title: { en: title('en', p, p.place.name, r), fr: title('fr', p, p.place.name, r) },
        price,
        area: p.area,
        bedrooms: r.chance(0.1) ? null : p.bedrooms,
        town: withCommune ? p.commune : placeText(p.place, r, 'short'),
        quarter: withCommune && p.place.kind !== 'main' ? placeText(p.place, r, 'short') : null,
        townIsCommune: withCommune,
        postcode: `L-${postcodeOf(p.place, p.canton)}`,
        lat: c?.lat ?? null,
        lng: c?.lng ?? null,
        coordDigits: 6,
        images: images('capital-realty', ctx.ref, r, 2, 12),
        link: `https://capital-realty.example/listing/${ctx.ref}`,
      };
      if (rec.quarter && rec.quarter.includes('(')) rec.quarter = rec.quarter.replace(/ \(.*\)$/, '');
      ensureResolvable(rec, p, ctx);
      return rec;
    },
  },
  {
    source: 'oesling-homes',
    format: 'json',
    display: 'Oesling Homes',
    share: 0.12,
    regional: (p) => (['Diekirch', 'Clervaux', 'Wiltz', 'Vianden', 'Redange'].includes(p.canton) ? 3 : 1),
    coding: [['centroid', 0.4], ['building', 0.35], ['none', 0.25]],
    refOf: (n) => `AH-${3000 + n}`,
    render(p, r, ctx) {
      const c = coordsOf(p, ctx);
      const monthly = p.price * ctx.priceFactor;
      let price = p.type === 'SALE' ? roundTo(monthly, 5000) : roundTo(monthly, 50);
      const weekly = p.type === 'SUBLET';
      if (weekly) price = Math.round((monthly * 12) / 52);
      const form = r.outcome([['commune', 0.5], ['place', 0.3], ['postcode', 0.2]] as const);
      let town = form === 'place' ? placeText(p.place, r, 'short') : p.commune;
      if (form === 'commune' && r.chance(0.2)) town = town.toUpperCase();
      const lang = r.outcome([['de', 0.35], ['fr', 0.4], ['en', 0.25]] as const);
      const rec: AgencyRecord = {
        ...base(p, ctx, r),
        title: r.chance(0.5) ? { [lang]: title(lang, p, p.place.name, r) } : title(lang, p, p.place.name, r),
        price,
        weekly,
        area: Math.round(p.area * 10) / 10,
        rooms: r.chance(0.3) ? p.rooms : null,
        bedrooms: p.type === 'FLATSHARE' ? 1 : p.bedrooms,
        town,
        postcode: form === 'postcode' ? postcodeOf(p.place, p.canton) : null,
        lat: c?.lat ?? null,
        lng: c?.lng ?? null,
        coordDigits: 4,
        images: images('oesling-homes', ctx.ref, r, 0, 9),
        link: null,
      };
      if (p.type === 'FLATSHARE') rec.rooms = 1;
      ensureResolvable(rec, p, ctx);
      return rec;
    },
  },
];

export const SECOND_SET_SOURCES = AGENCIES.map((a) => ({ source: a.source, format: a.format }));

// ---------------------------------------------------------------------------------------
// The market

function drawKind(type: ListingType, r: Rand): Kind {
  if (type === 'FLATSHARE') return 'room';
  if (type === 'SUBLET') return r.chance(0.5) ? 'studio' : 'flat';
  if (type === 'SALE') return r.outcome([['studio', 0.07], ['flat', 0.58], ['house', 0.35]] as const);
  return r.outcome([['studio', 0.23], ['flat', 0.67], ['house', 0.1]] as const);
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

function drawSize(kind: Kind, r: Rand): { area: number; bedrooms: number } {
  const round2 = (x: number) => Math.round(x * 100) / 100;
  if (kind === 'room') return { area: round2(r.between(10, 22)), bedrooms: 0 };
  if (kind === 'studio') return { area: round2(r.chance(0.6) ? r.between(24, 34) : r.between(18, 35)), bedrooms: 0 };
  if (kind === 'flat') {
    const b = r.outcome([[1, 0.4], [2, 0.4], [3, 0.17], [4, 0.03]] as const);
    const mean = [0, 55, 80, 105, 130][b];
    return { area: round2(clamp(mean + r.normal() * (6 + 3 * b), mean - 20, mean + 35)), bedrooms: b };
  }
  const b = r.outcome([[3, 0.35], [4, 0.4], [5, 0.2], [6, 0.05]] as const);
  return { area: round2(clamp(90 + 28 * b + r.normal() * 20, 110, 320)), bedrooms: b };
}

function drawPrice(ref: Reference, p: Pick<Property, 'type' | 'kind' | 'commune' | 'place' | 'area'>, r: Rand): number {
  const pr = ref.prices(p.commune, p.place.kind === 'quarter' ? p.place.name : undefined);
  if (p.type === 'FLATSHARE') return roundTo(r.between(620, 1100), 10);
  if (p.type === 'SALE') {
    const m2 = p.kind === 'house' ? pr.saleHouseM2 : pr.saleFlatM2;
    const v = p.area * m2 * Math.exp(r.normal() * pr.saleSpread * 0.8);
    return roundTo(v, r.chance(0.7) ? 1000 : 5000);
  }
  const m2 = p.kind === 'house' ? pr.rentHouseM2 : pr.rentFlatM2 * (p.kind === 'studio' ? 1.12 : 1);
  let v = p.area * m2 * Math.exp(r.normal() * 0.12);
  if (p.type === 'SUBLET') v *= 1.15;
  return roundTo(v, r.outcome([[1, 0.3], [10, 0.5], [50, 0.2]] as const));
}

function placeWeight(p: Place): number {
  return p.kind === 'main' ? 3 : 1;
}

export function generateSecondSet(gz: Gazetteer, opts: { properties: number; seed: number; name?: string }): EvalSet {
  const ref = loadReference();
  const r = new Rand(opts.seed);
  const notes: Record<string, number> = {};
  const props: Property[] = [];
  const streetsOf = new Map<Place, Street[]>();
  let buildingSeq = 0;

  function streetIn(place: Place, rr: Rand): Street {
    let list = streetsOf.get(place);
    if (!list) {
      const n = place.kind === 'quarter' ? 10 : place.kind === 'main' ? 8 : 3;
      const radius = place.kind === 'quarter' ? 500 : place.kind === 'main' ? 600 : 250;
      const sr = rr.fork();
      const names = [...STREETS];
      list = Array.from({ length: n }, () => {
        const d = radius * Math.sqrt(sr.float());
        const a = sr.between(0, 2 * Math.PI);
        const pt = offset(place.lat, place.lng, d * Math.cos(a), d * Math.sin(a));
        const dir = sr.between(0, Math.PI);
        const name = names.splice(sr.int(0, names.length - 1), 1)[0];
        return { name, lat: pt.lat, lng: pt.lng, dx: Math.cos(dir), dy: Math.sin(dir) };
      });
      streetsOf.set(place, list);
    }
    return rr.pick(list);
  }

  function building(street: Street, rr: Rand): { lat: number; lng: number; id: string } {
    const along = rr.between(-250, 250);
    const side = rr.between(-12, 12);
    const pt = offset(street.lat, street.lng, along * street.dx - side * street.dy, along * street.dy + side * street.dx);
    return { ...pt, id: `B${++buildingSeq}` };
  }

  const cityWeight = (c: { name: string; population: number }) => c.population * (c.name === 'Luxembourg' ? 1.4 : 1);

  function newProperty(rr: Rand, over: Partial<Property> = {}): Property {
    const commune = over.commune ?? rr.weighted(ref.communes, cityWeight).name;
    const canton = ref.communeByName.get(commune)!.canton;
    const place = over.place ?? rr.weighted(ref.placesOf.get(commune)!, placeWeight);
    const street = over.street ?? streetIn(place, rr);
    const b = over.buildingId ? { lat: over.lat!, lng: over.lng!, id: over.buildingId } : building(street, rr);
    const type = over.type ?? rr.outcome([['RENT', 0.7], ['SALE', 0.22], ['FLATSHARE', 0.05], ['SUBLET', 0.03]] as const);
    const kind = over.kind ?? drawKind(type, rr);
    const size = over.area !== undefined ? { area: over.area, bedrooms: over.bedrooms! } : drawSize(kind, rr);
    const p: Property = {
      key: `P${String(props.length + 1).padStart(5, '0')}`,
      type,
      kind,
      commune,
      canton,
      place,
      street,
      buildingId: b.id,
      lat: b.lat,
      lng: b.lng,
      area: size.area,
      bedrooms: size.bedrooms,
      rooms: kind === 'room' ? 1 : size.bedrooms + 1,
      price: 0,
      students: type === 'FLATSHARE' ? rr.chance(0.7) : type === 'SALE' ? false : rr.chance(0.2),
      since: new Date(NOW.getTime() - rr.between(2, 75) * 86_400_000),
      hardNegative: over.hardNegative ?? null,
      group: over.group ?? null,
    };
    p.price = over.price ?? drawPrice(ref, p, rr);
    props.push(p);
    return p;
  }

  // Hard negatives first (their counts scale with the set), then ordinary properties.
  const scale = opts.properties / 3300;
  const count = (n: number) => Math.max(1, Math.round(n * scale));
  const sameAgencyTwins: [Property, Property][] = [];
  const flatLike = (rr: Rand): Partial<Property> => {
    const type = rr.outcome([['RENT', 0.75], ['SALE', 0.25]] as const);
    return { type, kind: rr.chance(0.2) ? 'studio' : 'flat' };
  };

  for (let g = 0; g < count(70); g++) {
    const rr = r.fork();
    const a = newProperty(rr, { ...flatLike(rr), hardNegative: 'sibling', group: `sib${g}` });
    const n = rr.chance(0.3) ? 2 : 1;
    const used = [a.area];
    for (let i = 0; i < n; i++) {
      let area = a.area;
      for (let t = 0; t < 20 && used.some((u) => Math.abs(u - area) < 1); t++) area = a.area + rr.between(1, 6) * (rr.chance(0.5) ? 1 : -1);
      used.push(area);
      const dir = area > a.area ? 1 : -1;
      const price = roundTo(a.price * (1 + dir * rr.between(0.02, 0.08)), a.type === 'SALE' ? 1000 : 5);
      newProperty(rr, {
        type: a.type, kind: a.kind, commune: a.commune, place: a.place, street: a.street, buildingId: a.buildingId, lat: a.lat, lng: a.lng,
        area: Math.round(area * 100) / 100, bedrooms: a.bedrooms, price, hardNegative: 'sibling', group: a.group,
      });
    }
  }
  for (let g = 0; g < count(60); g++) {
    const rr = r.fork();
    const a = newProperty(rr, { ...flatLike(rr), hardNegative: 'lookalike', group: `look${g}` });
    // Another building in the same place, 150-800 m away.
    let b = building(streetIn(a.place, rr), rr);
    for (let t = 0; t < 30; t++) {
      const d = haversineKm(a.lat, a.lng, b.lat, b.lng) * 1000;
      if (d >= 150 && d <= 800) break;
      b = building(streetIn(a.place, rr), rr);
    }
    const area = Math.round((a.area + rr.between(-3, 3)) * 100) / 100;
    const price = roundTo(a.price * (1 + rr.between(-0.03, 0.03)), a.type === 'SALE' ? 1000 : 5);
    newProperty(rr, {
      type: a.type, kind: a.kind, commune: a.commune, place: a.place, buildingId: b.id, lat: b.lat, lng: b.lng,
      area, bedrooms: a.bedrooms, price, hardNegative: 'lookalike', group: a.group,
    });
  }
  for (let g = 0; g < count(35); g++) {
    const rr = r.fork();
    const type = rr.chance(0.7) ? 'SALE' : 'RENT';
    const a = newProperty(rr, { type, kind: 'flat', hardNegative: 'newbuild', group: `new${g}` });
    const floors = rr.int(2, 4);
    let price = a.price;
    for (let i = 1; i < floors; i++) {
      price = roundTo(price * (1 + rr.between(0.03, 0.12)), type === 'SALE' ? 1000 : 10);
      newProperty(rr, {
        type, kind: 'flat', commune: a.commune, place: a.place, street: a.street, buildingId: a.buildingId, lat: a.lat, lng: a.lng,
        area: a.area, bedrooms: a.bedrooms, price, hardNegative: 'newbuild', group: a.group,
      });
    }
  }
  for (let g = 0; g < count(30); g++) {
    const rr = r.fork();
    const a = newProperty(rr, { ...flatLike(rr), hardNegative: 'same-agency-twin', group: `twin${g}` });
    const b = newProperty(rr, {
      type: a.type, kind: a.kind, commune: a.commune, place: a.place, street: a.street, buildingId: a.buildingId, lat: a.lat, lng: a.lng,
      area: a.area, bedrooms: a.bedrooms, price: a.price, hardNegative: 'same-agency-twin', group: a.group,
    });
    sameAgencyTwins.push([a, b]);
  }
  notes['hard-negative properties'] = props.length;
  while (props.length < opts.properties) newProperty(r.fork());

  // Who lists what.
  const listedBy = new Map<Property, Agency[]>();
  const twinAgency = new Map<Property, Agency>();
  for (const [a, b] of sameAgencyTwins) {
    const ag = r.weighted(AGENCIES, (x) => x.share * x.regional(a));
    twinAgency.set(a, ag);
    twinAgency.set(b, ag);
  }
  for (const p of props) {
    const rr = r.fork();
    const forced = twinAgency.get(p);
    // A same-agency twin is listed by its agency only: were one of the pair also listed
    // elsewhere, nothing could tell which of the two that other listing is.
    const k = forced ? 1 : rr.chance(0.25) ? (rr.chance(0.75) ? 2 : 3) : 1;
    const pool = forced ? AGENCIES.filter((a) => a !== forced) : AGENCIES;
    const chosen = rr.weightedDistinct(pool, forced ? k - 1 : k, (a) => a.share * a.regional(p));
    listedBy.set(p, forced ? [forced, ...chosen] : chosen);
  }

  // The records.
  const recordsOf = new Map<Agency, AgencyRecord[]>(AGENCIES.map((a) => [a, []]));
  const seq = new Map<Agency, number>(AGENCIES.map((a) => [a, r.int(1, 400)]));
  const truth = new Map<string, string>();
  let multi = 0;
  let oneSideNoCoords = 0;
  let relisted = 0;
  for (const p of props) {
    const rr = r.fork();
    const agencies = listedBy.get(p)!;
    const codings = agencies.map((a) => rr.outcome(a.coding));
    let priceFactors = agencies.map(() => 1);
    if (agencies.length > 1) {
      multi++;
      const noCoordSide = rr.chance(1 / 3) ? rr.int(0, agencies.length - 1) : -1;
      if (noCoordSide >= 0) oneSideNoCoords++;
      agencies.forEach((a, i) => {
        if (i === noCoordSide) codings[i] = 'none';
        else codings[i] = rr.outcome(a.coding.filter(([c]) => c !== 'none'));
      });
      if (rr.chance(0.1)) {
        relisted++;
        const i = rr.int(0, agencies.length - 1);
        priceFactors = priceFactors.map((f, j) => (j === i ? 0.95 : f));
      }
    }
    agencies.forEach((a, i) => {
      const n = seq.get(a)! + rr.int(1, 3);
      seq.set(a, n);
      const ctx: RenderCtx = { ref: a.refOf(n), coding: codings[i], priceFactor: priceFactors[i], ref_: ref, gz, notes, agency: a };
      const rec = a.render(p, rr.fork(), ctx);
      // A centroid is written as communes.csv has it (5 decimals), whatever the agency's habit.
      if (ctx.coding === 'centroid') rec.coordDigits = Math.max(rec.coordDigits ?? 6, 5);
      recordsOf.get(a)!.push(rec);
      truth.set(`${a.source}\u0000${rec.ref}`, p.key);
    });
  }
  notes['properties'] = props.length;
  notes['multi-listed properties'] = multi;
  notes['multi-listed with one side without coordinates'] = oneSideNoCoords;
  notes['multi-listed with a relisted (-5 %) price'] = relisted;
  notes['listings'] = truth.size;
  for (const kind of ['sibling', 'lookalike', 'newbuild', 'same-agency-twin'] as const) notes[`hard negatives: ${kind}`] = props.filter((p) => p.hardNegative === kind).length;

  const feeds: FeedFile[] = AGENCIES.map((a, i) => {
    // Each agency's feed in its own order (by reference), as its software exports it.
    const recs = recordsOf.get(a)!.sort((x, y) => (x.ref < y.ref ? -1 : x.ref > y.ref ? 1 : 0));
    const text =
      a.format === 'openimmo'
        ? writeOpenImmo(recs, { firma: a.display, anbieternr: `ANB-${i + 1}` })
        : a.format === 'csv'
          ? writeCsv(recs, { bom: i % 2 === 0, crlf: a.source === 'immo-centre', agentColumn: a.source === 'agence-minett', coordComma: a.source === 'agence-minett' })
          : writeJson(recs, { agency: a.display, generatedAt: new Date(NOW.getTime() - 2 * 3_600_000) });
    const ext = a.format === 'openimmo' ? 'openimmo.xml' : a.format;
    return { source: a.source, format: a.format, fileName: `${a.source}.${ext}`, text, records: recs.length };
  });
  return { name: opts.name ?? `second set (${props.length} properties)`, feeds, truth, properties: props.length, notes };
}
