import { NATIVE_SOURCE, type ListingType } from '../domain/listing.js';

// The demo's agencies: who they are, where they work, which format they deliver, when
// their deliveries arrive, and the habits that make their copy of a listing differ from
// another agency's copy of the same flat.

export type Lang = 'fr' | 'en' | 'de';
export type FileFormat = 'openimmo' | 'csv' | 'json';
export type RoomsMode = 'rooms' | 'half' | 'bedrooms' | 'none';

export interface Agency {
  name: string;
  display_name: string;
  format: FileFormat;
  // The agency's own reference for its n-th listing.
  externalId: (n: number) => string;
  urlPath: string;
  langs: Record<Lang, number>;
  // Regional agencies: weight per canton (default `elsewhere`).
  cantons: Record<string, number>;
  elsewhere: number;
  // Deliveries, as how long before `now` each full snapshot was taken (oldest first).
  deliveriesAgoMs: number[];
  noise: {
    // Share of second and third copies with exactly the first agency's price.
    samePrice: number;
    // 'integer': the agency rounds areas to whole m2.
    area: 'keep' | 'integer';
    areaMissing: number;
    coordsMissing: number;
    coordDecimals: [number, number];
    // Swapped latitude and longitude; (0, 0) from a form left empty.
    swappedCoords: number;
    zeroCoords: number;
    rooms: [RoomsMode, number][];
    // The file starts with a UTF-8 byte-order mark.
    bom: boolean;
  };
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
// The older snapshots: twelve days before `now` (not yet stale when the current ones arrive).
export const OLD_SNAPSHOT_AGO_MS = 12 * DAY;

const NORTH = ['Clervaux', 'Wiltz', 'Vianden', 'Diekirch'];
const byCantons = (cantons: string[], w: number) => Object.fromEntries(cantons.map((c) => [c, w]));

export const AGENCIES: Agency[] = [
  {
    name: 'capital-homes',
    display_name: 'Capital Homes',
    format: 'json',
    externalId: (n) => `CH-${1000 + n}`,
    urlPath: 'listing',
    langs: { en: 6, fr: 3, de: 1 },
    cantons: { Luxembourg: 5, Capellen: 2.5, 'Esch-sur-Alzette': 1.2, Mersch: 1 },
    elsewhere: 0.3,
    deliveriesAgoMs: [OLD_SNAPSHOT_AGO_MS + 3 * HOUR, 2 * HOUR + 5 * MINUTE],
    noise: {
      samePrice: 0.5,
      area: 'keep',
      areaMissing: 0.05,
      coordsMissing: 0.12,
      coordDecimals: [4, 6],
      swappedCoords: 0,
      zeroCoords: 0,
      rooms: [['bedrooms', 95], ['none', 5]],
      bom: false,
    },
  },
  {
    name: 'luxhome',
    display_name: 'LuxHome',
    format: 'csv',
    externalId: (n) => `LH${100000 + n}`,
    urlPath: 'bien',
    langs: { fr: 6, en: 2.5, de: 1.5 },
    cantons: {},
    elsewhere: 3,
    deliveriesAgoMs: [OLD_SNAPSHOT_AGO_MS + HOUR, HOUR + 40 * MINUTE],
    noise: {
      samePrice: 0.6,
      area: 'integer',
      areaMissing: 0.08,
      coordsMissing: 0.1,
      coordDecimals: [5, 6],
      swappedCoords: 0,
      zeroCoords: 0.004,
      rooms: [['rooms', 80], ['bedrooms', 15], ['none', 5]],
      bom: false,
    },
  },
  {
    name: 'minett-homes',
    display_name: 'Minett Homes',
    format: 'json',
    externalId: (n) => `MH/${2026}/${String(n).padStart(4, '0')}`,
    urlPath: 'offres',
    langs: { fr: 5, de: 2, en: 1 },
    cantons: { 'Esch-sur-Alzette': 0.35 },
    elsewhere: 0,
    // Its export stopped 18 days ago: every listing it had is `stale` by now.
    deliveriesAgoMs: [18 * DAY + 2 * HOUR],
    noise: {
      samePrice: 0.3,
      area: 'keep',
      areaMissing: 0.1,
      coordsMissing: 0.3,
      coordDecimals: [4, 5],
      swappedCoords: 0,
      zeroCoords: 0,
      rooms: [['bedrooms', 70], ['rooms', 25], ['none', 5]],
      bom: true,
    },
  },
  {
    name: 'immo-nord',
    display_name: 'Immo Nord',
    format: 'openimmo',
    externalId: (n) => `IN-2026-${String(n).padStart(5, '0')}`,
    urlPath: 'annonce',
    langs: { fr: 5, de: 4, en: 1 },
    cantons: { ...byCantons(NORTH, 5), Redange: 2, Mersch: 2 },
    elsewhere: 0.3,
    deliveriesAgoMs: [HOUR + 20 * MINUTE],
    noise: {
      samePrice: 0.6,
      area: 'keep',
      areaMissing: 0.06,
      coordsMissing: 0.08,
      coordDecimals: [5, 5],
      swappedCoords: 0,
      zeroCoords: 0,
      rooms: [['rooms', 75], ['half', 20], ['none', 5]],
      bom: false,
    },
  },
  {
    name: 'moselle-immo',
    display_name: 'Moselle Immo',
    format: 'csv',
    externalId: (n) => `MI-${5000 + n}`,
    urlPath: 'biens',
    langs: { de: 5, fr: 4, en: 1 },
    cantons: { Remich: 5, Grevenmacher: 5, Echternach: 3, Luxembourg: 1 },
    elsewhere: 0.4,
    deliveriesAgoMs: [55 * MINUTE],
    noise: {
      samePrice: 0.5,
      area: 'keep',
      areaMissing: 0.1,
      coordsMissing: 0.15,
      coordDecimals: [4, 4],
      swappedCoords: 0,
      zeroCoords: 0,
      rooms: [['bedrooms', 60], ['rooms', 35], ['none', 5]],
      bom: true,
    },
  },
  {
    name: 'ardennes-immo',
    display_name: 'Ardennes Immo',
    format: 'openimmo',
    externalId: (n) => `ARD-${String(n).padStart(5, '0')}`,
    urlPath: 'offre',
    langs: { fr: 6, de: 3.5, en: 0.5 },
    cantons: { ...byCantons(NORTH, 4), Redange: 3 },
    elsewhere: 0.2,
    deliveriesAgoMs: [35 * MINUTE],
    noise: {
      samePrice: 0.4,
      area: 'keep',
      areaMissing: 0.08,
      coordsMissing: 0.1,
      coordDecimals: [4, 6],
      swappedCoords: 0.04,
      zeroCoords: 0,
      rooms: [['rooms', 60], ['half', 35], ['none', 5]],
      bom: true,
    },
  },
];

export const AGENCY_BY_NAME = new Map(AGENCIES.map((a) => [a.name, a]));

export const NATIVE = {
  name: NATIVE_SOURCE,
  display_name: 'Posted on this service',
  langs: { fr: 4, en: 4, de: 2 } as Record<Lang, number>,
  // The posts as they stood twelve days ago, then now.
  deliveriesAgoMs: [OLD_SNAPSHOT_AGO_MS, 5 * MINUTE],
};

// Private posters offer rooms and sublets far more often than whole homes for sale.
export const NATIVE_SHARE: Record<ListingType, number> = { RENT: 0.03, SALE: 0.01, FLATSHARE: 0.3, SUBLET: 0.3 };
