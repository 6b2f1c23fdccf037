/*
 * Third, independent evaluation set for cross-source deduplication.
 *
 * Written from docs/feed-formats.md (the formats as the agencies were given them), its three sample files (test/fixtures/feeds) and the reference data in
 * data/ only: no look at the deduplication code or at the other evaluation sets. The
 * description below was written first; the code implements it.
 *
 * ───────────────────────── THE MARKET AND ITS NOISE ─────────────────────────
 *
 * Properties. A property is one flat, studio, house or room. It stands in a building placed at
 * a place of one Luxembourg commune: a quarter of Luxembourg City (rents_luxembourg_city_quartiers
 * / localities kind quartier_luxembourg_city), a quarter of Esch-sur-Alzette, or a locality of
 * localities.csv whose plain name belongs to one commune only (ambiguous names such as Roodt or
 * Eschweiler are never used). Communes are drawn in proportion to (ad count)^0.85 from rents.csv
 * (rental ads for rentals, sale ads for sales; at least 1). Buildings lie within a few hundred
 * metres of their place's point, inside Luxembourg's bounding box, and carry a street, a house
 * number and a postcode from a plausible per-commune range (there is no postcode table; the
 * postcode always travels with a resolvable name).
 * Listing types: RENT ~66 %, SALE ~26 %, FLATSHARE (a room) ~5 %, SUBLET (furnished flat) ~3 %.
 * Bedrooms: studios 0 (city rentals 20 %), flats 1-4, houses 2-6; rooms = bedrooms + 1 for every
 * flat, studio and house; a flatshare room has 1 room. True living area has two decimals:
 * studio 24-42 m2, 1 bed 40-68, 2 beds 62-100, 3 beds 88-135, 4 beds 120-180; rooms 10-24 m2;
 * houses 45 + 32 x bedrooms +-25 m2.
 * Prices come from the reference data: a flat's rent is the place's mean advertised rent x
 * (area / 62)^0.8 x lognormal(sd 0.10) (quarter rents for the city; communes without a rent
 * figure use their sale price per m2, else their canton); house rents use the house rent per m2
 * (national 19.46 EUR/m2 scaled by the commune's rent level when not published); sales use the
 * advertised apartment / house price per m2 of the quarter or commune (fallback: registered
 * price, canton mean, national mean) x lognormal(sd 0.08-0.12); a flatshare room costs 45 % of
 * the place's mean rent, kept within 600-1100; a sublet costs 10 % more than the same flat let
 * unfurnished. The owner's asking price is rounded to 10 EUR (rent) or 1,000 / 5,000 EUR (sale).
 *
 * Buildings with several listed flats ("residences"): about 6 % of draws create a residence with
 * 2-7 listed units of one listing type, built from 1-3 layouts (bedrooms + area). Units of one
 * layout on different floors have the same area (45 %) or differ by 0.3-6 m2; their prices rise
 * by 1-2.5 % a floor (sales) or 0-1.2 % a floor (rents). So some sibling flats are as alike as
 * two listings of one flat: same building, same coordinates, same rooms, area within 2 m2,
 * price within 3 %. A residence is mandated to 1-3 agencies; its units are listed by those.
 * Look-alikes: after 8 % of single flats or houses (rentals and sales) a second property is made in the same place,
 * in another building 120-900 m away, same listing type and bedrooms, area +-3 m2 and price
 * +-4 % of the first.
 *
 * Agencies (five feeds, each with fixed habits):
 *  1. nordstad-immobilien (OpenImmo, VOLL): centre and north, some city. ort = official commune
 *     name, regionaler_zusatz = locality or quarter, plz "L-9010", street and floor given
 *     (ignored elements). Area as measured, 2 decimals ("78.35"). kaltmiete with 2 decimals,
 *     prices rounded to 1 EUR (rent) / 500 EUR (sale). anzahl_zimmer = rooms (integer), plus
 *     anzahl_schlafzimmer, kontaktperson and objektnr_intern (elements docs/feed-formats.md ignores).
 *     Coordinates at the building, 5 decimals, present for ~90 % of its listings. MIETE_PACHT /
 *     KAUF "true"/"false". Sublets flagged with user_defined_simplefield untervermietung = 1;
 *     flatshares as objektart zimmer. Titles in German or French.
 *  2. alzette-wunnen (OpenImmo, VOLL, with a byte-order mark): the south, Luxembourg City and the
 *     west. ort = the locality as in a postal address; for a commune's main locality or Luxembourg
 *     City / Esch quarters ort = the Luxembourgish commune name (Lëtzebuerg, Esch-Uelzecht,
 *     Déifferdeng, ... where the pairing is attested, else official) and regionaler_zusatz = the
 *     quarter, in its Luxembourgish/German variant where localities.csv lists one (Bonneweg,
 *     Zessingen, Mühlenbach, ...). plz "4410" without "L-". Area rounded to the whole m2.
 *     kaltmiete (rounded to 5 EUR) plus nebenkosten and warmmiete; sales rounded to 1,000 EUR.
 *     anzahl_zimmer = rooms, written "n.5" for ~30 % of flats (German half-room habit; rounds
 *     down to the same rooms). Coordinates at the street (15-70 m from the building, the same
 *     offset for every listing of one building), present ~55 %; missing ones are either absent
 *     or written as 0/0 (outside the box: dropped). VERMARKTUNGSART written "1"/"0". No sublets.
 *  3. gare-logements (CSV, the 16 columns exactly): Luxembourg City and its belt. Localité
 *     "Luxembourg-Gare" style in the city (quarter short name or listed variant, e.g.
 *     Luxembourg-Bonnevoie, Luxembourg-Centre), the accented locality name elsewhere, the
 *     commune name for Esch quarters; Code postal "L-1611". Prix "1 850 €" for rents (rounded
 *     to 10) and "1.250.000 €" for sales (rounded to 5,000). Surface "85,5 m²" (rounded to half
 *     a m2). Pièces empty, Chambres = bedrooms (blank for ~3 %: rooms unknown); colocation rows
 *     give Pièces 1 and Chambres 1. Latitude/Longitude with a decimal comma, 4 decimals, at the
 *     building, present ~80 %. Étudiants oui/non. Titles in French; text fields always quoted.
 *  4. minett-immo (CSV with a byte-order mark and two extra columns, Agent and Mandat): the
 *     south. Localité in capitals without accents (ESCH/ALZETTE for Esch-sur-Alzette and its
 *     quarters, PETANGE, BELVAUX, LUXEMBOURG for the whole city); Code postal "4410", empty for
 *     ~15 %. Prix "1.690,00" for rents (rounded to 5) and "1.250.000" for sales (rounded to
 *     1,000). Surface truncated to the whole m2 ("74"), empty for ~2 % of its single-agency
 *     listings. Both Pièces (= rooms) and Chambres given. Coordinates with a decimal point, 5
 *     decimals, at the street, present ~40 %, with latitude and longitude swapped in ~6 % of
 *     those. Type d'offre in capitals (LOCATION, VENTE, COLOCATION). Étudiants "oui" or empty.
 *     Minimal quoting (only fields holding ; or ").
 *  5. kirchberg-relocation (JSON CRM export, mode full): an expat relocation agency in the city
 *     and belt, mostly rentals and sublets, few sales, no flatshares. bedrooms only; surface_m2
 *     with one decimal; rents rounded to 25 EUR, sales to 10,000 (a sale's price object has no
 *     period: docs/feed-formats.md defines period for rents only); half of its sublets priced per
 *     week (monthly x 12 / 52 rounded to 5; read back as week x 52 / 12). address: street
 *     "12, Rue ...", locality = the quarter (Kirchberg, Belair, Bonnevoie ...) or locality,
 *     postcode "L-1855". geo at the building, 6 decimals, null for ~15 %. title {fr, en} or a
 *     plain English string; media photos plus sometimes a video. Every listing "available".
 *  An agency lists a property at most once. Every agency's ids are its own (NS-2026-00123,
 *  AW104233, GL-23817, MNT-0421, KR-1042), unique within the feed, issued in a shuffled order.
 *
 * Multi-listing: 25 % of the properties (850 of 3,400) are listed by 2 (72 %) or 3 (28 %)
 * agencies, chosen by each agency's regional and listing-type weights (sales 1.5x as likely to be
 * multi-listed as rentals, flatshares and sublets rarely). Each agency writes the same listing
 * type, the same commune (in its own naming), consistent rooms, and its own area and price: with
 * 30 % chance its area differs from the true one by up to 1.2 m2 (another measurement), with
 * 45 % chance its price differs by up to +-1.8 % (sd 0.8 %), then its own rounding. Redrawn
 * until every pair of listings of one property is within 2 m2 of area and 3 % of monthly price
 * as read from the feed text. Dates differ per agency (each lists it on its own day).
 * Coordinates: for one third of the multi-listed properties the coordinates are on one side only
 * (the agencies least likely to give coordinates drop them; with three agencies one or two drop
 * them); of the rest 92 % have coordinates in every listing and 8 % in none.
 *
 * Hard negatives (different properties that look alike) come from the residences (siblings,
 * same agency or across agencies), the look-alikes, and the ordinary density of the city
 * market; notes counts the listing pairs of different properties with the same commune,
 * listing type and rooms, area within 2 m2 and price within 3 %, by kind (same building or
 * not, same agency or not).
 *
 * Nothing here is rejected by docs/feed-formats.md: prices are EUR, communes resolve from a name, all
 * records are active (status available, umfang VOLL, no DELETE), coordinates are in the box or
 * deliberately 0/0 or swapped (both handled as docs/feed-formats.md says).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';

export interface ThirdFeed { source: string; format: 'openimmo' | 'csv' | 'json'; fileName: string; text: string; records: number }
export interface ThirdSet {
  name: string;
  feeds: ThirdFeed[];
  // `${source}\u0000${external_id}` -> property key (the same key for every listing of one property)
  truth: Map<string, string>;
  properties: number;
  notes: Record<string, number>; // counts worth reporting: multi-listed, with coords on one side only, hard negatives by kind, ...
}

// ───────────────────────── PRNG ─────────────────────────

function hash32(str: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < str.length; i++) {
    h ^= str.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  constructor(seed: number, label: string) {
    this.a = hash32(`${seed}|${label}|a`);
    this.b = hash32(`${seed}|${label}|b`);
    this.c = hash32(`${seed}|${label}|c`);
    this.d = hash32(`${seed}|${label}|d`) | 1;
    for (let i = 0; i < 20; i++) this.next();
  }
  next(): number {
    // sfc32
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }
  float(lo: number, hi: number): number { return lo + (hi - lo) * this.next(); }
  int(lo: number, hi: number): number { return lo + Math.floor(this.next() * (hi - lo + 1)); }
  chance(p: number): boolean { return this.next() < p; }
  pick<T>(arr: readonly T[]): T { return arr[Math.floor(this.next() * arr.length)]; }
  weighted<T>(items: readonly T[], weight: (t: T) => number): T {
    let total = 0;
    for (const it of items) total += Math.max(0, weight(it));
    let r = this.next() * total;
    for (const it of items) {
      r -= Math.max(0, weight(it));
      if (r < 0) return it;
    }
    return items[items.length - 1];
  }
  normal(mu: number, sd: number): number {
    const u = 1 - this.next();
    const v = this.next();
    return mu + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
  shuffle<T>(arr: T[]): T[] {
    for (let i = arr.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      const t = arr[i];
      arr[i] = arr[j];
      arr[j] = t;
    }
    return arr;
  }
}

// ───────────────────────── reference data ─────────────────────────

const DATA_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../data');

function readCsv(name: string): Record<string, string>[] {
  return parse(fs.readFileSync(path.join(DATA_DIR, name), 'utf8'), {
    columns: true,
    skip_empty_lines: true,
    bom: true,
  }) as Record<string, string>[];
}

function num(s: string | undefined): number {
  if (s === undefined || s.trim() === '') return NaN;
  return Number(s);
}

function fold(s: string): string {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

type Region = 'city' | 'belt' | 'south' | 'west' | 'centre' | 'north' | 'east';
type ListingType = 'RENT' | 'SALE' | 'FLATSHARE' | 'SUBLET';

interface Commune {
  lau2: string;
  name: string;
  nameLb: string;
  lbAttested: boolean;
  canton: string;
  lat: number;
  lng: number;
  region: Region;
  rentAds: number;
  saleAds: number;
  rent: number; // mean advertised monthly flat rent
  aptM2: number; // advertised flat sale price per m2
  houseM2: number;
  houseRentM2: number;
  postLo: number;
  postHi: number;
  places: Place[];
}

type PlaceKind = 'main' | 'locality' | 'quarter_city' | 'quarter_esch' | 'commune';

interface Place {
  id: number;
  commune: Commune;
  kind: PlaceKind;
  name: string; // official form
  alts: string[]; // variants listed in localities.csv
  lat: number;
  lng: number;
  radiusM: number;
  rent: number;
  aptM2: number;
  weight: number;
  postLo: number;
  postHi: number;
}

const CANTON_REGION: Record<string, Region> = {
  Luxembourg: 'belt',
  'Esch-sur-Alzette': 'south',
  Capellen: 'west',
  Mersch: 'centre',
  Redange: 'centre',
  Diekirch: 'north',
  Clervaux: 'north',
  Wiltz: 'north',
  Vianden: 'north',
  Grevenmacher: 'east',
  Remich: 'east',
  Echternach: 'east',
};

// Plausible postcode ranges (no postcode table exists in data/; a postcode is always written
// together with a name that resolves on its own).
const POSTCODE_RANGES: Record<string, [number, number]> = {
  Luxembourg: [1009, 2999], Strassen: [8001, 8080], Bertrange: [8050, 8099], Mamer: [8201, 8299],
  Hesperange: [5801, 5899], Walferdange: [7201, 7299], Steinsel: [7301, 7399], Niederanven: [6901, 6999],
  Sandweiler: [5201, 5299], Contern: [5310, 5339], Schuttrange: [5360, 5399], Kopstal: [8101, 8199],
  Leudelange: [3360, 3399], Lorentzweiler: [7301, 7399], 'Esch-sur-Alzette': [4001, 4399], Sanem: [4401, 4499],
  Differdange: [4501, 4599], 'Pétange': [4701, 4799], 'Käerjeng': [4901, 4999], Mondercange: [3901, 3999],
  Schifflange: [3801, 3899], Kayl: [3601, 3699], Rumelange: [3701, 3799], Dudelange: [3401, 3499],
  Bettembourg: [3201, 3299], Roeser: [3301, 3359], Mersch: [7501, 7599], Ettelbruck: [9001, 9099],
  Diekirch: [9201, 9299], Wiltz: [9501, 9599], Clervaux: [9701, 9799], Echternach: [6401, 6499],
  Grevenmacher: [6701, 6799], Remich: [5501, 5599], 'Mondorf-les-Bains': [5601, 5699], Junglinster: [6101, 6199],
  Steinfort: [8401, 8499], 'Redange/Attert': [8501, 8599], Vianden: [9401, 9499], Troisvierges: [9901, 9999],
  Weiswampach: [9990, 9999], Frisange: [5750, 5799], Kehlen: [8281, 8299], Dippach: [4970, 4999],
  'Reckange-sur-Mess': [3960, 3989], Mertert: [6601, 6699], Wormeldange: [5401, 5489],
};
const CANTON_POST: Record<string, [number, number]> = {
  Luxembourg: [5200, 8199], 'Esch-sur-Alzette': [3200, 4999], Capellen: [8200, 8499], Mersch: [7400, 7799],
  Redange: [8500, 8899], Diekirch: [9000, 9399], Vianden: [9400, 9499], Wiltz: [9500, 9699],
  Clervaux: [9700, 9999], Echternach: [6300, 6599], Grevenmacher: [6600, 6899], Remich: [5400, 5699],
};

interface Reference {
  communes: Commune[];
  places: Place[];
}

let REF_CACHE: Reference | null = null;

function loadReference(): Reference {
  if (REF_CACHE) return REF_CACHE;
  const communeRows = readCsv('communes.csv');
  const localityRows = readCsv('localities.csv');
  const rentRows = readCsv('rents.csv');
  const quarterRows = readCsv('rents_luxembourg_city_quartiers.csv');
  const salesFile = fs.readdirSync(DATA_DIR).find((f) => f.startsWith('sales_registered_apartments_') && f.endsWith('.csv'));
  const salesRows = salesFile ? readCsv(salesFile) : [];

  const rentBy = new Map(rentRows.filter((r) => r.lau2 && /^\d+$/.test(r.lau2)).map((r) => [r.lau2, r]));
  const salesBy = new Map(salesRows.filter((r) => r.lau2 && /^\d+$/.test(r.lau2)).map((r) => [r.lau2, r]));

  // Which communes can each folded name mean?
  const nameOwners = new Map<string, Set<string>>();
  const own = (n: string, commune: string) => {
    const k = fold(n);
    if (!k) return;
    let s = nameOwners.get(k);
    if (!s) nameOwners.set(k, (s = new Set()));
    s.add(commune);
  };
  for (const r of communeRows) {
    own(r.name, r.name);
    own(r.name_lb, r.name);
    own(r.name_de, r.name);
  }
  for (const r of localityRows) {
    own(r.locality, r.commune);
    if (r.locality_official_form) own(r.locality_official_form, r.commune);
    for (const a of (r.alt_names || '').split(';')) if (a.trim()) own(a.trim(), r.commune);
  }
  const unambiguous = (n: string) => (nameOwners.get(fold(n))?.size ?? 0) === 1;

  const communes: Commune[] = communeRows.map((r) => {
    const rr = rentBy.get(r.lau2);
    const sr = salesBy.get(r.lau2);
    const pr = POSTCODE_RANGES[r.name];
    let postLo: number;
    let postHi: number;
    if (pr) [postLo, postHi] = pr;
    else {
      const [lo, hi] = CANTON_POST[r.canton] ?? [5000, 8999];
      const blocks = Math.max(1, Math.floor((hi - lo) / 20));
      postLo = lo + (hash32(r.name) % blocks) * 20;
      postHi = postLo + 19;
    }
    const registered = num(rr?.apt_sale_registered_existing_avg_eur_m2);
    const registered2 = num(sr?.existing_avg_eur_m2);
    return {
      lau2: r.lau2,
      name: r.name,
      nameLb: r.name_lb,
      lbAttested: r.name_lb_basis === 'paired-in-source' || r.name_lb_basis === 'official-name-is-luxembourgish',
      canton: r.canton,
      lat: num(r.lat),
      lng: num(r.lng),
      region: r.name === 'Luxembourg' ? 'city' : CANTON_REGION[r.canton] ?? 'centre',
      rentAds: num(rr?.apt_rent_ads_n) || 0,
      saleAds: num(rr?.apt_sale_ads_n) || 0,
      rent: num(rr?.apt_rent_avg_eur_month),
      aptM2: num(rr?.apt_sale_advertised_avg_eur_m2) || (Number.isFinite(registered) ? registered * 1.1 : NaN) || (Number.isFinite(registered2) ? registered2 * 1.1 : NaN),
      houseM2: num(rr?.house_sale_advertised_avg_eur_m2),
      houseRentM2: num(rr?.house_rent_avg_eur_m2_month),
      postLo,
      postHi,
      places: [],
    };
  });

  // Fallbacks by canton, then national.
  const cantonMean = (key: 'rent' | 'aptM2' | 'houseM2', canton: string): number => {
    const vals = communes.filter((c) => c.canton === canton && Number.isFinite(c[key])).map((c) => c[key]);
    return vals.length ? vals.reduce((a, b) => a + b, 0) / vals.length : NaN;
  };
  for (const c of communes) {
    if (!Number.isFinite(c.houseM2)) c.houseM2 = Number.isFinite(c.aptM2) ? c.aptM2 * 0.72 : cantonMean('houseM2', c.canton) * 0.97 || 6054 * 0.9;
    if (!Number.isFinite(c.aptM2)) c.aptM2 = c.houseM2 * 1.35 || cantonMean('aptM2', c.canton) * 0.95 || 9391 * 0.85;
  }
  for (const c of communes) {
    if (!Number.isFinite(c.rent)) {
      const fromSale = 1650 * Math.pow(c.aptM2 / 8700, 0.8);
      const cm = cantonMean('rent', c.canton);
      c.rent = Number.isFinite(cm) ? 0.5 * fromSale + 0.5 * cm * 0.93 : fromSale;
      if (!Number.isFinite(c.rent)) c.rent = 1400;
    }
    if (!Number.isFinite(c.houseRentM2)) c.houseRentM2 = 19.46 * Math.pow(c.rent / 1600, 0.6);
  }

  const byName = new Map(communes.map((c) => [c.name, c]));
  const places: Place[] = [];
  const quarterBy = new Map(quarterRows.map((q) => [q.quartier, q]));
  const addPlace = (p: Omit<Place, 'id'>) => {
    const pl: Place = { ...p, id: places.length };
    places.push(pl);
    p.commune.places.push(pl);
  };

  for (const r of localityRows) {
    const c = byName.get(r.commune);
    if (!c) continue;
    const lat = num(r.lat);
    const lng = num(r.lng);
    if (!Number.isFinite(lat) || !Number.isFinite(lng)) continue;
    const alts = (r.alt_names || '').split(';').map((s) => s.trim()).filter(Boolean);
    if (r.kind === 'quartier_luxembourg_city') {
      const q = quarterBy.get(r.locality);
      const qRent = num(q?.apt_rent_avg_eur_month);
      const qM2 = num(q?.apt_sale_advertised_avg_eur_m2);
      const span = 95;
      const base = 1009 + (hash32(r.locality) % span) * 20;
      const busy = ['Gare', 'Kirchberg', 'Belair', 'Limpertsberg', 'Bonnevoie-Nord / Verlorenkost', 'Bonnevoie-Sud', 'Hollerich', 'Ville Haute', 'Gasperich', 'Merl'];
      addPlace({
        commune: c, kind: 'quarter_city', name: r.locality, alts, lat, lng, radiusM: 650,
        rent: Number.isFinite(qRent) ? qRent : c.rent, aptM2: Number.isFinite(qM2) ? qM2 : c.aptM2,
        weight: busy.includes(r.locality) ? 1.6 : 1, postLo: base, postHi: Math.min(2999, base + 40),
      });
    } else if (r.kind === 'quartier_esch') {
      addPlace({
        commune: c, kind: 'quarter_esch', name: r.locality, alts, lat, lng, radiusM: 300,
        rent: c.rent * (r.locality === 'Belval' || r.locality === 'Universitéit' ? 1.15 : 1), aptM2: c.aptM2 * (r.locality === 'Belval' ? 1.12 : 1),
        weight: 0.6 / 18, postLo: c.postLo, postHi: c.postHi,
      });
    } else if (r.kind === 'locality') {
      if (c.name === 'Luxembourg') continue; // the city is described by its quarters
      if (!unambiguous(r.locality)) continue;
      const main = fold(r.locality) === fold(c.name);
      addPlace({
        commune: c, kind: main ? 'main' : 'locality', name: r.locality, alts, lat, lng, radiusM: main ? 700 : 350,
        rent: c.rent * (main ? 1 : 0.95), aptM2: c.aptM2 * (main ? 1 : 0.96), weight: 0, postLo: c.postLo, postHi: c.postHi,
      });
    }
  }
  for (const c of communes) {
    if (c.places.length === 0) {
      addPlace({
        commune: c, kind: 'commune', name: c.name, alts: [], lat: c.lat, lng: c.lng, radiusM: 900,
        rent: c.rent, aptM2: c.aptM2, weight: 1, postLo: c.postLo, postHi: c.postHi,
      });
      continue;
    }
    if (c.name === 'Luxembourg') continue;
    const mains = c.places.filter((p) => p.kind === 'main');
    const others = c.places.filter((p) => p.kind === 'locality');
    const escher = c.places.filter((p) => p.kind === 'quarter_esch');
    if (escher.length) {
      for (const p of mains) p.weight = 0.4;
      for (const p of others) p.weight = 0.05;
      continue;
    }
    if (mains.length) {
      for (const p of mains) p.weight = 0.55 / mains.length;
      for (const p of others) p.weight = 0.45 / others.length;
    } else for (const p of others) p.weight = 1 / others.length;
  }
  REF_CACHE = { communes, places };
  return REF_CACHE;
}

// ───────────────────────── agencies ─────────────────────────

type AgencyId = 'nordstad' | 'alzette' | 'gare' | 'minett' | 'kirchberg';

interface Agency {
  id: AgencyId;
  source: string;
  format: 'openimmo' | 'csv' | 'json';
  fileName: string;
  regionW: Record<Region, number>;
  typeW: Record<ListingType, number>;
  coordRate: number;
  coordHabit: 'building' | 'street';
  rentStep: number;
  saleStep: number;
}

const AGENCIES: Agency[] = [
  {
    id: 'nordstad', source: 'nordstad-immobilien', format: 'openimmo', fileName: 'nordstad-immobilien.openimmo.xml',
    regionW: { city: 0.3, belt: 0.3, south: 0.05, west: 0.3, centre: 1, north: 1, east: 0.5 },
    typeW: { RENT: 1, SALE: 1.2, FLATSHARE: 0.3, SUBLET: 0.3 },
    coordRate: 0.9, coordHabit: 'building', rentStep: 1, saleStep: 500,
  },
  {
    id: 'alzette', source: 'alzette-wunnen', format: 'openimmo', fileName: 'alzette-wunnen.openimmo.xml',
    regionW: { city: 0.45, belt: 0.35, south: 1, west: 0.5, centre: 0.1, north: 0.05, east: 0.15 },
    typeW: { RENT: 1, SALE: 1, FLATSHARE: 1, SUBLET: 0 },
    coordRate: 0.55, coordHabit: 'street', rentStep: 5, saleStep: 1000,
  },
  {
    id: 'gare', source: 'gare-logements', format: 'csv', fileName: 'gare-logements.csv',
    regionW: { city: 1, belt: 0.8, south: 0.25, west: 0.5, centre: 0.35, north: 0.1, east: 0.4 },
    typeW: { RENT: 1, SALE: 0.7, FLATSHARE: 0.6, SUBLET: 0.6 },
    coordRate: 0.8, coordHabit: 'building', rentStep: 10, saleStep: 5000,
  },
  {
    id: 'minett', source: 'minett-immo', format: 'csv', fileName: 'minett-immo.csv',
    regionW: { city: 0.12, belt: 0.1, south: 1, west: 0.3, centre: 0, north: 0, east: 0.1 },
    typeW: { RENT: 1, SALE: 1.1, FLATSHARE: 0.8, SUBLET: 0 },
    coordRate: 0.4, coordHabit: 'street', rentStep: 5, saleStep: 1000,
  },
  {
    id: 'kirchberg', source: 'kirchberg-relocation', format: 'json', fileName: 'kirchberg-relocation.json',
    regionW: { city: 1, belt: 0.6, south: 0.08, west: 0.25, centre: 0.1, north: 0, east: 0.1 },
    typeW: { RENT: 1.3, SALE: 0.25, FLATSHARE: 0, SUBLET: 1.5 },
    coordRate: 0.85, coordHabit: 'building', rentStep: 25, saleStep: 10000,
  },
];

const agencyWeight = (a: Agency, region: Region, type: ListingType) => a.regionW[region] * a.typeW[type];

// ───────────────────────── market model ─────────────────────────

type Kind = 'studio' | 'flat' | 'duplex' | 'penthouse' | 'house' | 'room';

interface Building {
  id: number;
  place: Place;
  street: string;
  number: number;
  postcode: number;
  lat: number;
  lng: number;
  residence: boolean;
  mandate: Agency[];
}

interface Property {
  idx: number;
  key: string;
  building: Building;
  type: ListingType;
  kind: Kind;
  bedrooms: number; // for a room: 0 (rooms = 1)
  rooms: number;
  floor: number | null;
  area: number; // true, 2 decimals
  price: number; // owner's asking price, monthly for rentals
  students: boolean;
  furnished: boolean;
  balcony: boolean;
  terrace: boolean;
  parking: boolean;
  garden: boolean;
  group: 'single' | 'residence' | 'lookalike' | 'lookalike_seed';
  agencies: Agency[];
  listings: Listing[];
}

interface Listing {
  agency: Agency;
  prop: Property;
  extId: string;
  area: number | null; // as written
  priceAmount: number; // as written (weekly for weekly sublets)
  period: 'month' | 'week';
  monthly: number; // as read
  roomsRead: number | null;
  halfRoom: boolean;
  bedroomsBlank: boolean;
  coords: { lat: number; lng: number } | null; // true-ish coordinates the agency writes
  coordStyle: 'ok' | 'absent' | 'zero' | 'swapped';
  created: number; // ms UTC
  updated: number;
  students: boolean;
  images: string[];
  video: boolean;
  postcodeBlank: boolean;
  titleSeed: number;
  nebenkosten: number;
  agent: string;
}

const STREETS = [
  'Rue de la Gare', "Route d'Arlon", 'Rue Principale', "Rue de l'Église", 'Rue du Moulin', 'Rue des Jardins',
  'Rue de Luxembourg', 'Rue des Champs', 'Rue de la Forêt', 'Rue du Cimetière', 'Rue des Prés', "Rue de l'École",
  'Grand-Rue', 'Rue Pasteur', 'Rue Victor Hugo', 'Avenue de la Liberté', 'Rue de Strasbourg', 'Rue Michel Rodange',
  'Rue Dicks', 'Rue des Vergers', 'Rue du Parc', 'Rue Émile Mayrisch', "Rue de l'Alzette", 'Rue Jean-Pierre Brasseur',
  'Rue des Aubépines', 'Rue des Roses', 'Rue de la Montagne', 'Rue du Village', 'Rue Belle-Vue', 'Rue de la Chapelle',
  'Rue des Tilleuls', 'Op der Heed', 'Um Bierg', 'Rue Nicolas Martha', 'Rue du Fort Elisabeth', 'Avenue du Bois',
  'Rue de Hollerich', 'Rue de Bettembourg', 'Rue de Mondorf', 'Rue des Artisans', 'Rue Basse', 'Rue de la Source',
  'Rue du Château', 'Boulevard Pierre Dupong', 'Rue Zénon Bernard', 'Rue Large', 'An der Gaass', 'Rue des Pommiers',
];

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 25, 8, 0, 0); // 2026-11-25T08:00:00Z

function round2(x: number) { return Math.round(x * 100) / 100; }
function roundTo(x: number, step: number) { return Math.round(x / step) * step; }

function clampBox(lat: number, lng: number): [number, number] {
  return [Math.min(50.17, Math.max(49.46, lat)), Math.min(6.52, Math.max(5.75, lng))];
}

function offsetMeters(lat: number, lng: number, dNorth: number, dEast: number): [number, number] {
  return [lat + dNorth / 111_320, lng + dEast / (111_320 * Math.cos((lat * Math.PI) / 180))];
}

function bedroomArea(rng: Rng, b: number): number {
  const r: Record<number, [number, number]> = { 0: [24, 42], 1: [40, 68], 2: [62, 100], 3: [88, 135], 4: [120, 180] };
  const [lo, hi] = r[Math.min(4, b)];
  return round2(rng.float(lo, hi));
}

// ───────────────────────── generator ─────────────────────────

export function generateThirdSet(opts: { properties: number; seed: number }): ThirdSet {
  const N = Math.max(1, Math.floor(opts.properties));
  const seed = opts.seed;
  const ref = loadReference();
  const rng = new Rng(seed, 'market');

  const buildings: Building[] = [];
  const props: Property[] = [];
  const usedAddr = new Set<string>();

  const newBuilding = (place: Place, residence: boolean, near?: { lat: number; lng: number; minM: number; maxM: number }): Building => {
    let lat: number;
    let lng: number;
    if (near) {
      const d = rng.float(near.minM, near.maxM);
      const a = rng.float(0, 2 * Math.PI);
      [lat, lng] = offsetMeters(near.lat, near.lng, d * Math.cos(a), d * Math.sin(a));
    } else {
      const d = place.radiusM * Math.sqrt(rng.next());
      const a = rng.float(0, 2 * Math.PI);
      [lat, lng] = offsetMeters(place.lat, place.lng, d * Math.cos(a), d * Math.sin(a));
    }
    [lat, lng] = clampBox(lat, lng);
    let street = '';
    let number = 0;
    for (let i = 0; i < 50; i++) {
      street = rng.pick(STREETS);
      number = rng.int(1, residence ? 160 : 140);
      if (!usedAddr.has(`${place.id}|${street}|${number}`)) break;
    }
    usedAddr.add(`${place.id}|${street}|${number}`);
    const b: Building = {
      id: buildings.length, place, street, number,
      postcode: rng.int(place.postLo, Math.max(place.postLo, place.postHi)),
      lat, lng,
      residence, mandate: [],
    };
    buildings.push(b);
    return b;
  };

  const rentFor = (place: Place, kind: Kind, area: number): number => {
    if (kind === 'house') return area * place.commune.houseRentM2 * (place.kind === 'quarter_city' ? place.rent / place.commune.rent : 1) * Math.exp(rng.normal(0, 0.1));
    return place.rent * Math.pow(area / 62, 0.8) * Math.exp(rng.normal(0, 0.1));
  };
  const saleFor = (place: Place, kind: Kind, area: number): number => {
    if (kind === 'house') {
      const m2 = place.commune.houseM2 * (place.aptM2 / place.commune.aptM2);
      return area * m2 * Math.exp(rng.normal(0, 0.12));
    }
    return area * place.aptM2 * Math.exp(rng.normal(0, 0.08));
  };
  const ownerRound = (type: ListingType, p: number): number => {
    if (type === 'SALE') return p >= 400_000 ? roundTo(p, 5000) : roundTo(p, 1000);
    return roundTo(p, 10);
  };

  const pickBedrooms = (place: Place, type: ListingType): number => {
    const city = place.commune.region === 'city';
    const w = type === 'SALE' ? [5, 28, 42, 20, 5] : type === 'SUBLET' ? [30, 45, 20, 5, 0] : city ? [20, 38, 30, 10, 2] : [8, 30, 40, 18, 4];
    return rng.weighted([0, 1, 2, 3, 4], (b) => w[b]);
  };

  const mkProp = (building: Building, type: ListingType, kind: Kind, bedrooms: number, area: number, price: number, floor: number | null, group: Property['group']): Property => {
    const city = building.place.commune.region === 'city';
    const p: Property = {
      idx: props.length,
      key: '',
      building, type, kind, bedrooms,
      rooms: kind === 'room' ? 1 : bedrooms + 1,
      floor, area: round2(area), price: ownerRound(type, price),
      students: type === 'FLATSHARE' ? rng.chance(0.7) : type === 'RENT' && bedrooms <= 1 ? rng.chance(0.25) : rng.chance(0.04),
      furnished: type === 'SUBLET' || type === 'FLATSHARE' || (type === 'RENT' && rng.chance(city ? 0.15 : 0.08)),
      balcony: kind !== 'house' && rng.chance(0.55),
      terrace: rng.chance(kind === 'penthouse' ? 0.9 : 0.2),
      parking: rng.chance(kind === 'house' ? 0.8 : 0.5),
      garden: kind === 'house' ? rng.chance(0.85) : floor === 0 && rng.chance(0.35),
      group, agencies: [], listings: [],
    };
    props.push(p);
    return p;
  };

  const pickCommune = (type: ListingType): Commune =>
    rng.weighted(ref.communes, (c) => Math.pow(Math.max(1, type === 'SALE' ? c.saleAds : c.rentAds), 0.85));
  const pickPlace = (c: Commune): Place => rng.weighted(c.places, (p) => p.weight);

  const makeSingle = (place: Place, type: ListingType, building?: Building): Property => {
    const region = place.commune.region;
    if (type === 'FLATSHARE') {
      const b = building ?? newBuilding(place, false);
      const area = rng.float(10, 24);
      const price = Math.min(1100, Math.max(600, place.rent * 0.45)) * Math.exp(rng.normal(0, 0.08));
      return mkProp(b, type, 'room', 0, area, price, rng.int(0, 4), 'single');
    }
    const houseP = type === 'SALE' ? (region === 'city' ? 0.15 : region === 'belt' ? 0.4 : 0.5) : type === 'RENT' ? (region === 'city' ? 0.03 : 0.07) : 0;
    if (rng.chance(houseP)) {
      const b = building ?? newBuilding(place, false);
      const bed = rng.weighted([2, 3, 4, 5, 6], (x) => ({ 2: 4, 3: 40, 4: 35, 5: 18, 6: 3 })[x] ?? 0);
      const area = Math.max(95, 45 + 32 * bed + rng.float(-25, 25));
      const price = type === 'SALE' ? saleFor(place, 'house', area) : rentFor(place, 'house', area);
      return mkProp(b, type, 'house', bed, area, price, null, 'single');
    }
    const bed = pickBedrooms(place, type);
    const b = building ?? newBuilding(place, false);
    let area = bedroomArea(rng, bed);
    let kind: Kind = bed === 0 ? 'studio' : 'flat';
    const floor = rng.int(0, region === 'city' ? 8 : 4);
    if (bed >= 2 && rng.chance(0.06)) {
      kind = rng.chance(0.5) ? 'penthouse' : 'duplex';
      area += 12;
    }
    let price = type === 'SALE' ? saleFor(place, kind, area) : rentFor(place, kind, area);
    if (type === 'SUBLET') price *= 1.1;
    return mkProp(b, type, kind, bed, area, price, floor, 'single');
  };

  const makeResidence = (place: Place, type: ListingType): void => {
    const b = newBuilding(place, true);
    const k = rng.weighted([2, 3, 4, 5, 6, 7], (x) => ({ 2: 30, 3: 25, 4: 18, 5: 12, 6: 9, 7: 6 })[x] ?? 0);
    const nLayouts = rng.weighted([1, 2, 3], (x) => ({ 1: 35, 2: 45, 3: 20 })[x] ?? 0);
    const layouts = Array.from({ length: nLayouts }, () => {
      const bed = pickBedrooms(place, type === 'SALE' ? 'SALE' : 'RENT');
      const area = bedroomArea(rng, bed);
      const base = type === 'SALE' ? saleFor(place, 'flat', area) * 1.06 : rentFor(place, 'flat', area);
      return { bed, area, base };
    });
    const floors = rng.shuffle(Array.from({ length: k + 3 }, (_, i) => i)).slice(0, k);
    const prem = type === 'SALE' ? rng.float(0.01, 0.025) : rng.float(0, 0.012);
    for (const floor of floors) {
      const L = rng.pick(layouts);
      const area = rng.chance(0.45) ? L.area : Math.max(22, L.area + (rng.chance(0.5) ? 1 : -1) * rng.float(0.3, 6));
      const price = L.base * (1 + prem * floor) * (1 + rng.normal(0, 0.01));
      mkProp(b, type, L.bed === 0 ? 'studio' : 'flat', L.bed, area, price, floor, 'residence');
    }
  };

  const makeLookalike = (seedProp: Property): void => {
    const sb = seedProp.building;
    const b = newBuilding(sb.place, false, { lat: sb.lat, lng: sb.lng, minM: 120, maxM: 900 });
    const area = Math.max(20, seedProp.area + rng.float(-3, 3));
    const price = seedProp.price * (1 + rng.float(-0.04, 0.04));
    const floor = seedProp.kind === 'house' ? null : rng.int(0, 6);
    seedProp.group = 'lookalike_seed';
    mkProp(b, seedProp.type, seedProp.kind, seedProp.bedrooms, area, price, floor, 'lookalike');
  };

  // 1. Properties.
  const TYPES: [ListingType, number][] = [['RENT', 66], ['SALE', 26], ['FLATSHARE', 5], ['SUBLET', 3]];
  while (props.length < N) {
    const type = rng.weighted(TYPES, (t) => t[1])[0];
    const commune = pickCommune(type);
    const place = pickPlace(commune);
    if ((type === 'RENT' || type === 'SALE') && rng.chance(0.06)) makeResidence(place, type);
    else {
      const p = makeSingle(place, type);
      if ((type === 'RENT' || type === 'SALE') && rng.chance(0.08)) makeLookalike(p);
    }
  }
  props.length = N;
  const pad = String(N).length;
  for (const p of props) p.key = `s${seed}-p${String(p.idx + 1).padStart(pad, '0')}`;

  // 2. Agencies per property.
  const arng = new Rng(seed, 'agencies');
  const eligible = (p: Property) => AGENCIES.filter((a) => agencyWeight(a, p.building.place.commune.region, p.type) >= 0.05);
  const wOf = (p: Property) => (a: Agency) => agencyWeight(a, p.building.place.commune.region, p.type);
  const seenBuildings = new Set<number>();
  for (const p of props) {
    const b = p.building;
    const el = eligible(p);
    if (b.residence && !seenBuildings.has(b.id)) {
      seenBuildings.add(b.id);
      const m = arng.weighted([1, 2, 3], (x) => ({ 1: 40, 2: 40, 3: 20 })[x] ?? 0);
      const pool = [...el];
      while (b.mandate.length < Math.min(m, el.length)) {
        const a = arng.weighted(pool, wOf(p));
        b.mandate.push(a);
        pool.splice(pool.indexOf(a), 1);
      }
    }
    const from = b.residence && b.mandate.length ? b.mandate : el;
    p.agencies = [arng.weighted(from, wOf(p))];
  }
  const target = Math.round((N * 850) / 3400);
  const typeFactor: Record<ListingType, number> = { RENT: 1, SALE: 1.5, FLATSHARE: 0.15, SUBLET: 0.25 };
  const candidates = props
    .filter((p) => eligible(p).length >= 2)
    .map((p) => ({ p, key: -Math.log(1 - arng.next()) / (typeFactor[p.type] * (p.group === 'residence' ? 1.2 : 1)) }))
    .sort((a, b) => a.key - b.key)
    .slice(0, target);
  for (const { p } of candidates) {
    const el = eligible(p).filter((a) => !p.agencies.includes(a));
    const want = eligible(p).length >= 3 && arng.chance(0.28) ? 3 : 2;
    while (p.agencies.length < want && el.length) {
      const mand = el.filter((a) => p.building.mandate.includes(a));
      const a = mand.length && arng.chance(0.7) ? arng.weighted(mand, wOf(p)) : arng.weighted(el, wOf(p));
      p.agencies.push(a);
      el.splice(el.indexOf(a), 1);
    }
  }

  // 3. Listings: what each agency writes.
  const lrng = new Rng(seed, 'listings');
  const offsets = new Map<string, [number, number]>();
  const agencyCoords = (a: Agency, b: Building): { lat: number; lng: number } => {
    const k = `${a.id}|${b.id}`;
    let off = offsets.get(k);
    if (!off) {
      const r = new Rng(seed, `coords|${k}`);
      const d = a.coordHabit === 'street' ? r.float(15, 70) : Math.abs(r.normal(0, 3));
      const ang = r.float(0, 2 * Math.PI);
      off = [d * Math.cos(ang), d * Math.sin(ang)];
      offsets.set(k, off);
    }
    const [lat, lng] = offsetMeters(b.lat, b.lng, off[0], off[1]);
    return { lat, lng };
  };

  const readArea = (a: Agency, x: number, blank: boolean): number | null => {
    if (blank) return null;
    switch (a.id) {
      case 'nordstad': return round2(x);
      case 'alzette': return Math.round(x);
      case 'gare': return Math.round(x * 2) / 2;
      case 'minett': return Math.floor(x);
      case 'kirchberg': return Math.round(x * 10) / 10;
    }
  };
  const readPrice = (a: Agency, type: ListingType, x: number, weekly: boolean): { amount: number; monthly: number } => {
    if (type === 'SALE') {
      const amount = roundTo(x, a.saleStep);
      return { amount, monthly: amount };
    }
    if (weekly) {
      const amount = roundTo((x * 12) / 52, 5);
      return { amount, monthly: Math.round((amount * 52) / 12) };
    }
    const amount = roundTo(x, a.rentStep);
    return { amount, monthly: amount };
  };

  const agents = ['Anne', 'Marc', 'Sophie', 'Luc', 'Carla', 'Tom'];
  for (const p of props) {
    const multi = p.agencies.length > 1;
    let drafts: { area: number | null; amount: number; monthly: number; weekly: boolean; blank: boolean }[] = [];
    for (let attempt = 0; attempt < 40; attempt++) {
      const calm = attempt >= 30;
      drafts = p.agencies.map((a) => {
        const blank = !multi && a.id === 'minett' && lrng.chance(0.02);
        const areaOff = !calm && lrng.chance(0.3) ? lrng.float(-1.2, 1.2) : 0;
        const d = !calm && lrng.chance(0.45) ? Math.max(-0.018, Math.min(0.018, lrng.normal(0, 0.008))) : 0;
        const weekly = a.id === 'kirchberg' && p.type === 'SUBLET' && lrng.chance(0.5);
        const pr = readPrice(a, p.type, p.price * (1 + d), weekly);
        return { area: readArea(a, Math.max(8, p.area + areaOff), blank), amount: pr.amount, monthly: pr.monthly, weekly, blank };
      });
      if (!multi) break;
      const areas = drafts.map((x) => x.area as number);
      const prices = drafts.map((x) => x.monthly);
      const okArea = Math.max(...areas) - Math.min(...areas) <= 2;
      const okPrice = Math.max(...prices) <= Math.min(...prices) * 1.03;
      if (okArea && okPrice) break;
      if (attempt === 39) throw new Error(`third-set: cannot keep ${p.key} within 2 m2 / 3 %`);
    }
    // Coordinates.
    const present: boolean[] = p.agencies.map((a) => lrng.chance(a.coordRate));
    if (multi) {
      const oneSide = lrng.chance(1 / 3);
      if (oneSide) {
        const order = p.agencies.map((a, i) => ({ i, r: a.coordRate + lrng.float(0, 0.05) })).sort((x, y) => x.r - y.r);
        const drop = p.agencies.length === 3 && lrng.chance(0.4) ? 2 : 1;
        for (let j = 0; j < order.length; j++) present[order[j].i] = j >= drop;
      } else {
        const all = lrng.chance(0.92);
        for (let j = 0; j < present.length; j++) present[j] = all;
      }
    }
    const firstDay = lrng.float(2, 115);
    p.agencies.forEach((a, i) => {
      const dr = drafts[i];
      let coordStyle: Listing['coordStyle'] = present[i] ? 'ok' : 'absent';
      if (!present[i] && a.id === 'alzette' && lrng.chance(0.5)) coordStyle = 'zero';
      if (present[i] && a.id === 'minett' && lrng.chance(0.06)) coordStyle = 'swapped';
      const ageDays = Math.max(0.2, firstDay - (i === 0 ? 0 : lrng.float(0, 40)));
      const localHour = lrng.int(7, 19);
      const dayStart = Math.floor((NOW - ageDays * DAY) / DAY) * DAY;
      const created = dayStart + (localHour - 1) * 3_600_000 + lrng.int(0, 59) * 60_000;
      const nImg = lrng.int(1, 9);
      const halfRoom = a.id === 'alzette' && p.kind !== 'room' && p.kind !== 'house' && lrng.chance(0.3);
      const bedroomsBlank = a.id === 'gare' && p.kind !== 'room' && lrng.chance(multi ? 0.02 : 0.03);
      const roomsRead = a.id === 'gare' ? (p.kind === 'room' ? 1 : bedroomsBlank ? null : p.bedrooms + 1) : p.rooms;
      const listing: Listing = {
        agency: a, prop: p, extId: '',
        area: dr.area, priceAmount: dr.amount, period: dr.weekly ? 'week' : 'month', monthly: dr.monthly,
        roomsRead, halfRoom, bedroomsBlank,
        coords: present[i] ? agencyCoords(a, p.building) : null,
        coordStyle,
        created: Math.min(created, NOW - 3_600_000),
        updated: Math.min(NOW - 3_600_000, created + lrng.float(0, ageDays) * DAY),
        students: lrng.chance(0.05) ? !p.students : p.students,
        images: [],
        video: a.id === 'kirchberg' && lrng.chance(0.2),
        postcodeBlank: a.id === 'minett' && lrng.chance(0.15),
        titleSeed: lrng.int(0, 1_000_000),
        nebenkosten: roundTo(Math.max(90, p.area * lrng.float(2.2, 3.8)), 10),
        agent: lrng.pick(agents),
      };
      listing.images = Array.from({ length: nImg }, (_, j) => `${j + 1}`);
      p.listings.push(listing);
    });
  }

  // 4. Ids per agency, shuffled order.
  const irng = new Rng(seed, 'ids');
  const byAgency = new Map<AgencyId, Listing[]>(AGENCIES.map((a) => [a.id, []]));
  for (const p of props) for (const l of p.listings) byAgency.get(l.agency.id)!.push(l);
  for (const a of AGENCIES) {
    const ls = irng.shuffle(byAgency.get(a.id)!);
    let seq = irng.int(100, 4000);
    for (const l of ls) {
      seq += irng.int(1, 4);
      switch (a.id) {
        case 'nordstad': l.extId = `NS-2026-${String(seq).padStart(5, '0')}`; break;
        case 'alzette': l.extId = `AW${100000 + seq}`; break;
        case 'gare': l.extId = `GL-${20000 + seq}`; break;
        case 'minett': l.extId = `MNT-${String(seq).padStart(4, '0')}`; break;
        case 'kirchberg': l.extId = `KR-${1000 + seq}`; break;
      }
    }
  }

  // 5. Feeds.
  const trng = new Rng(seed, 'text');
  const feeds: ThirdFeed[] = AGENCIES.map((a) => {
    const ls = byAgency.get(a.id)!;
    const text = a.id === 'nordstad' ? writeNordstad(ls, trng) : a.id === 'alzette' ? writeAlzette(ls, trng) : a.id === 'gare' ? writeGare(ls, trng) : a.id === 'minett' ? writeMinett(ls, trng) : writeKirchberg(ls, trng);
    return { source: a.source, format: a.format, fileName: a.fileName, text, records: ls.length };
  });

  const truth = new Map<string, string>();
  for (const p of props) for (const l of p.listings) truth.set(`${l.agency.source}\u0000${l.extId}`, p.key);

  return {
    name: `third-set (seed ${seed}, ${N} properties)`,
    feeds,
    truth,
    properties: N,
    notes: computeNotes(props),
  };
}

// ───────────────────────── notes ─────────────────────────

function computeNotes(props: Property[]): Record<string, number> {
  const notes: Record<string, number> = {};
  const inc = (k: string, n = 1) => { notes[k] = (notes[k] ?? 0) + n; };
  const listings = props.flatMap((p) => p.listings);
  notes.properties = props.length;
  notes.listings = listings.length;
  for (const a of AGENCIES) notes[`records_${a.source}`] = listings.filter((l) => l.agency === a).length;
  for (const t of ['RENT', 'SALE', 'FLATSHARE', 'SUBLET'] as ListingType[]) notes[`properties_${t.toLowerCase()}`] = props.filter((p) => p.type === t).length;
  notes.properties_city = props.filter((p) => p.building.place.commune.region === 'city').length;
  notes.properties_house = props.filter((p) => p.kind === 'house').length;
  notes.multi_listed = 0;
  for (const p of props) {
    const n = p.listings.length;
    if (n < 2) continue;
    inc('multi_listed');
    inc(`multi_listed_by_${n}`);
    const withC = p.listings.filter((l) => l.coords !== null).length;
    if (withC === n) inc('multi_coords_every_listing');
    else if (withC === 0) inc('multi_coords_no_listing');
    else inc('multi_coords_one_side_only');
    const formats = new Set(p.listings.map((l) => l.agency.format));
    inc(formats.size === 1 ? 'multi_same_format' : 'multi_cross_format');
    const areas = p.listings.map((l) => l.area as number);
    const prices = p.listings.map((l) => l.monthly);
    if (Math.max(...areas) - Math.min(...areas) > 1) inc('multi_area_gap_over_1m2');
    if (Math.max(...prices) / Math.min(...prices) - 1 > 0.015) inc('multi_price_gap_over_1_5pct');
    if (p.listings.some((l) => l.period === 'week')) inc('multi_with_weekly_price');
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) inc('true_duplicate_pairs');
  }
  notes.multi_coords_one_side_only ??= 0;
  notes.residence_buildings = new Set(props.filter((p) => p.group === 'residence').map((p) => p.building.id)).size;
  notes.residence_units = props.filter((p) => p.group === 'residence').length;
  notes.lookalike_properties = props.filter((p) => p.group === 'lookalike').length;
  notes.listings_without_coords = listings.filter((l) => l.coords === null).length;
  notes.listings_coords_zero = listings.filter((l) => l.coordStyle === 'zero').length;
  notes.listings_coords_swapped = listings.filter((l) => l.coordStyle === 'swapped').length;
  notes.listings_without_area = listings.filter((l) => l.area === null).length;
  notes.listings_without_rooms = listings.filter((l) => l.roomsRead === null).length;
  notes.listings_weekly_price = listings.filter((l) => l.period === 'week').length;

  // Hard negatives: listing pairs of different properties, same commune, type and rooms (or
  // rooms unknown), area within 2 m2 and monthly price within 3 %.
  const groups = new Map<string, Listing[]>();
  for (const l of listings) {
    const k = `${l.prop.building.place.commune.name}|${l.prop.type}`;
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(l);
  }
  const kinds = ['hn_same_building_cross_agency', 'hn_same_building_same_agency', 'hn_other_building_cross_agency', 'hn_other_building_same_agency', 'hn_lookalike_pair_cross_agency', 'hn_lookalike_pair_same_agency'];
  for (const k of kinds) notes[k] = 0;
  let siblingPairsAny = 0;
  for (const g of groups.values()) {
    g.sort((x, y) => x.monthly - y.monthly);
    for (let i = 0; i < g.length; i++) {
      const x = g[i];
      for (let j = i + 1; j < g.length && g[j].monthly <= x.monthly * 1.03; j++) {
        const y = g[j];
        if (x.prop === y.prop) continue;
        if (x.area === null || y.area === null || Math.abs(x.area - y.area) > 2) continue;
        if (x.roomsRead !== null && y.roomsRead !== null && x.roomsRead !== y.roomsRead) continue;
        const sameB = x.prop.building === y.prop.building;
        const sameA = x.agency === y.agency;
        inc(`hn_${sameB ? 'same' : 'other'}_building_${sameA ? 'same' : 'cross'}_agency`);
        const look = (x.prop.group === 'lookalike' || y.prop.group === 'lookalike') && (x.prop.idx - y.prop.idx === 1 || y.prop.idx - x.prop.idx === 1);
        if (look) inc(`hn_lookalike_pair_${sameA ? 'same' : 'cross'}_agency`);
      }
    }
  }
  const byBuilding = new Map<number, Listing[]>();
  for (const l of listings) {
    if (!l.prop.building.residence) continue;
    let g = byBuilding.get(l.prop.building.id);
    if (!g) byBuilding.set(l.prop.building.id, (g = []));
    g.push(l);
  }
  for (const g of byBuilding.values()) for (let i = 0; i < g.length; i++) for (let j = i + 1; j < g.length; j++) if (g[i].prop !== g[j].prop) siblingPairsAny++;
  notes.sibling_listing_pairs_any = siblingPairsAny;
  return notes;
}

// ───────────────────────── naming habits ─────────────────────────

function quarterShort(place: Place, style: 'fr' | 'lb'): string {
  const n = place.name;
  if (style === 'lb') {
    const lbAlt: Record<string, string> = {
      'Bonnevoie-Nord / Verlorenkost': 'Bonneweg', 'Bonnevoie-Sud': 'Bonneweg', Cessange: 'Zessingen', Dommeldange: 'Dommeldingen',
      Muhlenbach: 'Mühlenbach', Pulvermuhl: 'Pulvermühl', 'Neudorf / Weimershof': 'Neudorf', 'Rollingergrund / Belair-Nord': 'Rollingergrund',
      'Ville Haute': 'Oberstadt',
    };
    return lbAlt[n] ?? n;
  }
  const frAlt: Record<string, string> = {
    'Bonnevoie-Nord / Verlorenkost': 'Bonnevoie', 'Bonnevoie-Sud': 'Bonnevoie', 'Neudorf / Weimershof': 'Neudorf',
    'Rollingergrund / Belair-Nord': 'Rollingergrund', 'Ville Haute': 'Centre', Pulvermuhl: 'Pulvermühl', Muhlenbach: 'Muhlenbach',
  };
  return frAlt[n] ?? n;
}

function upperNoAccents(s: string): string {
  return s.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toUpperCase();
}

/** The plain place name an agency would put in a title. */
function titlePlace(p: Property, style: 'fr' | 'lb' | 'de'): string {
  const pl = p.building.place;
  if (pl.kind === 'quarter_city') return style === 'fr' ? `Luxembourg-${quarterShort(pl, 'fr')}` : quarterShort(pl, 'lb');
  if (pl.kind === 'quarter_esch') return style === 'lb' ? 'Esch-Uelzecht' : 'Esch-sur-Alzette';
  return pl.name;
}

// ───────────────────────── text helpers ─────────────────────────

function xmlEsc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function csvField(s: string, always: boolean): string {
  if (always || /[;"\n\r]/.test(s)) return `"${s.replace(/"/g, '""')}"`;
  return s;
}

function thousands(n: number, sep: string): string {
  const s = String(Math.round(n));
  return s.replace(/\B(?=(\d{3})+(?!\d))/g, sep);
}

function isoDate(ms: number): string { return new Date(ms).toISOString().slice(0, 10); }

function luxLocal(ms: number): string {
  // Europe/Luxembourg: UTC+2 until 2026-10-25 01:00 UTC, then UTC+1 (and before 2026-03-29 01:00 UTC).
  const summer = ms >= Date.UTC(2026, 2, 29, 1) && ms < Date.UTC(2026, 9, 25, 1);
  const d = new Date(ms + (summer ? 2 : 1) * 3_600_000);
  const p2 = (x: number) => String(x).padStart(2, '0');
  return `${p2(d.getUTCDate())}/${p2(d.getUTCMonth() + 1)}/${d.getUTCFullYear()} ${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}`;
}

function frKind(p: Property): string {
  switch (p.kind) {
    case 'studio': return 'Studio';
    case 'house': return 'Maison';
    case 'room': return 'Chambre';
    case 'duplex': return 'Duplex';
    case 'penthouse': return 'Penthouse';
    default: return 'Appartement';
  }
}

function frTitle(p: Property, place: string, r: Rng): string {
  const feats: string[] = [];
  if (p.furnished && p.type !== 'FLATSHARE') feats.push('meublé');
  if (p.terrace) feats.push('avec terrasse');
  else if (p.balcony && r.chance(0.6)) feats.push('avec balcon');
  if (p.garden && p.kind === 'house') feats.push('jardin');
  if (p.parking && r.chance(0.4)) feats.push('parking');
  const sale = p.type === 'SALE';
  if (p.kind === 'room') return r.pick([`Chambre en colocation à ${place}`, `Colocation - chambre meublée, ${place}`, `Chambre meublée en colocation (${place})`]);
  const head = p.kind === 'studio' ? 'Studio' : p.kind === 'house' ? `Maison ${p.bedrooms} chambres` : `${frKind(p)} ${p.bedrooms} chambre${p.bedrooms > 1 ? 's' : ''}`;
  const floor = p.floor !== null && p.kind !== 'house' && r.chance(0.35) ? (p.floor === 0 ? ' au rez-de-chaussée' : ` au ${p.floor}${p.floor === 1 ? 'er' : 'e'} étage`) : '';
  const f = feats.length ? ` ${feats.slice(0, 2).join(', ')}` : '';
  const lead = sale ? r.pick(['', 'À vendre : ', 'Vente - ']) : p.type === 'SUBLET' ? 'Sous-location : ' : r.pick(['', '', 'À louer : ']);
  return `${lead}${head}${f}${floor} à ${place}`.replace(/\s+/g, ' ').trim();
}

function deTitle(p: Property, place: string, r: Rng): string {
  if (p.kind === 'room') return `WG-Zimmer in ${place}`;
  if (p.kind === 'house') return `${r.pick(['Einfamilienhaus', 'Reihenhaus', 'Doppelhaushälfte'])} mit ${p.bedrooms} Schlafzimmern in ${place}${p.garden ? ' - Garten' : ''}`;
  if (p.kind === 'studio') return `${p.furnished ? 'Möbliertes ' : ''}Studio in ${place}`;
  const bal = p.terrace ? ' mit Terrasse' : p.balcony ? ' mit Balkon' : '';
  const sub = p.type === 'SUBLET' ? ' zur Untermiete' : '';
  return `${p.rooms}-Zimmer-Wohnung${bal}${sub} in ${place}`;
}

function lbTitle(p: Property, place: string): string {
  if (p.kind === 'room') return `Zëmmer an enger WG zu ${place}`;
  if (p.kind === 'house') return `Haus mat ${p.bedrooms} Schlofzëmmer zu ${place}`;
  if (p.kind === 'studio') return `Studio zu ${place}`;
  return `Appartement mat ${p.bedrooms} Schlofzëmmer zu ${place}`;
}

function enTitle(p: Property, place: string, r: Rng): string {
  const words = ['Studio', 'One', 'Two', 'Three', 'Four', 'Five', 'Six'];
  const furn = p.furnished ? 'furnished ' : '';
  if (p.kind === 'studio') return `${p.furnished ? 'Furnished studio' : 'Studio'} in ${place}`;
  if (p.kind === 'house') return `${words[p.bedrooms]}-bedroom house in ${place}${p.garden ? ' with garden' : ''}`;
  const extra = p.terrace ? ', terrace' : p.balcony && r.chance(0.5) ? ', balcony' : '';
  const sub = p.type === 'SUBLET' ? 'Sublet: ' : p.type === 'SALE' ? 'For sale: ' : '';
  return `${sub}${words[p.bedrooms]}-bedroom ${furn}${p.kind === 'penthouse' ? 'penthouse' : 'flat'} in ${place}${extra}`;
}

// ───────────────────────── writers ─────────────────────────

function oiObjektart(p: Property, r: Rng): string {
  if (p.kind === 'room') return '<zimmer zimmertyp="ZIMMER"/>';
  if (p.kind === 'house') return `<haus haustyp="${r.pick(['EINFAMILIENHAUS', 'REIHENHAUS', 'DOPPELHAUSHAELFTE'])}"/>`;
  const typ = p.kind === 'penthouse' ? 'PENTHOUSE' : p.kind === 'duplex' ? 'MAISONETTE' : p.floor === 0 ? 'ERDGESCHOSS' : 'ETAGE';
  return `<wohnung wohnungtyp="${typ}"/>`;
}

function writeNordstad(ls: Listing[], r: Rng): string {
  const out: string[] = [];
  out.push('<?xml version="1.0" encoding="UTF-8"?>');
  out.push('<openimmo>');
  out.push('  <uebertragung art="OFFLINE" umfang="VOLL" modus="NEW" version="1.2.7" sendersoftware="ImmoSoft Pro" techn_email="it@nordstad-immobilien.example"/>');
  out.push('  <anbieter>');
  out.push('    <anbieternr>NS-01</anbieternr>');
  out.push('    <firma>Nordstad Immobilien S.à r.l.</firma>');
  for (const l of ls) {
    const p = l.prop;
    const b = p.building;
    const pl = b.place;
    const tr = new Rng(l.titleSeed, 'nordstad');
    const sale = p.type === 'SALE';
    const zusatz = pl.kind === 'quarter_city' ? quarterShort(pl, 'fr') : pl.kind === 'main' || pl.kind === 'commune' ? '' : pl.name;
    const title = tr.chance(0.55) ? deTitle(p, titlePlace(p, 'de'), tr) : frTitle(p, titlePlace(p, 'fr'), tr);
    out.push('    <immobilie>');
    out.push('      <objektkategorie>');
    out.push('        <nutzungsart WOHNEN="true" GEWERBE="false"/>');
    out.push(`        <vermarktungsart KAUF="${sale}" MIETE_PACHT="${!sale}"/>`);
    out.push(`        <objektart>${oiObjektart(p, tr)}</objektart>`);
    out.push('      </objektkategorie>');
    out.push('      <geo>');
    out.push(`        <plz>L-${b.postcode}</plz>`);
    out.push(`        <ort>${xmlEsc(pl.commune.name)}</ort>`);
    if (l.coords) out.push(`        <geokoordinaten breitengrad="${l.coords.lat.toFixed(5)}" laengengrad="${l.coords.lng.toFixed(5)}"/>`);
    out.push(`        <strasse>${xmlEsc(b.street)}</strasse>`);
    out.push(`        <hausnummer>${b.number}</hausnummer>`);
    if (zusatz) out.push(`        <regionaler_zusatz>${xmlEsc(zusatz)}</regionaler_zusatz>`);
    out.push('        <land iso_land="LUX"/>');
    if (p.floor !== null) out.push(`        <etage>${p.floor}</etage>`);
    out.push('      </geo>');
    out.push('      <preise>');
    if (sale) out.push(`        <kaufpreis>${l.priceAmount}</kaufpreis>`);
    else {
      out.push(`        <kaltmiete>${l.priceAmount.toFixed(2)}</kaltmiete>`);
      out.push(`        <nebenkosten>${l.nebenkosten.toFixed(2)}</nebenkosten>`);
    }
    out.push('        <waehrung iso_waehrung="EUR"/>');
    out.push('      </preise>');
    out.push('      <flaechen>');
    out.push(`        <wohnflaeche>${(l.area as number).toFixed(2)}</wohnflaeche>`);
    out.push(`        <anzahl_zimmer>${p.rooms}</anzahl_zimmer>`);
    if (p.kind !== 'room' && p.kind !== 'studio') out.push(`        <anzahl_schlafzimmer>${p.bedrooms}</anzahl_schlafzimmer>`);
    out.push('      </flaechen>');
    out.push(`      <freitexte><objekttitel>${xmlEsc(title)}</objekttitel></freitexte>`);
    out.push('      <anhaenge>');
    for (const img of l.images) out.push(`        <anhang location="REMOTE" gruppe="BILD"><daten><pfad>https://img.nordstad-immobilien.example/${l.extId.toLowerCase()}/${img}.jpg</pfad></daten></anhang>`);
    if (r.chance(0.3)) out.push(`        <anhang location="REMOTE" gruppe="GRUNDRISS"><daten><pfad>https://img.nordstad-immobilien.example/${l.extId.toLowerCase()}/grundriss.pdf</pfad></daten></anhang>`);
    out.push('      </anhaenge>');
    out.push('      <verwaltung_objekt>');
    out.push(`        <user_defined_simplefield feldname="studenten">${l.students ? 1 : 0}</user_defined_simplefield>`);
    if (p.type === 'SUBLET') out.push('        <user_defined_simplefield feldname="untervermietung">1</user_defined_simplefield>');
    out.push('      </verwaltung_objekt>');
    out.push('      <kontaktperson><name>Schmit</name><vorname>Paul</vorname><email_zentrale>info@nordstad-immobilien.example</email_zentrale></kontaktperson>');
    out.push('      <verwaltung_techn>');
    out.push(`        <objektnr_intern>${10000 + p.idx}</objektnr_intern>`);
    out.push(`        <objektnr_extern>${l.extId}</objektnr_extern>`);
    out.push('        <aktion aktionart="CHANGE"/>');
    out.push(`        <stand_vom>${isoDate(l.updated)}</stand_vom>`);
    out.push('      </verwaltung_techn>');
    out.push('    </immobilie>');
  }
  out.push('  </anbieter>');
  out.push('</openimmo>');
  return out.join('\n') + '\n';
}

function writeAlzette(ls: Listing[], _r: Rng): string {
  const out: string[] = [];
  out.push('\uFEFF<?xml version="1.0" encoding="UTF-8"?>');
  out.push('<openimmo>');
  out.push('<uebertragung art="OFFLINE" umfang="VOLL" modus="NEW" version="1.2.5" sendersoftware="Wunnen CRM" techn_email="export@alzette-wunnen.example"/>');
  out.push('<anbieter>');
  out.push('<anbieternr>AW</anbieternr>');
  out.push('<firma>Alzette Wunnen</firma>');
  for (const l of ls) {
    const p = l.prop;
    const b = p.building;
    const pl = b.place;
    const tr = new Rng(l.titleSeed, 'alzette');
    const sale = p.type === 'SALE';
    const communeLb = pl.commune.lbAttested ? pl.commune.nameLb : pl.commune.name;
    let ort: string;
    let zusatz = '';
    if (pl.kind === 'quarter_city') { ort = communeLb; zusatz = quarterShort(pl, 'lb'); }
    else if (pl.kind === 'quarter_esch') { ort = communeLb; zusatz = pl.name; }
    else if (pl.kind === 'main' || pl.kind === 'commune') ort = communeLb;
    else ort = pl.name;
    const title = tr.chance(0.3) ? lbTitle(p, titlePlace(p, 'lb')) : frTitle(p, titlePlace(p, 'fr'), tr);
    const rooms = l.halfRoom ? `${p.rooms}.5` : String(p.rooms);
    const parts: string[] = [];
    parts.push('<immobilie>');
    parts.push(`<objektkategorie><nutzungsart WOHNEN="1" GEWERBE="0"/><vermarktungsart KAUF="${sale ? 1 : 0}" MIETE_PACHT="${sale ? 0 : 1}"/><objektart>${oiObjektart(p, tr)}</objektart></objektkategorie>`);
    let geo = `<geo><plz>${b.postcode}</plz><ort>${xmlEsc(ort)}</ort>`;
    if (zusatz) geo += `<regionaler_zusatz>${xmlEsc(zusatz)}</regionaler_zusatz>`;
    if (l.coords) geo += `<geokoordinaten breitengrad="${l.coords.lat.toFixed(5)}" laengengrad="${l.coords.lng.toFixed(5)}"/>`;
    else if (l.coordStyle === 'zero') geo += '<geokoordinaten breitengrad="0" laengengrad="0"/>';
    geo += '<land iso_land="LUX"/></geo>';
    parts.push(geo);
    if (sale) parts.push(`<preise><kaufpreis>${l.priceAmount}</kaufpreis><waehrung iso_waehrung="EUR"/></preise>`);
    else parts.push(`<preise><kaltmiete>${l.priceAmount}</kaltmiete><nebenkosten>${l.nebenkosten}</nebenkosten><warmmiete>${l.priceAmount + l.nebenkosten}</warmmiete><waehrung iso_waehrung="EUR"/></preise>`);
    parts.push(`<flaechen><wohnflaeche>${l.area}</wohnflaeche><anzahl_zimmer>${rooms}</anzahl_zimmer></flaechen>`);
    parts.push(`<freitexte><objekttitel>${xmlEsc(title)}</objekttitel></freitexte>`);
    parts.push(`<anhaenge>${l.images.map((i) => `<anhang location="REMOTE" gruppe="BILD"><daten><pfad>https://media.alzette-wunnen.example/${l.extId}/${i}.jpg</pfad></daten></anhang>`).join('')}</anhaenge>`);
    if (l.students) parts.push('<verwaltung_objekt><user_defined_simplefield feldname="studenten">1</user_defined_simplefield></verwaltung_objekt>');
    parts.push(`<verwaltung_techn><objektnr_extern>${l.extId}</objektnr_extern><stand_vom>${isoDate(l.updated)}</stand_vom></verwaltung_techn>`);
    parts.push('</immobilie>');
    out.push(parts.join(''));
  }
  out.push('</anbieter>');
  out.push('</openimmo>');
  return out.join('\n') + '\n';
}

const CSV_HEADER = "Référence;Type d'offre;Type de bien;Titre;Prix;Surface;Pièces;Chambres;Localité;Code postal;Latitude;Longitude;Photos;Étudiants;Date de création;Lien";

function csvOffer(t: ListingType): string {
  return t === 'RENT' ? 'Location' : t === 'SALE' ? 'Vente' : t === 'FLATSHARE' ? 'Colocation' : 'Sous-location';
}

function writeGare(ls: Listing[], _r: Rng): string {
  const rows: string[] = [CSV_HEADER];
  for (const l of ls) {
    const p = l.prop;
    const b = p.building;
    const pl = b.place;
    const tr = new Rng(l.titleSeed, 'gare');
    const loc = pl.kind === 'quarter_city' ? `Luxembourg-${quarterShort(pl, 'fr')}` : pl.kind === 'quarter_esch' ? pl.commune.name : pl.name;
    const price = p.type === 'SALE' ? `${thousands(l.priceAmount, '.')} €` : `${thousands(l.priceAmount, ' ')} €`;
    const a = l.area as number;
    const surface = `${Number.isInteger(a) ? a : String(a).replace('.', ',')} m²`;
    const pieces = p.kind === 'room' ? '1' : '';
    const chambres = p.kind === 'room' ? '1' : l.bedroomsBlank ? '' : String(p.bedrooms);
    const lat = l.coords ? l.coords.lat.toFixed(4).replace('.', ',') : '';
    const lng = l.coords ? l.coords.lng.toFixed(4).replace('.', ',') : '';
    const photos = l.images.map((i) => `https://photos.gare-logements.example/${l.extId}-${i}.jpg`).join('|');
    const cells = [
      l.extId, csvOffer(p.type), frKind(p), csvField(frTitle(p, loc, tr), true), csvField(price, true), csvField(surface, true),
      pieces, chambres, csvField(loc, true), `L-${b.postcode}`, lat, lng, photos, l.students ? 'oui' : 'non', luxLocal(l.created),
      `https://www.gare-logements.example/annonce/${l.extId}`,
    ];
    rows.push(cells.join(';'));
  }
  return rows.join('\n') + '\n';
}

function writeMinett(ls: Listing[], _r: Rng): string {
  const rows: string[] = [`\uFEFF${CSV_HEADER};Agent;Mandat`];
  for (const l of ls) {
    const p = l.prop;
    const b = p.building;
    const pl = b.place;
    const tr = new Rng(l.titleSeed, 'minett');
    const loc =
      pl.commune.name === 'Esch-sur-Alzette' ? 'ESCH/ALZETTE' : pl.kind === 'quarter_city' ? 'LUXEMBOURG' : upperNoAccents(pl.name);
    const price = p.type === 'SALE' ? thousands(l.priceAmount, '.') : `${thousands(l.priceAmount, '.')},00`;
    const surface = l.area === null ? '' : tr.chance(0.5) ? `"${l.area}"` : String(l.area);
    let lat = '';
    let lng = '';
    if (l.coords) {
      lat = l.coords.lat.toFixed(5);
      lng = l.coords.lng.toFixed(5);
      if (l.coordStyle === 'swapped') [lat, lng] = [lng, lat];
    }
    const photos = l.images.slice(0, 5).map((i) => `https://photos.minett-immo.example/${l.extId}/${i}.jpg`).join('|');
    const title = upperNoAccents(frTitle(p, p.building.place.kind === 'quarter_esch' || pl.commune.name === 'Esch-sur-Alzette' ? 'Esch' : titlePlace(p, 'fr'), tr));
    const withSemi = tr.chance(0.15) ? `${title}; ${p.parking ? 'PARKING' : 'LIBRE DE SUITE'}` : title;
    const cells = [
      l.extId, upperNoAccents(csvOffer(p.type)), frKind(p), csvField(withSemi, false), price, surface,
      String(p.rooms), p.kind === 'room' ? '1' : String(p.bedrooms), csvField(loc, false), l.postcodeBlank ? '' : String(b.postcode),
      lat, lng, photos, l.students ? 'oui' : '', luxLocal(l.created), `https://www.minett-immo.example/biens/${l.extId}`,
      l.agent, tr.chance(0.3) ? 'exclusif' : 'simple',
    ];
    rows.push(cells.join(';'));
  }
  return rows.join('\n') + '\n';
}

function writeKirchberg(ls: Listing[], _r: Rng): string {
  const listings = ls.map((l) => {
    const p = l.prop;
    const b = p.building;
    const pl = b.place;
    const tr = new Rng(l.titleSeed, 'kirchberg');
    const locality = pl.kind === 'quarter_city' ? quarterShort(pl, 'fr').replace(/^Centre$/, 'Ville Haute') : pl.kind === 'quarter_esch' ? pl.commune.name : pl.name;
    const en = enTitle(p, locality, tr);
    const fr = frTitle(p, locality, tr);
    const media: { type: string; url: string }[] = l.images.map((i) => ({ type: 'photo', url: `https://cdn.kirchberg-relocation.example/${l.extId.toLowerCase()}/${i}.jpg` }));
    if (l.video) media.push({ type: 'video', url: `https://cdn.kirchberg-relocation.example/${l.extId.toLowerCase()}/tour.mp4` });
    return {
      ref: l.extId,
      offer: p.type === 'RENT' ? 'rent' : p.type === 'SALE' ? 'sale' : p.type === 'SUBLET' ? 'sublet' : 'flatshare',
      status: 'available',
      title: tr.chance(0.85) ? { fr, en } : en,
      price: p.type === 'SALE' ? { amount: l.priceAmount, currency: 'EUR' } : { amount: l.priceAmount, currency: 'EUR', period: l.period },
      surface_m2: l.area,
      bedrooms: p.bedrooms,
      address: { street: `${b.number}, ${b.street}`, locality, postcode: `L-${b.postcode}`, country: 'LU' },
      geo: l.coords ? { lat: Number(l.coords.lat.toFixed(6)), lon: Number(l.coords.lng.toFixed(6)) } : null,
      media,
      students: l.students,
      published_at: new Date(l.created).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      link: `https://kirchberg-relocation.example/listing/${l.extId}`,
    };
  });
  const doc = { agency: 'Kirchberg Relocation S.A.', generated_at: '2026-11-25T06:00:00+01:00', mode: 'full', listings };
  return JSON.stringify(doc, null, 2) + '\n';
}
