import { isoTimestamp } from '../lib/iso-time.js';
import { iso } from '../repositories/freshness.js';
import type { ChangeRow } from '../repositories/changes.js';
import type { PublicListingRow } from '../repositories/listings.js';
import type { ListingJson } from '../services/listing-rows.js';
import type { SearchRequest, SearchResult } from '../services/listing-search.js';
import type { ApiChange, ApiListing, ApiListingsPage } from './schemas/responses.js';

// The public shape of a listing (docs/spec/service-spec.md 2.1 + docs/spec/contract.md
// section 4; listingSchema in src/http/schemas/responses.ts, which the return type holds it
// to): every field always present, nullable ones null; `flags` only for tiers that may see
// flagged data; `distance_km` only on geo searches.
export function presentListing(row: PublicListingRow, opts: { baseUrl: string; showFlags: boolean }, distanceKm = row.distance_km): ApiListing {
  // One object literal, then the optional keys assigned: spreading conditional objects into
  // the literal made V8 build every listing through a slow path (a page presents up to 100).
  const out: ApiListing = {
    id: row.id,
    url: `${opts.baseUrl}/listings/${encodeURIComponent(row.id)}`,
    source: row.source,
    external_id: row.external_id,
    title: row.title,
    price_eur: row.price_eur,
    area_m2: row.area_m2,
    rooms: row.rooms,
    commune: row.commune,
    locality: row.locality,
    lat: row.lat,
    lng: row.lng,
    listing_type: row.listing_type,
    accepts_students: row.accepts_students,
    images: row.images ?? [],
    source_url: row.source_url,
    created_at: isoTimestamp(row.created_at),
    updated_at: isoTimestamp(row.updated_at),
  };
  if (opts.showFlags) out.flags = row.flags ?? [];
  if (distanceKm !== undefined) out.distance_km = Math.round(distanceKm * 1000) / 1000;
  return out;
}

// A listing as JSON text: the same bytes as JSON.stringify(presentListing(row, opts, distanceKm))
// (test/api/listing-json.test.ts), from its fields already written as JSON (listing-rows.ts).
export function writeListing(l: ListingJson, opts: { baseUrl: string; showFlags: boolean }, distanceKm?: number): string {
  let out = `{"id":${JSON.stringify(l.id)},"url":${JSON.stringify(`${opts.baseUrl}/listings/${encodeURIComponent(l.id)}`)},${l.fields.slice(1, -1)}`;
  if (opts.showFlags) out += `,"flags":${l.flags ?? '[]'}`;
  if (distanceKm !== undefined) out += `,"distance_km":${JSON.stringify(Math.round(distanceKm * 1000) / 1000)}`;
  return `${out}}`;
}

// A page of listings as JSON text (the shape of ApiListingsPage).
export function writeListingsPage(found: SearchResult, request: SearchRequest, opts: { baseUrl: string; showFlags: boolean }): string {
  const { listings, distances } = found;
  const meta: ApiListingsPage['meta'] = { total: found.total, page: request.page, per_page: request.perPage, sort: request.sort, last_updated: iso(found.lastUpdated) };
  return `{"data":[${listings.map((l, k) => writeListing(l, opts, distances?.[k])).join(',')}],"meta":${JSON.stringify(meta)}}`;
}

// One entry of the changes feed: the listing as GET /listings/:id shows it to this key, or
// why that is now a 404 (withdrawn or gone, merged into another, flagged for a tier that
// does not see flagged listings).
export function presentChange(change: ChangeRow, opts: { baseUrl: string; showFlags: boolean }): ApiChange {
  const l = change.listing;
  const id = change.listing_id;
  if (!l || l.status === 'inactive') return { op: 'delete', id, reason: 'withdrawn' };
  if (l.status === 'merged') return { op: 'delete', id, reason: 'merged', ...(l.merged_into ? { merged_into: l.merged_into } : {}) };
  if ((l.flags ?? []).length > 0 && !opts.showFlags) return { op: 'delete', id, reason: 'hidden' };
  return { op: 'upsert', id, listing: presentListing(l, opts) };
}
