import type { ListingType } from '../domain/listing.js';
import type { Rng } from './random.js';
import type { Place, Reference, Spot } from './reference.js';

// The properties of the demo market: where they are, their kind, area, rooms and price,
// priced after the reference figures of their place.

export type Kind = 'studio' | 'apt1' | 'apt2' | 'apt3' | 'house' | 'room';

// Properties on offer in every commune (fewer only when there are not enough of them).
const MIN_PER_COMMUNE = 5;

interface PropertyShape {
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

// Houses among the offers of a type: rare among rentals (the Observatoire publishes house
// rents for four communes only), common among sales in the country.
function houseShare(type: ListingType, place: Place): number {
  const city = place.commune.name === 'Luxembourg';
  if (type === 'RENT') return place.rural ? 0.06 : city ? 0.01 : 0.02;
  if (type === 'SALE') return place.rural ? 0.47 : city ? 0.15 : 0.33;
  return 0;
}

// Apartment kinds by area (the rooms follow).
function kindOfArea(area: number): Exclude<Kind, 'house' | 'room'> {
  return area < 35 ? 'studio' : area < 58 ? 'apt1' : area < 88 ? 'apt2' : 'apt3';
}

const ROOMS: Record<Exclude<Kind, 'house'>, number> = { studio: 1, room: 1, apt1: 2, apt2: 3, apt3: 4 };

// Prices follow the reference figures of the place (data/rents.csv, the quarters of
// Luxembourg City, registered sale prices where no advertised one is published): an
// apartment's area is drawn around the mean area of the place's rented (or sold) flats,
// which is the published average rent over the published average rent per m2, and its
// price per m2 around the published average per m2, independently. So the demo's average
// rent lands near the published average rent, and its average rent per m2 near the
// published one (README, "The demo data").
export function makeProperty(rng: Rng, type: ListingType, place: Place, spot: Spot): PropertyShape {
  // Mean-one noise: averages stay where the reference puts them.
  const noise = (sd: number) => Math.exp(sd * rng.normal() - (sd * sd) / 2);
  if (type === 'FLATSHARE') {
    const [lo, hi] = KIND_RANGES.room;
    const area = Math.round(lo + (hi - lo) * ((rng.float() + rng.float()) / 2));
    // 600-1,100 EUR: mostly the room's size, then the commune's rent level, then luck.
    const size = (area - 9) / 16;
    const level = Math.min(1, Math.max(0, ((spot.aptRent ?? place.aptRent) - 18) / 36));
    const mix = 0.5 * size + 0.3 * level + 0.2 * rng.float();
    return { kind: 'room', area, rooms: 1, price: roundTo(600 + 500 * Math.min(1, Math.max(0, mix)), 10) };
  }
  if (rng.chance(houseShare(type, place))) {
    const [lo, hi] = KIND_RANGES.house;
    const area = Math.round(lo + (hi - lo) * ((rng.float() + rng.float()) / 2));
    const rate = type === 'SALE' ? (spot.houseSale ?? place.houseSale) : place.houseRent;
    return { kind: 'house', area, rooms: 5 + Math.floor((area - 120) / 45), price: roundPrice(rate * area * noise(0.14), type) };
  }
  const sale = type === 'SALE';
  const meanArea = sale ? (spot.aptSaleArea ?? place.aptSaleArea) : (spot.aptRentArea ?? place.aptRentArea) * (type === 'SUBLET' ? 0.9 : 1);
  const sigma = 0.35;
  let area = Math.round(Math.min(220, Math.max(15, meanArea * Math.exp(sigma * rng.normal() - (sigma * sigma) / 2))));
  // A quarter of the flats have a half m2.
  if (rng.chance(0.25)) area += 0.5;
  const kind = kindOfArea(area);
  const rate = sale ? (spot.aptSale ?? place.aptSale) : (spot.aptRent ?? place.aptRent);
  const furnished = type === 'SUBLET' ? rng.between(1.0, 1.12) : 1;
  return { kind, area, rooms: ROOMS[kind], price: roundPrice(rate * area * furnished * noise(sale ? 0.14 : 0.12), type) };
}

export function jitter(rng: Rng, lat: number, lng: number, metres: number): [number, number] {
  const r = metres * Math.sqrt(rng.float());
  const theta = 2 * Math.PI * rng.float();
  const dLat = (r * Math.cos(theta)) / 111_320;
  const dLng = (r * Math.sin(theta)) / (111_320 * Math.cos((lat * Math.PI) / 180));
  return [Math.round((lat + dLat) * 1e6) / 1e6, Math.round((lng + dLng) * 1e6) / 1e6];
}

export function roundPrice(v: number, type: ListingType): number {
  if (type === 'SALE') return roundTo(v, v >= 1_000_000 ? 5000 : 1000);
  return roundTo(v, 10);
}

function roundTo(v: number, step: number): number {
  return Math.max(step, Math.round(v / step) * step);
}

// Commune of each property on offer, in random order: MIN_PER_COMMUNE everywhere, the rest
// shared by population (largest remainders, so the split is exact).
export function allocate(rng: Rng, ref: Reference, n: number): string[] {
  const communes = ref.communes;
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
