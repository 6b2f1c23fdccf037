import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import { parseJsonFeed } from '../../src/ingest/adapters/index.js';
import { normalizeRecord, type NormalizeResult } from '../../src/ingest/normalize.js';
import type { ParsedFeed } from '../../src/ingest/types.js';
import { buildGazetteer, type Gazetteer } from '../../src/reference/gazetteer.js';
import { readCommunes, readLocalities } from '../../src/reference/csv.js';
import { TEST_LISTING_IDS } from '../helpers/factory.js';

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'feeds');
export const fixture = (name: string) => path.join(FIXTURES, name);

let gz: Gazetteer | null = null;
export function gazetteer(): Gazetteer {
  gz ??= buildGazetteer(readCommunes(), readLocalities());
  return gz;
}

export const SAMPLES = [
  { source: 'immo-nord', format: 'openimmo', file: 'immo-nord.openimmo.xml' },
  { source: 'moselle-immo', format: 'csv', file: 'moselle-immo.csv' },
  { source: 'capital-homes', format: 'json', file: 'capital-homes.json' },
] as const;

// Everything an import could change, for "nothing changed" assertions.
export async function snapshot(db: Knex): Promise<unknown> {
  const listings = await db('listings').select('*').orderBy('id');
  const sources = await db('sources').select('name').orderBy('name');
  return { listings, sources };
}

export async function byExternalId(db: Knex, source: string, externalId: string) {
  return db('listings').where({ source, external_id: externalId }).first();
}

export const CSV_HEADER_LINE =
  "Référence;Type d'offre;Type de bien;Titre;Prix;Surface;Pièces;Chambres;Localité;Code postal;Latitude;Longitude;Photos;Étudiants;Date de création;Lien";

// One CSV row from named fields (the rest empty).
export function csvRow(f: Partial<Record<'ref' | 'offer' | 'kind' | 'title' | 'price' | 'area' | 'rooms' | 'bedrooms' | 'place' | 'postcode' | 'lat' | 'lng' | 'photos' | 'students' | 'date' | 'link', string>>): string {
  const q = (s: string | undefined) => (s === undefined ? '' : /[;"\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  return [f.ref, f.offer ?? 'Location', f.kind ?? 'Appartement', f.title ?? 'Appartement', f.price ?? '1500', f.area, f.rooms, f.bedrooms,
    f.place ?? 'Strassen', f.postcode, f.lat, f.lng, f.photos, f.students, f.date ?? '01/11/2026 10:00', f.link].map(q).join(';');
}

export function csvFeed(rows: string[]): string {
  return [CSV_HEADER_LINE, ...rows].join('\n') + '\n';
}

// The records of a parsed feed normalized as an import of source test-src at `now` would.
export const TEST_NOW = new Date('2026-11-22T08:00:00.000Z');
export function normalizeFeed(feed: ParsedFeed, now = TEST_NOW): NormalizeResult[] {
  return feed.records.map((r) => normalizeRecord(r, { source: 'test-src', gazetteer: gazetteer(), now, listingId: TEST_LISTING_IDS }));
}
// The listing of an accepted record (a test fails on a rejected one, with its reason).
export function accepted(r: NormalizeResult | undefined) {
  if (!r) throw new Error('no record');
  if (!r.ok) throw new Error(`rejected: ${r.reason}`);
  return r.listing;
}
export const rejectReason = (r: NormalizeResult) => (r.ok ? 'accepted' : r.reason);

// One JSON feed record, the documented fields filled and `listing`'s over them: the feed as parsed,
// and its first record normalized (undefined when the adapter rejected it).
export async function jsonFeedOne(listing: Record<string, unknown>): Promise<{ feed: ParsedFeed; result: NormalizeResult | undefined }> {
  const base = {
    ref: 'J1', offer: 'rent', status: 'available', title: 'Flat', price: { amount: 1500, currency: 'EUR', period: 'month' },
    surface_m2: 50, bedrooms: 1, address: { locality: 'Strassen', country: 'LU' }, geo: null, media: [], students: false,
    published_at: '2026-11-20T08:00:00Z', link: 'https://example.lu/1',
  };
  const feed = await parseJsonFeed(JSON.stringify({ mode: 'full', listings: [{ ...base, ...listing }] }));
  return { feed, result: feed.records[0] ? normalizeFeed(feed)[0] : undefined };
}
