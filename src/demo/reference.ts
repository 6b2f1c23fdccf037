import { readCommunes, readDataCsv, readLocalities, type CommuneRow, type LocalityRow } from '../reference/csv.js';
import { buildGazetteer, type Gazetteer } from '../reference/gazetteer.js';

// The reference data as the demo generator sees it: where homes are (communes, localities
// and quarters, with the weight of each), what they cost (data/rents.csv, the quarter
// figures of Luxembourg City and the registered sale prices of
// data/sales_registered_apartments_2024-10_2025-09.csv) and how people type the places.

// Advertised national averages (rents.csv, "Moyenne nationale"), for communes without figures.
const NATIONAL = { aptRent: 42.53, houseRent: 19.46, aptSale: 9391, houseSale: 6054 };
// Registered (notarial) national average for existing apartments, 2024-10 to 2025-09: a
// commune with only a registered figure gets it scaled to the advertised level.
const NATIONAL_REGISTERED_APT_SALE = 7779;

export interface Spot {
  // null: the commune's main locality (a listing there names the commune only).
  locality: string | null;
  lat: number;
  lng: number;
  jitterM: number;
  weight: number;
  // Per-quarter figures (Luxembourg City); the commune's otherwise.
  aptRent?: number;
  aptRentArea?: number;
  aptSale?: number;
  aptSaleArea?: number;
  houseSale?: number;
}

export interface Place {
  commune: CommuneRow;
  // Advertised apartment rent per m2 and month, and the mean area of the rented flats
  // (average rent / average rent per m2): together they give the average rent.
  aptRent: number;
  aptRentArea: number;
  houseRent: number;
  // Advertised apartment price per m2, and the mean area of the flats for sale.
  aptSale: number;
  aptSaleArea: number;
  houseSale: number;
  rural: boolean;
  spots: Spot[];
  // How private posters type the commune, each known to resolve back to it.
  typedNames: [string, number][];
  // A plausible postcode for the commune (the reference data has none): the first digit
  // is the region's, as the importer's postcode rules expect.
  postcode: number;
}

export interface Reference {
  communes: CommuneRow[];
  places: Map<string, Place>;
  gazetteer: Gazetteer;
}

let reference: Reference | undefined;

export function loadReference(): Reference {
  if (reference) return reference;
  const communes = readCommunes();
  const localities = readLocalities();
  const num = (s: string | undefined) => (s === undefined || s === '' ? undefined : Number(s));
  const rents = new Map(readDataCsv('rents.csv').map((r) => [r.commune, r]));
  const registered = new Map(readDataCsv('sales_registered_apartments_2024-10_2025-09.csv').map((r) => [r.commune, r]));
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
  // Mean flat areas implied by the published averages (average price / average per m2),
  // per commune where both are published, else the canton's mean, else the country's.
  const ratio = (r: Record<string, string> | undefined, total: string, perM2: string) => {
    const t = num(r?.[total]);
    const m = num(r?.[perM2]);
    return t !== undefined && m !== undefined && m > 0 ? t / m : undefined;
  };
  const areaAvg = (total: string, perM2: string) => {
    const acc = new Map<string, number[]>();
    const all: number[] = [];
    for (const c of communes) {
      const a = ratio(rents.get(c.name), total, perM2);
      if (a === undefined) continue;
      acc.set(c.canton, [...(acc.get(c.canton) ?? []), a]);
      all.push(a);
    }
    const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / xs.length;
    return { canton: new Map([...acc].map(([k, vs]) => [k, mean(vs)])), country: mean(all) };
  };
  const rentArea = areaAvg('apt_rent_avg_eur_month', 'apt_rent_avg_eur_m2_month');
  const saleArea = areaAvg('apt_sale_advertised_avg_eur', 'apt_sale_advertised_avg_eur_m2');

  const places = new Map<string, Place>();
  for (const c of communes) {
    const r = rents.get(c.name);
    const aptRent = num(r?.apt_rent_avg_eur_m2_month) ?? avgAptRent.get(c.canton) ?? NATIONAL.aptRent;
    // Only four communes publish house rents; elsewhere follow the apartment level, within reason.
    const houseRent =
      num(r?.house_rent_avg_eur_m2_month) ?? NATIONAL.houseRent * Math.min(1.3, Math.max(0.75, aptRent / NATIONAL.aptRent));
    const registeredSale = num(registered.get(c.name)?.existing_avg_eur_m2);
    const place: Place = {
      commune: c,
      aptRent,
      aptRentArea: ratio(r, 'apt_rent_avg_eur_month', 'apt_rent_avg_eur_m2_month') ?? rentArea.canton.get(c.canton) ?? rentArea.country,
      houseRent,
      aptSale:
        num(r?.apt_sale_advertised_avg_eur_m2) ??
        (registeredSale !== undefined ? (registeredSale * NATIONAL.aptSale) / NATIONAL_REGISTERED_APT_SALE : undefined) ??
        avgAptSale.get(c.canton) ??
        NATIONAL.aptSale,
      aptSaleArea: ratio(r, 'apt_sale_advertised_avg_eur', 'apt_sale_advertised_avg_eur_m2') ?? saleArea.canton.get(c.canton) ?? saleArea.country,
      houseSale: num(r?.house_sale_advertised_avg_eur_m2) ?? avgHouseSale.get(c.canton) ?? NATIONAL.houseSale,
      rural: (c.population ?? 0) < 6000,
      spots: [],
      typedNames: [],
      postcode: communePostcode(c),
    };
    const own = localities.filter((l) => l.commune === c.name);
    // Flats spread over the ground their locality covers: the commune's area shared among its
    // localities, as a disc (Luxembourg's quarters about 800 m, a village 1-1.5 km), so
    // that the demo is no denser than the country (chance look-alikes, dedup precision).
    const spread = spreadM(c.area_km2, own.filter((l) => l.lat !== null).length);
    if (c.name === 'Luxembourg') {
      for (const q of own.filter((l) => l.kind === 'quartier_luxembourg_city')) {
        const qr = quartiers.get(q.locality);
        place.spots.push({
          ...spotOf(q, c, spread),
          // The big residential quarters carry more of the market.
          weight: ['Kirchberg', 'Gare', 'Belair', 'Limpertsberg', 'Bonnevoie-Nord / Verlorenkost', 'Bonnevoie-Sud', 'Gasperich'].includes(q.locality)
            ? 2
            : 1,
          aptRent: num(qr?.apt_rent_avg_eur_m2_month),
          aptRentArea: ratio(qr, 'apt_rent_avg_eur_month', 'apt_rent_avg_eur_m2_month'),
          aptSale: num(qr?.apt_sale_advertised_avg_eur_m2),
          aptSaleArea: ratio(qr, 'apt_sale_advertised_avg_eur', 'apt_sale_advertised_avg_eur_m2'),
          houseSale: num(qr?.house_sale_advertised_avg_eur_m2),
        });
      }
    } else {
      for (const l of own) {
        const main = l.locality === c.name;
        place.spots.push({ ...spotOf(l, c, spread), locality: main ? null : l.locality, weight: main ? 3 : 1 });
      }
    }
    if (place.spots.length === 0) place.spots.push({ locality: null, lat: c.lat, lng: c.lng, jitterM: 800, weight: 1 });
    place.typedNames = typedNames(c, own, gazetteer);
    places.set(c.name, place);
  }
  reference = { communes, places, gazetteer };
  return reference;
}

function spreadM(areaKm2: number | null, localities: number): number {
  const r = 1000 * Math.sqrt((areaKm2 ?? 20) / Math.max(1, localities) / Math.PI);
  return Math.round(Math.min(1500, Math.max(400, r)));
}

function spotOf(l: LocalityRow, c: CommuneRow, jitterM: number): Spot {
  // A locality without a point falls back to the commune's centre, spread wider.
  return l.lat !== null && l.lng !== null
    ? { locality: l.locality, lat: l.lat, lng: l.lng, jitterM, weight: 1 }
    : { locality: l.locality, lat: c.lat, lng: c.lng, jitterM: 900, weight: 1 };
}

const TYPED_ALIASES: Record<string, string[]> = {
  Luxembourg: ['Lëtzebuerg', 'Luxembourg-Ville', 'Luxemburg', 'Luxembourg City', 'luxembourg ville'],
  'Esch-sur-Alzette': ['Esch/Alzette', 'Esch-Alzette', 'Esch', 'ESCH/ALZETTE'],
  'Redange/Attert': ['Redange', 'Redange-sur-Attert'],
  'Mondorf-les-Bains': ['Mondorf'],
};

export function aliasesOf(commune: string): string[] {
  return TYPED_ALIASES[commune] ?? [];
}

function typedNames(c: CommuneRow, own: LocalityRow[], gazetteer: Gazetteer): [string, number][] {
  const candidates: [string, number][] = [
    [c.name, 8],
    [c.name.toLowerCase(), 1],
    [c.name.toUpperCase(), 0.5],
    [c.name_lb, 2],
    [c.name_de, 1],
    ...aliasesOf(c.name).map((n): [string, number] => [n, 1.5]),
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

// First digit by region, as Luxembourg's postcodes go: 1 and 2 for the capital, 3 and 4 for
// the south, 5 south-east, 6 east, 7 centre, 8 west, 9 north.
function communePostcode(c: CommuneRow): number {
  let digit: number;
  switch (c.canton) {
    case 'Luxembourg':
      digit = c.name === 'Luxembourg' ? 1 : c.lng < 6.1 ? 8 : c.lat < 49.62 ? 5 : c.lng > 6.2 ? 6 : 7;
      break;
    case 'Esch-sur-Alzette':
      digit = c.lng > 6.0 ? 3 : 4;
      break;
    case 'Capellen':
    case 'Redange':
      digit = 8;
      break;
    case 'Remich':
      digit = 5;
      break;
    case 'Grevenmacher':
    case 'Echternach':
      digit = 6;
      break;
    case 'Mersch':
      digit = 7;
      break;
    default:
      digit = 9;
  }
  return digit * 1000 + (hashString(c.name) % 90) * 10 + 10;
}

// Postcode of a spot: the commune's, varied a little by locality; in the capital, one per
// quarter between 1010 and 2990.
export function postcodeOf(place: Place, locality: string | null): number {
  if (place.commune.name === 'Luxembourg') return 1010 + (hashString(locality ?? '') % 199) * 10;
  return locality ? place.postcode + (hashString(locality) % 9) : place.postcode;
}

export function hashString(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}
