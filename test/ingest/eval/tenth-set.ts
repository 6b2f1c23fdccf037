// The TENTH evaluation set (the fourth in this repository) of cross-source deduplication: a seeded market of Luxembourg
// agencies' feeds, with the truth (which listings are one property). Written from what
// agency exports in Luxembourg look like (athome.lu / immotop.lu-style agency CRMs and the
// German OpenImmo software of the north), by someone who has not seen the product's rule.
//
// THE MARKET
// - About 3,400 properties (default), placed in communes in proportion to population (the
//   City somewhat more), in a locality or a City / Esch quarter of the commune, on a street
//   of that place, in a building. Rents 55 %, sales 35 %, rooms in flat shares 6 %, sublets
//   4 %. Prices from the reference rents and asking prices per m2 of the commune (or City
//   quarter), with the scatter of real asking prices; rents come with monthly charges
//   (about 2 EUR/m2). The property's habitable area and its bedrooms are the truth; what an
//   agency writes of them is its habit (below).
// - 25-30 % of properties are listed by two or three agencies (non-exclusive mandates are the
//   rule in Luxembourg); which agencies depends on where the property is (each agency has its
//   region) and on its kind (student rooms go to a student agency, new-builds to the
//   developer's sales agency and a network that co-markets them).
// - The same property is not the same record at two agencies: besides their habits, one of
//   them may have relisted it at a new price (about 12 % of extra listings: -3..-8 % or a
//   rise), and co-mandated sales are sometimes priced 0.5-2 % apart. Each agency dates the
//   listing from its own mandate (days to weeks apart).
//
// HARD NEGATIVES (different properties that look alike)
// - Sibling flats of one residence: 20 % of resale/rent flats come with 1-3 other listed units
//   of the same building: same street, number, postcode and building coordinates, same
//   bedrooms, areas 0-5 m2 apart (a third identical: stacked floors), prices a floor or two
//   apart (about 1.5 % a floor). Mostly marketed by the same agency (the building's syndic
//   agency: same-agency twins), sometimes by other agencies too.
// - New-build residences (VEFA) in growth areas: 3-8 lots per project, two or three
//   layouts, lots of one layout with the same area (mirrored lots 0-0.6 m2 apart), prices
//   rising about 1.5 % a floor; listed by the developer's agency, some co-listed by others.
// - Look-alikes: 8 % of flats have a twin in the same quarter / locality: another building a
//   few hundred metres away, same bedrooms, area within 4 m2, price within 4 %.
// - Semi-detached twin houses: 30 % of houses have the other half listed too: same street,
//   next number, 12 m apart, area 0-3 m2 apart, price equal or 2 % apart.
// - Several rooms of one flat share: same address and coordinates, rooms of different size,
//   prices equal or 50 EUR apart.
//
// THE AGENCIES AND THEIR FIXED HABITS (each has a format, a region and habits; a habit is
// the agency's, not noise drawn per field: an agency that writes charges-included rents does
// so for (nearly) all of them)
// - lux-central (JSON CRM, the City and its ring): address.commune "Luxembourg" with the
//   quarter as address.locality ("Gare", "Bonnevoie", "Neudorf"); the street's postcode
//   "L-1611"; building coordinates (6 decimals), 8 % none (not yet geocoded); habitable area
//   to 0.1 m2; bedrooms; net rent, 40 % with the charges stated separately
//   ({"rent": {"net", "charges"}}); exact sale prices.
// - prestige-homes (JSON, high-end City quarters and the western ring, mostly sales):
//   "Luxembourg-Belair" or "Belair (Luxembourg)"; one postcode per locality; coordinates
//   geocoded from the locality (4 decimals), some the commune centroid; areas rounded to 5
//   m2, 30 % including the terrace; counts a study as a bedroom one time in ten; rents
//   rounded to 50, half of them with the charges included and not said; sales rounded to 5,000.
// - immo-nord (OpenImmo, the north): German names ("Ettelbrück", "Luxemburg" +
//   regionaler_zusatz "Bahnhofsviertel"); the locality's postcode without "L-", 30 % none;
//   the locality's geocoded point, 30 % none; Wohnfläche German-style: balconies and
//   terraces counted at half (flats), houses often by usable area (+5..15 %); anzahl_zimmer
//   as rooms with a half room for an open kitchen one time in three; kaltmiete.
// - westimmo (OpenImmo, west and centre): ort in Luxembourgish 40 % ("Stroossen",
//   "Miersch") else official, the locality in regionaler_zusatz; the street's postcode;
//   street-level coordinates truncated to 3 decimals, 15 % the commune centroid, 15 % none;
//   area rounded to 1 m2; anzahl_zimmer = bedrooms + 1; warmmiete (charges included, said).
// - sud-agence (CSV, the Minett): "ESCH/ALZETTE", "Esch-Uelzecht", capitals without accents
//   ("DIFFERDANGE", "PETANGE") or as typed, a misspelling now and then (only when it gives
//   coordinates); the street's postcode, 30 % none; building coordinates with a decimal
//   comma, 8 % swapped lat/lng, 5 % "0"/"0", 12 % none; area truncated ("85 m²"); bedrooms
//   only; "1.850,00" net, 30 % "1 950 € CC"; a flat-share room is "1 chambre".
// - moselle-est (CSV, the Moselle and the east): capitals without accents ("WORMELDANGE");
//   60 % no postcode, else the locality's; 50 % no coordinates, 40 % the commune centroid;
//   area to 1 m2, 15 % missing; Pièces only (rooms), 20 % missing; half the rents
//   "1 850 € HC + 180 € ch.".
// - athome-relay (CSV, a national network, everywhere): "Luxembourg-Gare", "Lux-Kirchberg"
//   or "Luxembourg"; towns with accents, "Dudelange Centre" now and then; the street's
//   postcode; building coordinates (6 decimals), 10 % street, 15 % none, 5 % "0"/"0"; area
//   "85,5"; Pièces and Chambres; "1 850 €", 15 % "1 950 € charges comprises".
// - kot-lu (JSON, student rooms and sublets in the City and Belval): the quarter or
//   "Belval"; 60 % no postcode; 50 % no coordinates, 30 % the quarter's point; room area
//   (20 % missing); a room gives the bedrooms of the whole flat; prices all-in (charges
//   included, unsaid); sublets per week (60 %).
// - familia-immo (CSV, a small agency of the south-centre): the commune name for a village
//   60 % of the time; the commune's one postcode; 70 % no coordinates; area rounded to 5
//   m2 (40 %) or 1 m2, 25 % missing; bedrooms, 20 % no counts at all; rents rounded to 50,
//   30 % charges included unsaid; sales rounded to 10,000.
// - vefa-dev (OpenImmo, the developer's sales agency): new-build lots only, building
//   coordinates, exact areas (2 decimals), rooms, exact prices.
//
// What the set does not do: no currency other than EUR, no invalid records on purpose (every
// record must be importable per docs/feed-formats.md), no withdrawals; one full snapshot per agency.
import type { ListingType } from '../../../src/domain/listing.js';
import { JSON_OFFER, jsonAddress, writeCsv, writeOpenImmo, type AgencyRecord, type FeedFile } from './feed-writers.js';
import { Rand } from './rand.js';
import { loadReference, postcodeOf, type Place, type Reference } from './reference.js';

type Kind = 'studio' | 'flat' | 'house' | 'room';
type Tag = 'plain' | 'sibling' | 'vefa' | 'lookalike' | 'twin-house' | 'room-in-flat';

interface Street {
  name: string;
  postcode: string;
  lat: number;
  lng: number;
}

export interface TenthProperty {
  key: string;
  type: ListingType;
  kind: Kind;
  commune: string;
  canton: string;
  place: Place;
  street: Street;
  number: number;
  lat: number;
  lng: number;
  area: number; // habitable, m2
  terrace: number; // balcony / terrace m2 (0: none)
  bedrooms: number; // for a room: the bedrooms of the whole flat
  price: number; // net monthly rent or asking price
  charges: number; // monthly charges (rents)
  onMarket: Date;
  tag: Tag;
  // Properties made as hard negatives of one another share a group.
  group: string | null;
}

// What one agency did with one property (for the analysis of misses).
export interface TenthRecordMeta {
  key: string;
  property: string;
  source: string;
  habits: string[];
  stated: { area: number | null; price: number; rooms: number | null; coords: 'usable' | 'none' | 'zero' | 'swapped'; coordMode: string; place: string; postcode: string | null };
}

export interface TenthSet {
  name: string;
  feeds: FeedFile[];
  truth: Map<string, string>;
  properties: number;
  notes: Record<string, number>;
  meta: Map<string, TenthRecordMeta>;
  props: Map<string, TenthProperty>;
}

const NOW = new Date('2026-11-22T08:00:00.000Z');
const DAY = 86_400_000;

type CoordMode = 'building' | 'street' | 'locality' | 'commune' | 'none' | 'zero' | 'swapped' | 'trunc3';
type AreaMode = 'exact1' | 'exact2' | 'round1' | 'trunc' | 'round5' | 'german' | 'terrace5';
type RentMode = 'net' | 'net+charges' | 'cc-said' | 'cc-unsaid' | 'warm' | 'hc+ch';

interface Agency {
  source: string;
  name: string;
  format: 'openimmo' | 'csv' | 'json';
  prefix: string;
  volume: number;
  types: Partial<Record<ListingType, number>>;
  region(p: TenthProperty): number;
  coords: [CoordMode, number][];
  digits: number;
  postcode: [('street' | 'locality' | 'none'), number][];
  postcodePrefix: boolean;
  area: AreaMode;
  areaMissing: number;
  rent: [RentMode, number][];
  rentRound: number;
  saleRound: number;
}

const CITY = 'Luxembourg';
const RING = new Set(['Strassen', 'Bertrange', 'Hesperange', 'Walferdange', 'Niederanven', 'Sandweiler', 'Kopstal', 'Steinsel', 'Leudelange', 'Mamer', 'Contern', 'Schuttrange']);
const HIGH_END_QUARTERS = new Set(['Belair', 'Limpertsberg', 'Kirchberg', 'Merl', 'Ville Haute', 'Cents', 'Neudorf / Weimershof', 'Grund', 'Clausen']);
const STUDENT_QUARTERS = new Set(['Limpertsberg', 'Kirchberg', 'Gare', 'Hollerich', 'Bonnevoie-Nord / Verlorenkost', 'Bonnevoie-Sud', 'Belval', 'Universitéit', 'Al Esch']);
const FAMILIA = new Set(['Bettembourg', 'Roeser', 'Hesperange', 'Kayl', 'Dudelange', 'Mondercange', 'Leudelange', 'Frisange', 'Weiler-la-Tour', 'Rumelange', 'Schifflange']);
const EAST_RING = new Set(['Schuttrange', 'Contern', 'Sandweiler', 'Niederanven', 'Hesperange', 'Frisange']);
const VEFA_COMMUNES = new Set(['Luxembourg', 'Esch-sur-Alzette', 'Differdange', 'Mersch', 'Junglinster', 'Mamer', 'Strassen', 'Bertrange', 'Dudelange', 'Hesperange', 'Sanem', 'Ettelbruck']);

const AGENCIES: Agency[] = [
  {
    source: 'lux-central', name: 'Lux Central Immobilier', format: 'json', prefix: 'LC-', volume: 1.2,
    types: { RENT: 1, SALE: 0.7, SUBLET: 0.3 },
    region: (p) => (p.commune === CITY ? 1 : RING.has(p.commune) ? 0.6 : p.canton === 'Capellen' ? 0.15 : 0),
    coords: [['building', 0.88], ['none', 0.08], ['street', 0.04]], digits: 6,
    postcode: [['street', 1]], postcodePrefix: true,
    area: 'exact1', areaMissing: 0.03,
    rent: [['net', 0.6], ['net+charges', 0.4]], rentRound: 1, saleRound: 1,
  },
  {
    source: 'prestige-homes', name: 'Prestige Homes Luxembourg', format: 'json', prefix: 'PH', volume: 0.6,
    types: { SALE: 1, RENT: 0.5 },
    region: (p) =>
      p.commune === CITY ? (HIGH_END_QUARTERS.has(p.place.name) ? 1 : 0.25) : ['Strassen', 'Bertrange', 'Mamer', 'Kopstal', 'Niederanven', 'Hesperange', 'Sandweiler', 'Steinsel'].includes(p.commune) ? 0.8 : 0,
    coords: [['locality', 0.85], ['commune', 0.1], ['none', 0.05]], digits: 4,
    postcode: [['locality', 1]], postcodePrefix: true,
    area: 'round5', areaMissing: 0.05,
    rent: [['cc-unsaid', 0.5], ['net', 0.5]], rentRound: 50, saleRound: 5000,
  },
  {
    source: 'immo-nord', name: 'Immo Nord S.à r.l.', format: 'openimmo', prefix: 'IN-2026-', volume: 0.8,
    types: { RENT: 1, SALE: 1, FLATSHARE: 0.05 },
    region: (p) => (['Diekirch', 'Clervaux', 'Wiltz', 'Vianden'].includes(p.canton) ? 1 : ['Echternach', 'Mersch', 'Redange'].includes(p.canton) ? 0.45 : p.commune === CITY ? 0.03 : 0),
    coords: [['locality', 0.6], ['none', 0.3], ['building', 0.1]], digits: 5,
    postcode: [['locality', 0.7], ['none', 0.3]], postcodePrefix: false,
    area: 'german', areaMissing: 0.05,
    rent: [['net', 1]], rentRound: 1, saleRound: 1,
  },
  {
    source: 'westimmo', name: 'WestImmo', format: 'openimmo', prefix: 'WI', volume: 0.8,
    types: { RENT: 1, SALE: 1 },
    region: (p) =>
      p.canton === 'Capellen' ? 1 : p.canton === 'Redange' ? 0.8 : p.canton === 'Mersch' ? 0.7 : p.commune === CITY ? 0.15 : p.canton === 'Luxembourg' ? 0.4 : 0,
    coords: [['trunc3', 0.7], ['commune', 0.15], ['none', 0.15]], digits: 3,
    postcode: [['street', 1]], postcodePrefix: true,
    area: 'round1', areaMissing: 0.02,
    rent: [['warm', 1]], rentRound: 10, saleRound: 1,
  },
  {
    source: 'sud-agence', name: 'Sud Agence', format: 'csv', prefix: 'SA-', volume: 1.1,
    types: { RENT: 1, SALE: 1, FLATSHARE: 0.4 },
    region: (p) => (p.canton === 'Esch-sur-Alzette' ? 1 : p.commune === CITY ? 0.08 : 0),
    coords: [['building', 0.75], ['swapped', 0.08], ['zero', 0.05], ['none', 0.12]], digits: 5,
    postcode: [['street', 0.7], ['none', 0.3]], postcodePrefix: true,
    area: 'trunc', areaMissing: 0.02,
    rent: [['net', 0.7], ['cc-said', 0.3]], rentRound: 1, saleRound: 1,
  },
  {
    source: 'moselle-est', name: 'Moselle Est Immobilier', format: 'csv', prefix: 'ME', volume: 0.6,
    types: { RENT: 1, SALE: 1 },
    region: (p) => (['Remich', 'Grevenmacher'].includes(p.canton) ? 1 : p.canton === 'Echternach' ? 0.6 : EAST_RING.has(p.commune) ? 0.3 : 0),
    coords: [['none', 0.5], ['commune', 0.4], ['street', 0.1]], digits: 5,
    postcode: [['none', 0.6], ['locality', 0.4]], postcodePrefix: false,
    area: 'round1', areaMissing: 0.15,
    rent: [['hc+ch', 0.5], ['net', 0.5]], rentRound: 10, saleRound: 1,
  },
  {
    source: 'athome-relay', name: 'Relais Immobilier National', format: 'csv', prefix: 'AR', volume: 1.2,
    types: { RENT: 1, SALE: 1, SUBLET: 0.3, FLATSHARE: 0.1 },
    region: (p) => (p.commune === CITY ? 0.7 : 0.5),
    coords: [['building', 0.7], ['street', 0.1], ['none', 0.15], ['zero', 0.05]], digits: 6,
    postcode: [['street', 0.9], ['none', 0.1]], postcodePrefix: true,
    area: 'exact1', areaMissing: 0.05,
    rent: [['net', 0.85], ['cc-said', 0.15]], rentRound: 1, saleRound: 1,
  },
  {
    source: 'kot-lu', name: 'Kot.lu', format: 'json', prefix: 'KOT', volume: 0.5,
    types: { FLATSHARE: 1, SUBLET: 1 },
    region: (p) => (STUDENT_QUARTERS.has(p.place.name) ? 1 : p.commune === CITY || p.commune === 'Esch-sur-Alzette' ? 0.5 : ['Differdange', 'Sanem'].includes(p.commune) ? 0.4 : 0),
    coords: [['none', 0.5], ['locality', 0.3], ['building', 0.2]], digits: 5,
    postcode: [['none', 0.6], ['street', 0.4]], postcodePrefix: true,
    area: 'round1', areaMissing: 0.2,
    rent: [['cc-unsaid', 1]], rentRound: 5, saleRound: 1,
  },
  {
    source: 'familia-immo', name: 'Familia Immo', format: 'csv', prefix: 'FI', volume: 0.4,
    types: { RENT: 1, SALE: 1 },
    region: (p) => (FAMILIA.has(p.commune) ? 1 : p.canton === 'Esch-sur-Alzette' ? 0.2 : 0),
    coords: [['none', 0.7], ['street', 0.2], ['commune', 0.1]], digits: 4,
    postcode: [['locality', 0.8], ['none', 0.2]], postcodePrefix: false,
    area: 'round1', areaMissing: 0.25,
    rent: [['net', 0.7], ['cc-unsaid', 0.3]], rentRound: 50, saleRound: 10000,
  },
  {
    source: 'vefa-dev', name: 'Promo VEFA Luxembourg', format: 'openimmo', prefix: 'VD', volume: 0,
    types: { SALE: 1 },
    region: (p) => (p.tag === 'vefa' ? 1 : 0),
    coords: [['building', 1]], digits: 6,
    postcode: [['street', 1]], postcodePrefix: true,
    area: 'exact2', areaMissing: 0,
    rent: [['net', 1]], rentRound: 1, saleRound: 1,
  },
];
const AGENCY = new Map(AGENCIES.map((a) => [a.source, a]));

const STREETS = [
  'Rue de la Gare', 'Rue Principale', "Rue de l'Église", 'Rue des Jardins', 'Rue du Moulin', 'Route d\'Arlon', 'Rue de Luxembourg',
  'Rue de la Poste', 'Rue du Cimetière', 'Rue des Champs', 'Grand-Rue', 'Rue des Prés', 'Rue du Château', 'Rue de la Forêt',
  'Rue des Vignes', 'Rue du Parc', 'Rue de la Montagne', 'Rue des Écoles', 'Rue du Fort Neipperg', 'Avenue de la Liberté',
  'Rue Michel Rodange', 'Rue Dicks', 'Rue de Hollerich', 'Boulevard de la Pétrusse', 'Rue de Strassen', 'Rue Nic. Welter',
  'Rue de la Libération', 'Rue Émile Mayrisch', 'Rue des Roses', 'Rue des Fleurs', 'Op der Heed', 'Um Bierg', 'Rue de la Chapelle',
  'Rue Jean-Pierre Michels', 'Rue du Brill', 'Rue de Mondorf', 'Route de Thionville', 'Rue des Romains', 'An der Gaass', 'Rue Neuve',
];

const round = (x: number, step: number) => Math.round(x / step) * step;
const noAccent = (s: string) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
const fmtThousands = (n: number, sep: string) => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, sep);

function offsetPoint(r: Rand, lat: number, lng: number, maxM: number, minM = 0): { lat: number; lng: number } {
  const d = minM + (maxM - minM) * Math.sqrt(r.float());
  const a = r.float() * 2 * Math.PI;
  return { lat: lat + (d * Math.cos(a)) / 111_320, lng: lng + (d * Math.sin(a)) / (111_320 * Math.cos((lat * Math.PI) / 180)) };
}

// Short name an agency writes for a reference place (quarters with two names: the first).
function shortName(pl: Place, r: Rand): string {
  const n = pl.name;
  if (n === 'Bonnevoie-Nord / Verlorenkost') return r.pick(['Bonnevoie', 'Verlorenkost', 'Bonnevoie-Nord']);
  if (n === 'Bonnevoie-Sud') return r.pick(['Bonnevoie', 'Bonnevoie-Sud']);
  if (n === 'Neudorf / Weimershof') return r.pick(['Neudorf', 'Weimershof']);
  if (n === 'Rollingergrund / Belair-Nord') return r.pick(['Rollingergrund', 'Belair-Nord']);
  if (n === 'Muhlenbach') return 'Mühlenbach';
  if (n === 'Pulvermuhl') return 'Pulvermühl';
  if (n === 'Ville Haute') return r.pick(['Ville-Haute', 'Centre']);
  if (n === 'Lalleng') return 'Lallange';
  if (n === 'Universitéit') return 'Belval';
  return n;
}

function misspell(s: string, r: Rand): string {
  if (s.length < 6) return s;
  const i = r.int(1, s.length - 3);
  return r.chance(0.5) ? s.slice(0, i) + s.slice(i + 1) : s.slice(0, i) + s[i + 1] + s[i] + s.slice(i + 2);
}

interface Market {
  ref: Reference;
  streetsOf: Map<Place, Street[]>;
}

function streetOf(m: Market, pl: Place, canton: string, r: Rand): Street {
  let list = m.streetsOf.get(pl);
  if (!list) {
    list = [];
    m.streetsOf.set(pl, list);
  }
  const big = pl.commune === CITY || pl.kind === 'quarter' || (m.ref.communeByName.get(pl.commune)?.population ?? 0) > 9000;
  const maxStreets = big ? 14 : 5;
  if (list.length < maxStreets && (list.length === 0 || r.chance(0.35))) {
    const base = postcodeOf(pl, canton);
    const code = big ? String(Math.min(Number(base) + r.int(0, 40), Math.floor(Number(base) / 1000) * 1000 + 999)).padStart(4, '0') : base;
    const radius = pl.commune === CITY ? 650 : pl.kind === 'main' ? 850 : 350;
    const pt = offsetPoint(r, pl.lat, pl.lng, radius);
    const used = new Set(list.map((s) => s.name));
    let name = r.pick(STREETS);
    for (let k = 0; k < 5 && used.has(name); k++) name = r.pick(STREETS);
    if (used.has(name)) name = `${name} ${list.length}`;
    list.push({ name, postcode: code, lat: pt.lat, lng: pt.lng });
  }
  return r.pick(list);
}

// ---------- the properties ----------

function areaFor(kind: Kind, bedrooms: number, r: Rand): number {
  const [lo, hi] =
    kind === 'room' ? [10, 22] : kind === 'studio' ? [24, 45] : kind === 'house' ? [110 + 20 * bedrooms, 150 + 30 * bedrooms] : ([[35, 48], [45, 68], [65, 98], [88, 130], [115, 170]] as const)[Math.min(bedrooms, 4)];
  return Math.round(r.between(lo, hi) * 10) / 10;
}

function priceFor(m: Market, p: { type: ListingType; kind: Kind; commune: string; place: Place; area: number }, r: Rand): { price: number; charges: number } {
  const pr = m.ref.prices(p.commune, p.commune === CITY ? p.place.name : undefined);
  const noise = Math.exp(0.11 * r.normal());
  if (p.type === 'SALE') {
    const m2 = p.kind === 'house' ? pr.saleHouseM2 : pr.saleFlatM2;
    const raw = m2 * p.area * Math.exp(pr.saleSpread * 0.6 * r.normal());
    const step = raw > 1_000_000 ? 10_000 : 1000;
    return { price: Math.max(90_000, round(raw, r.chance(0.3) ? step : 1000) - (r.chance(0.3) ? 1000 : 0)), charges: 0 };
  }
  if (p.kind === 'room') {
    return { price: round(r.between(650, 1150) * (p.commune === CITY ? 1.1 : 1), 10), charges: 0 };
  }
  const m2 = p.kind === 'house' ? pr.rentHouseM2 : pr.rentFlatM2;
  // Advertised rents per m2 are those of small flats mostly: larger homes cost less per m2.
  const perM2 = p.kind === 'house' ? m2 : Math.min(42, Math.max(14, m2 * Math.pow(p.area / 50, -0.35)));
  const price = Math.max(600, round(perM2 * p.area * noise, 10));
  const charges = round(p.area * r.between(1.6, 2.8), 10);
  return { price, charges };
}

function makeProperties(m: Market, n: number, seed: number): TenthProperty[] {
  const r = new Rand(seed ^ 0x4f4f);
  const communes = m.ref.communes;
  const out: TenthProperty[] = [];
  let groupN = 0;
  const newKey = () => `p4:${String(out.length + 1).padStart(5, '0')}`;

  const basePlace = (commune: string, rr: Rand): Place => {
    const places = m.ref.placesOf.get(commune)!;
    if (commune === CITY || commune === 'Esch-sur-Alzette') {
      const q = places.filter((p) => p.kind === 'quarter');
      if (q.length) return rr.pick(q);
    }
    const main = places.filter((p) => p.kind === 'main');
    if (main.length && (rr.chance(0.6) || places.length === main.length)) return rr.pick(main);
    return rr.pick(places);
  };

  const push = (p: Omit<TenthProperty, 'key'>) => {
    if (out.length < n) out.push({ ...p, key: newKey() });
  };

  while (out.length < n) {
    const rr = r.fork();
    const c = rr.weighted(communes, (x) => Math.pow(x.population, 0.95) * (x.name === CITY ? 1.3 : 1));
    const place = basePlace(c.name, rr);
    const type = rr.outcome<ListingType>([['RENT', 0.55], ['SALE', 0.35], ['FLATSHARE', 0.06], ['SUBLET', 0.04]]);
    const kind: Kind =
      type === 'FLATSHARE' ? 'room' : type === 'SUBLET' ? rr.outcome<Kind>([['studio', 0.4], ['flat', 0.6]]) : type === 'RENT' ? rr.outcome<Kind>([['studio', 0.18], ['flat', 0.72], ['house', 0.1]]) : rr.outcome<Kind>([['flat', 0.65], ['house', 0.35]]);
    const bedrooms = kind === 'studio' ? 0 : kind === 'room' ? rr.int(2, 5) : kind === 'house' ? rr.int(3, 5) : rr.outcome([[1, 0.3], [2, 0.45], [3, 0.2], [4, 0.05]] as const);
    const street = streetOf(m, place, c.canton, rr);
    const number = rr.int(1, 180);
    const bld = offsetPoint(rr, street.lat, street.lng, 120);
    const area = areaFor(kind, bedrooms, rr);
    const terrace = kind === 'flat' && rr.chance(0.5) ? rr.int(5, 20) : kind === 'house' ? rr.int(0, 40) : 0;
    const { price, charges } = priceFor(m, { type, kind, commune: c.name, place, area }, rr);
    const onMarket = new Date(NOW.getTime() - rr.between(3, 150) * DAY);
    const isVefa = type === 'SALE' && kind === 'flat' && VEFA_COMMUNES.has(c.name) && rr.chance(0.3);
    const base: Omit<TenthProperty, 'key'> = {
      type, kind, commune: c.name, canton: c.canton, place, street, number, lat: bld.lat, lng: bld.lng, area, terrace, bedrooms, price, charges, onMarket,
      tag: isVefa ? 'vefa' : 'plain', group: null,
    };

    if (isVefa) {
      // A new-build project: two or three layouts, 3-8 lots.
      const g = `vefa${++groupN}`;
      const layouts = Array.from({ length: rr.int(2, 3) }, () => {
        const b = rr.outcome([[1, 0.3], [2, 0.5], [3, 0.2]] as const);
        const a = areaFor('flat', b, rr);
        return { b, a, price: priceFor(m, { type, kind, commune: c.name, place, area: a }, rr).price * 1.12 };
      });
      const lots = rr.int(3, 8);
      for (let i = 0; i < lots; i++) {
        const l = rr.pick(layouts);
        const floor = rr.int(0, 5);
        push({
          ...base, tag: 'vefa', group: g, bedrooms: l.b, terrace: rr.int(6, 18),
          area: Math.round((l.a + (rr.chance(0.4) ? rr.between(0, 0.6) : 0)) * 100) / 100,
          price: round(l.price * (1 + 0.015 * floor), 1000), onMarket: new Date(base.onMarket.getTime() + rr.int(0, 10) * DAY),
        });
      }
      continue;
    }
    push(base);
    if (kind === 'flat' && (type === 'RENT' || type === 'SALE') && rr.chance(0.2)) {
      // Sibling flats of one residence.
      const g = `res${++groupN}`;
      out[out.length - 1].group = g;
      out[out.length - 1].tag = 'sibling';
      const k = rr.outcome([[1, 0.6], [2, 0.3], [3, 0.1]] as const);
      for (let i = 0; i < k; i++) {
        const floors = rr.int(1, 2) * (rr.chance(0.5) ? 1 : -1);
        const same = rr.chance(0.33);
        push({
          ...base, tag: 'sibling', group: g,
          area: same ? area : Math.round((area + rr.between(-5, 5)) * 10) / 10,
          price: round(price * (1 + 0.015 * floors), type === 'SALE' ? 1000 : 10),
          charges: round(charges * (1 + rr.between(-0.05, 0.05)), 10),
          onMarket: new Date(NOW.getTime() - rr.between(3, 150) * DAY),
        });
      }
    } else if (kind === 'flat' && rr.chance(0.08 / 0.8)) {
      const g = `look${++groupN}`;
      out[out.length - 1].group = g;
      out[out.length - 1].tag = 'lookalike';
      const st = streetOf(m, place, c.canton, rr);
      const pt = offsetPoint(rr, st.lat, st.lng, 120);
      push({
        ...base, tag: 'lookalike', group: g, street: st, number: rr.int(1, 180), lat: pt.lat, lng: pt.lng,
        area: Math.round((area + rr.between(-4, 4)) * 10) / 10, price: round(price * (1 + rr.between(-0.04, 0.04)), type === 'SALE' ? 1000 : 10),
        terrace: rr.chance(0.5) ? rr.int(5, 20) : 0, onMarket: new Date(NOW.getTime() - rr.between(3, 150) * DAY),
      });
    } else if (kind === 'house' && rr.chance(0.3)) {
      const g = `twin${++groupN}`;
      out[out.length - 1].group = g;
      out[out.length - 1].tag = 'twin-house';
      const pt = offsetPoint(rr, bld.lat, bld.lng, 14, 10);
      push({
        ...base, tag: 'twin-house', group: g, number: number + (rr.chance(0.5) ? 2 : 1), lat: pt.lat, lng: pt.lng,
        area: rr.chance(0.5) ? area : Math.round((area + rr.between(-3, 3)) * 10) / 10,
        price: rr.chance(0.5) ? price : round(price * (1 + rr.between(-0.02, 0.02)), type === 'SALE' ? 1000 : 10),
        onMarket: new Date(NOW.getTime() - rr.between(3, 150) * DAY),
      });
    } else if (kind === 'room' && rr.chance(0.4)) {
      const g = `share${++groupN}`;
      out[out.length - 1].group = g;
      out[out.length - 1].tag = 'room-in-flat';
      const k = rr.int(1, Math.min(3, bedrooms - 1));
      for (let i = 0; i < k; i++)
        push({ ...base, tag: 'room-in-flat', group: g, area: areaFor('room', bedrooms, rr), price: rr.chance(0.5) ? price : price + rr.pick([-50, 50]) });
    }
  }
  return out;
}

// ---------- who lists what ----------

function agencyWeight(a: Agency, p: TenthProperty): number {
  return (a.types[p.type] ?? 0) * a.region(p);
}

function assign(props: TenthProperty[], seed: number): Map<string, string[]> {
  const r = new Rand(seed ^ 0xa55a);
  const out = new Map<string, string[]>();
  const groupAgency = new Map<string, string>();
  for (const p of props) {
    const rr = r.fork();
    let primary: Agency | null = null;
    if (p.tag === 'vefa') primary = AGENCY.get('vefa-dev')!;
    else if (p.group && groupAgency.has(p.group) && rr.chance(p.tag === 'lookalike' ? 0.3 : 0.65)) primary = AGENCY.get(groupAgency.get(p.group)!)!;
    if (!primary || agencyWeight(primary, p) === 0) {
      const cands = AGENCIES.filter((a) => a.volume > 0 && agencyWeight(a, p) > 0);
      primary = rr.weighted(cands, (a) => a.volume * agencyWeight(a, p));
    }
    if (p.group && !groupAgency.has(p.group)) groupAgency.set(p.group, primary.source);
    const list = [primary.source];
    const pMulti = p.tag === 'vefa' ? 0.35 : p.kind === 'room' ? 0.15 : 0.28;
    if (rr.chance(pMulti)) {
      const extra = rr.chance(0.28) ? 2 : 1;
      const others = AGENCIES.filter((a) => a.volume > 0 && a !== primary && agencyWeight(a, p) > 0);
      for (const a of rr.weightedDistinct(others, extra, (a) => a.volume * agencyWeight(a, p))) list.push(a.source);
    }
    out.set(p.key, list);
  }
  return out;
}

// ---------- what each agency writes ----------

interface Rec extends AgencyRecord {
  // json extras
  net?: { net: number; charges: number };
}

function titleOf(p: TenthProperty, a: Agency, town: string): string | Record<string, string> {
  const fr =
    p.kind === 'room' ? `Chambre en colocation à ${town}` : p.kind === 'studio' ? `Studio à ${town}` : p.kind === 'house' ? `Maison ${p.bedrooms} chambres à ${town}` : `Appartement ${p.bedrooms} chambre${p.bedrooms > 1 ? 's' : ''} à ${town}`;
  const en =
    p.kind === 'room' ? `Room in flat share, ${town}` : p.kind === 'studio' ? `Studio in ${town}` : p.kind === 'house' ? `${p.bedrooms}-bedroom house in ${town}` : `${p.bedrooms}-bedroom flat in ${town}`;
  const de = p.kind === 'room' ? `WG-Zimmer in ${town}` : p.kind === 'studio' ? `Studio in ${town}` : p.kind === 'house' ? `Haus mit ${p.bedrooms} Schlafzimmern in ${town}` : `${p.bedrooms + 1}-Zimmer-Wohnung in ${town}`;
  if (a.format === 'openimmo') return de;
  if (a.format === 'csv') return fr;
  return { fr, en };
}

function placeText(m: Market, a: Agency, p: TenthProperty, r: Rand, coordsUsable: boolean): { town: string; quarter: string | null; townIsCommune: boolean; habit: string } {
  const c = m.ref.communeByName.get(p.commune)!;
  const pl = p.place;
  const isMain = pl.kind === 'main' || pl.name === p.commune;
  const city = p.commune === CITY;
  const q = pl.kind === 'quarter' ? shortName(pl, r) : null;
  const locName = isMain ? c.name : pl.name;
  const upper = (s: string) => noAccent(s).toUpperCase();
  switch (a.source) {
    case 'lux-central':
      return { town: c.name, quarter: q ?? (isMain ? null : pl.name), townIsCommune: true, habit: 'commune+locality' };
    case 'prestige-homes':
      if (city) return r.chance(0.7) ? { town: `Luxembourg-${q}`, quarter: null, townIsCommune: false, habit: 'compound' } : { town: `${q} (Luxembourg)`, quarter: null, townIsCommune: false, habit: 'compound-brackets' };
      return { town: locName, quarter: null, townIsCommune: false, habit: 'locality' };
    case 'immo-nord': {
      if (city) return { town: 'Luxemburg', quarter: pl.name === 'Gare' ? 'Bahnhofsviertel' : q, townIsCommune: false, habit: 'german' };
      const de = isMain ? c.nameDe : (pl.altNames[0] ?? pl.name);
      return { town: de, quarter: null, townIsCommune: false, habit: 'german' };
    }
    case 'westimmo': {
      const lb = r.chance(0.4);
      return { town: lb ? c.nameLb : c.name, quarter: q ?? (isMain ? null : pl.name), townIsCommune: false, habit: lb ? 'luxembourgish' : 'official' };
    }
    case 'sud-agence': {
      if (p.commune === 'Esch-sur-Alzette') {
        if (q === 'Belval') return { town: 'Belval', quarter: null, townIsCommune: false, habit: 'quarter' };
        const t = r.outcome<string>([['ESCH/ALZETTE', 0.6], ['Esch-Uelzecht', 0.15], [`Esch-sur-Alzette - ${q}`, 0.25]]);
        return { town: t, quarter: null, townIsCommune: false, habit: t.includes(' - ') ? 'commune-quarter' : 'esch-form' };
      }
      if (city) return { town: `Luxembourg-${q}`, quarter: null, townIsCommune: false, habit: 'compound' };
      if (coordsUsable && r.chance(0.05)) return { town: misspell(locName, r), quarter: null, townIsCommune: false, habit: 'misspelt' };
      return r.chance(0.5) ? { town: upper(locName), quarter: null, townIsCommune: false, habit: 'caps-no-accent' } : { town: locName, quarter: null, townIsCommune: false, habit: 'as-typed' };
    }
    case 'moselle-est':
      if (city) return { town: 'LUXEMBOURG', quarter: null, townIsCommune: false, habit: 'commune-only' };
      if (coordsUsable && r.chance(0.04)) return { town: upper(misspell(locName, r)), quarter: null, townIsCommune: false, habit: 'misspelt' };
      return { town: upper(locName), quarter: null, townIsCommune: false, habit: 'caps-no-accent' };
    case 'athome-relay':
      if (city) {
        const t = r.outcome<string>([[`Luxembourg-${q}`, 0.6], [`Lux-${q}`, 0.1], ['Luxembourg', 0.3]]);
        return { town: t, quarter: null, townIsCommune: false, habit: t === 'Luxembourg' ? 'commune-only' : 'compound' };
      }
      if (isMain && r.chance(0.05)) return { town: `${c.name} Centre`, quarter: null, townIsCommune: false, habit: 'centre' };
      if (q) return { town: `${c.name} - ${q}`, quarter: null, townIsCommune: false, habit: 'commune-quarter' };
      return { town: locName, quarter: null, townIsCommune: false, habit: 'locality' };
    case 'kot-lu':
      return { town: q ?? locName, quarter: null, townIsCommune: false, habit: q ? 'quarter' : 'locality' };
    case 'familia-immo':
      if (!isMain && r.chance(0.6)) return { town: c.name, quarter: null, townIsCommune: false, habit: 'commune-for-village' };
      if (q) return { town: c.name, quarter: null, townIsCommune: false, habit: 'commune-only' };
      if (coordsUsable && r.chance(0.04)) return { town: misspell(locName, r), quarter: null, townIsCommune: false, habit: 'misspelt' };
      return { town: locName, quarter: null, townIsCommune: false, habit: 'locality' };
    default: // vefa-dev
      return { town: c.name, quarter: q ?? (isMain ? null : pl.name), townIsCommune: false, habit: 'official+locality' };
  }
}

function render(m: Market, a: Agency, p: TenthProperty, ref: string, primary: boolean, r: Rand): { rec: Rec; meta: TenthRecordMeta } {
  const habits: string[] = [];
  const c = m.ref.communeByName.get(p.commune)!;

  // Coordinates.
  const mode = r.outcome(a.coords);
  let lat: number | null = null;
  let lng: number | null = null;
  let digits = a.digits;
  if (mode === 'building' || mode === 'swapped' || mode === 'trunc3') {
    const j = offsetPoint(r, p.lat, p.lng, 8);
    lat = j.lat;
    lng = j.lng;
  } else if (mode === 'street') ({ lat, lng } = p.street);
  else if (mode === 'locality') ({ lat, lng } = p.place);
  else if (mode === 'commune') ({ lat, lng } = c);
  else if (mode === 'zero') [lat, lng] = [0, 0];
  if (mode === 'trunc3' && lat !== null && lng !== null) {
    lat = Math.trunc(lat * 1000) / 1000;
    lng = Math.trunc(lng * 1000) / 1000;
    digits = 3;
  }
  if (mode === 'swapped') [lat, lng] = [lng, lat];
  habits.push(`coords:${mode}`);
  const usable = mode !== 'none' && mode !== 'zero';

  const place = placeText(m, a, p, r, usable);
  habits.push(`place:${place.habit}`);
  // A village whose name several communes bear ("Dirbach"): agencies there learn to add the
  // commune (OpenImmo: ort is the commune, the village its regionaler_zusatz).
  const pl = p.place;
  if (pl.sharedName && pl.kind !== 'main' && place.quarter === null && !place.townIsCommune && place.habit !== 'commune-for-village' && place.habit !== 'misspelt') {
    if (a.format === 'openimmo') {
      place.quarter = place.town;
      place.town = a.source === 'immo-nord' ? c.nameDe : c.name;
    } else place.town = `${place.town} (${c.name})`;
    habits.push('place:shared-name-with-commune');
  }

  // Postcode.
  const pcMode = r.outcome(a.postcode);
  const rawPc = pcMode === 'street' ? p.street.postcode : pcMode === 'locality' ? postcodeOf(p.place, p.canton) : null;
  const postcode = rawPc === null ? null : a.postcodePrefix ? `L-${rawPc}` : rawPc;
  habits.push(`postcode:${pcMode}`);

  // Area.
  let area: number | null = p.area;
  let areaText: string | undefined;
  if (r.chance(a.areaMissing)) {
    area = null;
    habits.push('area:missing');
  } else {
    switch (a.area) {
      case 'exact1': area = Math.round(p.area * 10) / 10; break;
      case 'exact2': area = Math.round(p.area * 100) / 100; break;
      case 'round1': area = Math.round(p.area); break;
      case 'trunc': area = Math.floor(p.area); break;
      case 'round5': {
        const withTerrace = p.terrace > 0 && r.chance(0.3);
        if (withTerrace) habits.push('area:incl-terrace');
        area = round(p.area + (withTerrace ? p.terrace : 0), 5);
        break;
      }
      case 'german':
        if (p.kind === 'flat' && p.terrace > 0) {
          area = Math.round((p.area + p.terrace / 2) * 100) / 100;
          habits.push('area:terrace-half');
        } else if (p.kind === 'house' && r.chance(0.6)) {
          area = Math.round(p.area * r.between(1.05, 1.15) * 100) / 100;
          habits.push('area:usable');
        } else area = Math.round(p.area * 100) / 100;
        break;
      default: break;
    }
    if (a.source === 'familia-immo' && r.chance(0.4 / 0.75)) {
      area = round(p.area, 5);
      habits.push('area:round5');
    } else habits.push(`area:${a.area}`);
  }

  // Rooms.
  let rooms: number | null = null;
  let roomsText: string | undefined;
  let bedrooms: number | null = null;
  const isRoom = p.kind === 'room';
  const trueBedrooms = isRoom ? 0 : p.bedrooms;
  switch (a.source) {
    case 'lux-central': bedrooms = trueBedrooms; habits.push('rooms:bedrooms'); break;
    case 'prestige-homes':
      bedrooms = trueBedrooms + (p.kind !== 'studio' && r.chance(0.1) ? 1 : 0);
      habits.push(bedrooms !== trueBedrooms ? 'rooms:study-as-bedroom' : 'rooms:bedrooms');
      break;
    case 'immo-nord':
      rooms = isRoom ? 1 : trueBedrooms + 1;
      if (p.kind === 'flat' && r.chance(1 / 3)) {
        roomsText = `${rooms}.5`;
        habits.push('rooms:half-room');
      } else habits.push('rooms:rooms');
      break;
    case 'westimmo': case 'vefa-dev': rooms = isRoom ? 1 : trueBedrooms + 1; habits.push('rooms:rooms'); break;
    case 'sud-agence': bedrooms = isRoom ? 1 : trueBedrooms; habits.push(isRoom ? 'rooms:room-as-1-bedroom' : 'rooms:bedrooms'); break;
    case 'moselle-est':
      if (r.chance(0.2)) habits.push('rooms:missing');
      else { rooms = trueBedrooms + 1; habits.push('rooms:rooms'); }
      break;
    case 'athome-relay': rooms = isRoom ? 1 : trueBedrooms + 1; bedrooms = isRoom ? 1 : trueBedrooms; habits.push('rooms:both'); break;
    case 'kot-lu': bedrooms = isRoom ? p.bedrooms : trueBedrooms; habits.push(isRoom ? 'rooms:flat-bedrooms-for-room' : 'rooms:bedrooms'); break;
    case 'familia-immo':
      if (r.chance(0.2)) habits.push('rooms:missing');
      else { bedrooms = trueBedrooms; habits.push('rooms:bedrooms'); }
      break;
    default: break;
  }

  // Price.
  let base = p.price;
  if (!primary && r.chance(0.12)) {
    base = base * (r.chance(0.75) ? 1 - r.between(0.03, 0.08) : 1 + r.between(0.03, 0.05));
    habits.push('price:relisted');
  } else if (!primary && p.type === 'SALE' && r.chance(0.15)) {
    base = base * (1 + (r.chance(0.5) ? 1 : -1) * r.between(0.005, 0.02));
    habits.push('price:co-mandate-differs');
  }
  let price: number;
  let priceText: string | undefined;
  let warmRent = false;
  let weekly = false;
  let net: Rec['net'];
  if (p.type === 'SALE') {
    price = a.saleRound > 1 ? round(base, a.saleRound) : round(base, 1000);
    if (a.saleRound > 1) habits.push(`price:sale-round-${a.saleRound}`);
    if (a.source === 'sud-agence') priceText = fmtThousands(price, '.');
    else if (a.source === 'moselle-est' || a.source === 'athome-relay') priceText = `${fmtThousands(price, ' ')} €`;
    else if (a.source === 'familia-immo') priceText = String(price);
  } else {
    const charges = p.charges;
    const rentMode = r.outcome(a.rent);
    habits.push(`price:${rentMode}`);
    const netRent = round(base, a.rentRound);
    const all = round(base + charges, a.rentRound);
    price = netRent;
    switch (rentMode) {
      case 'net': break;
      case 'net+charges': net = { net: netRent, charges }; break;
      case 'cc-unsaid': price = all; break;
      case 'cc-said': price = all; break;
      case 'warm': price = all; warmRent = true; break;
      case 'hc+ch': break;
    }
    if (p.type === 'SUBLET' && a.source === 'kot-lu' && r.chance(0.6)) {
      weekly = true;
      price = round((price * 12) / 52, 5);
      habits.push('price:weekly');
    }
    if (a.format === 'csv') {
      if (a.source === 'sud-agence') priceText = rentMode === 'cc-said' ? `${fmtThousands(price, ' ')} € CC` : `${fmtThousands(price, '.')},00`;
      else if (a.source === 'moselle-est') priceText = rentMode === 'hc+ch' ? `${fmtThousands(price, ' ')} € HC + ${charges} € ch.` : `${fmtThousands(price, ' ')} €`;
      else if (a.source === 'athome-relay') priceText = rentMode === 'cc-said' ? `${fmtThousands(price, ' ')} € charges comprises` : `${fmtThousands(price, ' ')} €`;
      else priceText = String(price);
    }
  }

  // Area as typed.
  if (area !== null && a.format === 'csv') {
    if (a.source === 'sud-agence') areaText = `${area} m²`;
    else if (a.source === 'athome-relay') areaText = String(area).replace('.', ',');
    else areaText = String(area);
  } else if (area !== null && a.format === 'openimmo' && a.area !== 'exact2' && a.area !== 'german') areaText = String(area);

  // Dates: the agency's own mandate date; OpenImmo: the last change.
  const listed = new Date(Math.min(NOW.getTime() - 3600_000, p.onMarket.getTime() + (primary ? r.between(0, 3) : r.between(0, 30)) * DAY));
  const date = a.format === 'openimmo' ? new Date(Math.min(NOW.getTime() - 3600_000, listed.getTime() + r.between(0, 20) * DAY)) : listed;

  const nImg = r.int(0, 6);
  const images = Array.from({ length: nImg }, (_, i) => `https://img.${a.source}.example/${ref.toLowerCase()}/${i + 1}.jpg`);
  const rec: Rec = {
    ref, type: p.type, kind: p.kind, title: titleOf(p, a, place.town), price, priceText, warmRent, weekly,
    area, areaText, rooms, roomsText, bedrooms,
    town: place.town, quarter: place.quarter, townIsCommune: place.townIsCommune, postcode,
    street: a.format === 'csv' ? null : `${p.number} ${p.street.name}`,
    lat, lng, coordDigits: digits, images,
    students: a.source === 'kot-lu' ? true : a.format === 'csv' ? (isRoom ? true : null) : isRoom ? true : false,
    date, link: `https://www.${a.source}.example/annonce/${encodeURIComponent(ref)}`, net,
  };
  const statedRooms = rooms ?? (bedrooms === null ? null : bedrooms + 1);
  const statedPrice = weekly ? Math.round((price * 52) / 12) : price;
  return {
    rec,
    meta: {
      key: `${a.source}\u0000${ref}`, property: p.key, source: a.source, habits,
      stated: { area, price: statedPrice, rooms: statedRooms, coords: mode === 'none' ? 'none' : mode === 'zero' ? 'zero' : mode === 'swapped' ? 'swapped' : 'usable', coordMode: mode, place: [place.town, place.quarter].filter(Boolean).join(' / '), postcode },
    },
  };
}

// JSON CRM export (docs/feed-formats.md section 3), with the net rent and charges object
// where the agency states them.
function writeJsonFeed(records: Rec[], agency: string, generatedAt: Date): string {
  const listings = records.map((r) => {
    const address = jsonAddress(r);
    const offer = JSON_OFFER[r.type];
    const price = r.net
      ? { rent: { net: r.net.net, charges: r.net.charges }, currency: 'EUR', period: 'month' }
      : { amount: r.price, currency: 'EUR', period: r.type === 'SALE' ? 'month' : r.weekly ? 'week' : 'month' };
    if (r.type === 'SALE') delete (price as Record<string, unknown>).period;
    const item: Record<string, unknown> = { ref: r.ref, offer, status: 'available', title: r.title, price };
    if (r.area !== null) item.surface_m2 = r.area;
    if (r.bedrooms !== null && r.bedrooms !== undefined) item.bedrooms = r.bedrooms;
    item.address = address;
    const d = r.coordDigits ?? 6;
    item.geo = typeof r.lat === 'number' && typeof r.lng === 'number' ? { lat: Number(r.lat.toFixed(d)), lon: Number(r.lng.toFixed(d)) } : null;
    item.media = r.images.map((url) => ({ type: 'photo', url }));
    if (r.students !== null) item.students = r.students;
    item.published_at = r.date.toISOString().replace(/\.\d{3}Z$/, 'Z');
    if (r.link) item.link = r.link;
    return item;
  });
  return JSON.stringify({ agency, generated_at: generatedAt.toISOString(), mode: 'full', listings }, null, 1) + '\n';
}

export function generateTenthSet(opts: { properties: number; seed: number }): TenthSet {
  const ref = loadReference();
  const m: Market = { ref, streetsOf: new Map() };
  const props = makeProperties(m, opts.properties, opts.seed);
  const who = assign(props, opts.seed);
  const r = new Rand(opts.seed ^ 0x1234);

  const recs = new Map<string, Rec[]>(AGENCIES.map((a) => [a.source, []]));
  const counters = new Map<string, number>(AGENCIES.map((a) => [a.source, 0]));
  const truth = new Map<string, string>();
  const meta = new Map<string, TenthRecordMeta>();
  for (const p of props) {
    const list = who.get(p.key)!;
    list.forEach((src, i) => {
      const a = AGENCY.get(src)!;
      const rr = r.fork();
      const n = counters.get(src)! + 1 + rr.int(0, 3);
      counters.set(src, n);
      const id = a.source === 'immo-nord' ? `${a.prefix}${String(n).padStart(4, '0')}` : `${a.prefix}${a.prefix.endsWith('-') ? '' : '-'}${1000 + n}`;
      const { rec, meta: mt } = render(m, a, p, id, i === 0, rr);
      recs.get(src)!.push(rec);
      truth.set(mt.key, p.key);
      meta.set(mt.key, mt);
    });
  }

  const feeds: FeedFile[] = [];
  for (const a of AGENCIES) {
    const list = recs.get(a.source)!;
    if (!list.length) continue;
    // An export is in the agency's own order (by reference), not the market's.
    list.sort((x, y) => (x.ref < y.ref ? -1 : x.ref > y.ref ? 1 : 0));
    let text: string;
    let fileName: string;
    if (a.format === 'json') {
      text = writeJsonFeed(list, a.name, new Date(NOW.getTime() - 2 * 3600_000));
      fileName = `${a.source}.json`;
    } else if (a.format === 'csv') {
      const style = a.source === 'sud-agence' ? { bom: true, crlf: true, coordComma: true } : a.source === 'moselle-est' ? { bom: true, agentColumn: true } : {};
      text = writeCsv(list, style);
      fileName = `${a.source}.csv`;
    } else {
      text = writeOpenImmo(list, { firma: a.name, anbieternr: a.prefix.replace(/-$/, '') });
      fileName = `${a.source}.openimmo.xml`;
    }
    feeds.push({ source: a.source, format: a.format, fileName, text, records: list.length });
  }

  // Notes: the set's make-up.
  const notes: Record<string, number> = {};
  const byProp = new Map<string, TenthRecordMeta[]>();
  for (const mt of meta.values()) byProp.set(mt.property, [...(byProp.get(mt.property) ?? []), mt]);
  const multi = [...byProp.values()].filter((l) => l.length > 1);
  notes['listings'] = truth.size;
  notes['multi-listed properties'] = multi.length;
  notes['... by three agencies'] = multi.filter((l) => l.length === 3).length;
  notes['... with coordinates missing (none or 0/0) on one side'] = multi.filter((l) => l.some((x) => x.stated.coords === 'none' || x.stated.coords === 'zero') && l.some((x) => x.stated.coords !== 'none' && x.stated.coords !== 'zero')).length;
  notes['... with stated areas more than 2 m2 apart'] = multi.filter((l) => {
    const as = l.map((x) => x.stated.area).filter((x): x is number => x !== null);
    return as.length > 1 && Math.max(...as) - Math.min(...as) > 2;
  }).length;
  notes['... with monthly prices more than 3 % apart'] = multi.filter((l) => {
    const ps = l.map((x) => x.stated.price);
    return Math.max(...ps) - Math.min(...ps) > 0.03 * Math.max(...ps);
  }).length;
  const tagCount = (t: Tag) => props.filter((p) => p.tag === t).length;
  notes['sibling flats in residences (properties)'] = tagCount('sibling');
  notes['new-build lots (properties)'] = tagCount('vefa');
  notes['look-alike flats (properties)'] = tagCount('lookalike');
  notes['semi-detached twin houses (properties)'] = tagCount('twin-house');
  notes['rooms of shared flats (properties)'] = tagCount('room-in-flat');
  // Hard-negative pairs listed by two different agencies / by the same agency.
  let cross = 0;
  let same = 0;
  const groups = new Map<string, TenthProperty[]>();
  for (const p of props) if (p.group) groups.set(p.group, [...(groups.get(p.group) ?? []), p]);
  for (const g of groups.values())
    for (let i = 0; i < g.length; i++)
      for (let j = i + 1; j < g.length; j++)
        for (const sa of who.get(g[i].key)!) for (const sb of who.get(g[j].key)!) (sa === sb ? same++ : cross++);
  notes['hard-negative listing pairs, same agency'] = same;
  notes['hard-negative listing pairs, different agencies'] = cross;
  for (const a of AGENCIES) notes[`listings of ${a.source} (${a.format})`] = recs.get(a.source)!.length;

  return {
    name: `fourth set (${props.length}, seed ${opts.seed})`,
    feeds,
    truth,
    properties: props.length,
    notes,
    meta,
    props: new Map(props.map((p) => [p.key, p])),
  };
}
