import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { haversineKm } from '../../../src/domain/geo.js';
import { readCommunes, readDataCsv, readLocalities, type CommuneRow } from '../../../src/reference/csv.js';

// The reference data the evaluation builds its market from: the repository's copies in
// data/ (communes with population and centroid, localities and quarters with their
// points, advertised rents and prices) and the registered apartment sale prices (a copy
// of the shared file beside this module: the service does not use it, the demo data
// neither).

const here = path.dirname(fileURLToPath(import.meta.url));

export interface Commune {
  name: string;
  nameLb: string;
  nameDe: string;
  canton: string;
  lat: number;
  lng: number;
  population: number;
}

export interface Place {
  name: string;
  commune: string;
  kind: 'main' | 'locality' | 'quarter';
  lat: number;
  lng: number;
  // Other names it goes by (Bonnevoie for "Bonnevoie-Nord / Verlorenkost").
  altNames: string[];
  // The name is carried by localities of more than one commune.
  sharedName: boolean;
}

export interface Prices {
  // EUR per m2 and month, flats and houses.
  rentFlatM2: number;
  rentHouseM2: number;
  // EUR per m2, asking prices (flats, houses) and the registered p5-p95 spread of flats.
  saleFlatM2: number;
  saleHouseM2: number;
  saleSpread: number;
}

export interface Reference {
  communes: Commune[];
  communeByName: Map<string, Commune>;
  placesOf: Map<string, Place[]>;
  allPlaces: Place[];
  prices(commune: string, quarter?: string): Prices;
  // Other places within `km`, nearest first.
  near(p: Place, km: number): Place[];
}

const n = (s: string | undefined) => (s === undefined || s === '' ? null : Number(s));

function mean(xs: number[]): number | null {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
}

export function loadReference(): Reference {
  const communes: Commune[] = readCommunes().map((c: CommuneRow) => ({
    name: c.name, nameLb: c.name_lb, nameDe: c.name_de, canton: c.canton, lat: c.lat, lng: c.lng, population: c.population ?? 1000,
  }));
  const communeByName = new Map(communes.map((c) => [c.name, c]));

  const rows = readLocalities();
  const nameCount = new Map<string, number>();
  for (const l of rows) nameCount.set(l.locality, (nameCount.get(l.locality) ?? 0) + 1);
  const placesOf = new Map<string, Place[]>();
  for (const c of communes) placesOf.set(c.name, []);
  for (const l of rows) {
    if (l.lat === null || l.lng === null) continue;
    const kind = l.kind.startsWith('quartier') ? 'quarter' : l.locality === l.commune ? 'main' : 'locality';
    placesOf.get(l.commune)?.push({
      name: l.locality, commune: l.commune, kind, lat: l.lat, lng: l.lng, altNames: l.alt_names, sharedName: (nameCount.get(l.locality) ?? 0) > 1,
    });
  }
  // A commune without a locality point of its own name gets its centroid as its main place.
  for (const c of communes) {
    const list = placesOf.get(c.name)!;
    if (!list.some((p) => p.kind === 'main' || p.kind === 'quarter')) {
      list.push({ name: c.name, commune: c.name, kind: 'main', lat: c.lat, lng: c.lng, altNames: [], sharedName: false });
    }
  }
  const allPlaces = [...placesOf.values()].flat();

  const rents = readDataCsv('rents.csv');
  const quarterRows = readDataCsv('rents_luxembourg_city_quartiers.csv');
  const sales = parse(readFileSync(path.join(here, 'data', 'sales_registered_apartments_2024-10_2025-09.csv'), 'utf8'), {
    columns: true, skip_empty_lines: true, bom: true,
  }) as Record<string, string>[];

  const national = rents.find((r) => r.lau2 === 'LU' && r.apt_rent_avg_eur_m2_month)!;
  const byCommune = new Map(rents.filter((r) => r.lau2 !== 'LU').map((r) => [r.commune, r]));
  const salesByCommune = new Map(sales.map((r) => [r.commune, r]));
  const cantonMean = (canton: string, col: string) =>
    mean(rents.filter((r) => r.canton === canton && n(r[col]) !== null).map((r) => n(r[col])!));

  function spreadOf(commune: string): number {
    // p5..p95 of registered sales, as a relative half-width: (p95 - p5) / 2 / mean.
    const s = salesByCommune.get(commune);
    const m = /(\d+)\s*EUR\s*-\s*(\d+)\s*EUR/.exec(s?.existing_range_p5_p95 ?? '');
    const avg = n(s?.existing_avg_eur_m2);
    if (!m || !avg) return 0.22;
    return Math.min(0.35, Math.max(0.12, (Number(m[2]) - Number(m[1])) / 2 / avg / 1.645));
  }

  function prices(commune: string, quarter?: string): Prices {
    const r = byCommune.get(commune);
    const canton = communeByName.get(commune)?.canton ?? '';
    const pick = (col: string, fallback: number) => n(r?.[col]) ?? cantonMean(canton, col) ?? fallback;
    const p: Prices = {
      rentFlatM2: pick('apt_rent_avg_eur_m2_month', Number(national.apt_rent_avg_eur_m2_month)),
      rentHouseM2: pick('house_rent_avg_eur_m2_month', Number(national.house_rent_avg_eur_m2_month)),
      saleFlatM2: n(r?.apt_sale_advertised_avg_eur_m2) ?? n(salesByCommune.get(commune)?.existing_avg_eur_m2) ?? pick('apt_sale_advertised_avg_eur_m2', Number(national.apt_sale_advertised_avg_eur_m2)),
      saleHouseM2: pick('house_sale_advertised_avg_eur_m2', Number(national.house_sale_advertised_avg_eur_m2)),
      saleSpread: spreadOf(commune),
    };
    if (commune === 'Luxembourg' && quarter) {
      const q = quarterRows.find((x) => x.quartier === quarter);
      if (q) {
        p.rentFlatM2 = n(q.apt_rent_avg_eur_m2_month) ?? p.rentFlatM2;
        p.saleFlatM2 = n(q.apt_sale_advertised_avg_eur_m2) ?? p.saleFlatM2;
        p.saleHouseM2 = n(q.house_sale_advertised_avg_eur_m2) ?? p.saleHouseM2;
      }
    }
    return p;
  }

  function near(p: Place, km: number): Place[] {
    return allPlaces
      .filter((q) => q !== p && q.name !== p.name)
      .map((q) => ({ q, d: haversineKm(p.lat, p.lng, q.lat, q.lng) }))
      .filter((x) => x.d <= km)
      .sort((a, b) => a.d - b.d)
      .map((x) => x.q);
  }

  return { communes, communeByName, placesOf, allPlaces, prices, near };
}

// Luxembourg postcodes by area (L-1xxx and L-2xxx: the capital; 3xxx: the south and
// south-east of the Alzette; 4xxx: the Minett west of it; 5xxx: the Moselle and the east
// of the capital; 6xxx: the east; 7xxx: the centre north of the capital; 8xxx: the west;
// 9xxx: the north). Approximate, like an agency typing the postcode it remembers.
const POSTCODE_THOUSANDS_BY_CANTON: Record<string, number[]> = {
  Luxembourg: [5, 7, 8],
  'Esch-sur-Alzette': [3, 4],
  Capellen: [8],
  Mersch: [7],
  Redange: [8],
  Diekirch: [9],
  Clervaux: [9],
  Wiltz: [9],
  Vianden: [9],
  Echternach: [6],
  Grevenmacher: [6, 5],
  Remich: [5],
};
const POSTCODE_THOUSANDS_BY_COMMUNE: Record<string, number> = {
  Luxembourg: 1, Hesperange: 5, Sandweiler: 5, Contern: 5, Schuttrange: 5, 'Weiler-la-Tour': 5, Niederanven: 6,
  Walferdange: 7, Steinsel: 7, Lorentzweiler: 7, Strassen: 8, Bertrange: 8, Kopstal: 8, Leudelange: 3, Mamer: 8,
  Dudelange: 3, Bettembourg: 3, Kayl: 3, Rumelange: 3, Roeser: 3, Frisange: 5, Mondercange: 3, Schifflange: 3,
  'Esch-sur-Alzette': 4, Sanem: 4, Differdange: 4, Pétange: 4, Käerjeng: 4, Reckange: 3,
};

export function postcodeOf(place: Place, canton: string): string {
  let h = 0;
  for (const ch of place.name + place.commune) h = (Math.imul(h, 31) + ch.charCodeAt(0)) >>> 0;
  let thousands = POSTCODE_THOUSANDS_BY_COMMUNE[place.commune];
  if (thousands === undefined) {
    const list = POSTCODE_THOUSANDS_BY_CANTON[canton] ?? [8];
    thousands = list[h % list.length];
  }
  if (thousands === 1) thousands = h % 2 ? 1 : 2;
  return String(thousands * 1000 + (h % 1000)).padStart(4, '0');
}
