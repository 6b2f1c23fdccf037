import { createHash } from 'node:crypto';

export const LISTING_TYPES = ['RENT', 'SALE', 'SUBLET', 'FLATSHARE'] as const;
export type ListingType = (typeof LISTING_TYPES)[number];

export const LISTING_STATUSES = ['active', 'inactive', 'merged'] as const;
export type ListingStatus = (typeof LISTING_STATUSES)[number];

export const FLAGS = ['price_outlier', 'possible_duplicate', 'stale'] as const;
export type Flag = (typeof FLAGS)[number];

export const NATIVE_SOURCE = 'native';

// Opaque and stable for a (source, external_id) pair, whatever the import order and even
// if the row were deleted and imported again.
export function listingId(source: string, externalId: string): string {
  return 'lst_' + createHash('sha256').update(`${source}\u0000${externalId}`).digest('hex').slice(0, 20);
}

// A row of the listings table as the repositories read and write it.
export interface ListingRow {
  id: string;
  source: string;
  external_id: string;
  title: string;
  price_eur: number;
  area_m2: number | null;
  rooms: number | null;
  commune: string;
  locality: string | null;
  lat: number | null;
  lng: number | null;
  listing_type: ListingType;
  accepts_students: boolean;
  images: string[];
  source_url: string | null;
  status: ListingStatus;
  merged_into: string | null;
  flags: Flag[];
  created_at: Date;
  updated_at: Date;
  first_seen_at: Date;
  last_seen_at: Date;
  removed_at: Date | null;
}

// What a listing says, as a feed delivers it and the API shows it: the columns without the
// life-cycle state (status, merging, flags, timestamps).
export type ListingContent = Pick<
  ListingRow,
  | 'id'
  | 'source'
  | 'external_id'
  | 'title'
  | 'price_eur'
  | 'area_m2'
  | 'rooms'
  | 'commune'
  | 'locality'
  | 'lat'
  | 'lng'
  | 'listing_type'
  | 'accepts_students'
  | 'images'
  | 'source_url'
>;
