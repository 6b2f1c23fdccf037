import { createHmac } from 'node:crypto';

export const LISTING_TYPES = ['RENT', 'SALE', 'SUBLET', 'FLATSHARE'] as const;
export type ListingType = (typeof LISTING_TYPES)[number];

export const LISTING_STATUSES = ['active', 'inactive', 'merged'] as const;
export type ListingStatus = (typeof LISTING_STATUSES)[number];

export const FLAGS = ['price_outlier', 'possible_duplicate', 'stale'] as const;
export type Flag = (typeof FLAGS)[number];

export const NATIVE_SOURCE = 'native';

// A listing's id: `lst_` and 20 hex digits (80 bits) of HMAC-SHA256(secret, source NUL
// external_id), under the service's own secret (service_secrets, made on the first start by
// migrations/20261123000200_keyed_listing_ids.ts and never changed). Opaque and stable for a
// (source, external_id) pair, whatever the import order and even if the row were deleted and
// imported again; and impossible to derive without the secret: sources are public and external
// ids often sequential, so a plain hash of them would let anyone enumerate every listing,
// flagged ones included.
export type ListingIdFn = (source: string, externalId: string) => string;

export const LISTING_ID_PREFIX = 'lst_';
const ID_HEX_DIGITS = 20;

export function listingIdFunction(secret: Buffer): ListingIdFn {
  if (secret.length < 32) throw new Error('the listing id secret must have at least 32 bytes');
  const key = Buffer.from(secret); // a copy the caller cannot change
  return (source, externalId) =>
    LISTING_ID_PREFIX + createHmac('sha256', key).update(`${source}\u0000${externalId}`, 'utf8').digest('hex').slice(0, ID_HEX_DIGITS);
}

// The same ids computed by PostgreSQL, for statements that make or re-key many rows at once
// (migrations/20261123000200_keyed_listing_ids.ts, the benchmark builder). PostgreSQL has sha256() built in but no
// HMAC without an extension, so the HMAC is spelled out, H((K ^ opad) || H((K ^ ipad) || m)),
// with the two padded keys read from a temporary table of the transaction
// (pg_temp.listing_id_key, filled through bind parameters: the key never appears in SQL text,
// which statement logging would keep).
export function hmacSha256Pads(secret: Buffer): { inner: Buffer; outer: Buffer } {
  const block = Buffer.alloc(64);
  secret.copy(block); // keys of up to 64 bytes are zero-padded (ours has 32)
  if (secret.length > 64) throw new Error('the listing id secret must have at most 64 bytes');
  return { inner: Buffer.from(block.map((b) => b ^ 0x36)), outer: Buffer.from(block.map((b) => b ^ 0x5c)) };
}

export const LISTING_ID_KEY_TABLE_SQL = `CREATE TEMP TABLE listing_id_key (inner_pad bytea NOT NULL, outer_pad bytea NOT NULL) ON COMMIT DROP`;

export function listingIdSql(sourceExpr: string, externalIdExpr: string): string {
  const inner = `(SELECT inner_pad FROM pg_temp.listing_id_key)`;
  const outer = `(SELECT outer_pad FROM pg_temp.listing_id_key)`;
  const message = `convert_to(${sourceExpr}, 'UTF8') || '\\x00'::bytea || convert_to(${externalIdExpr}, 'UTF8')`;
  return `'${LISTING_ID_PREFIX}' || left(encode(sha256(${outer} || sha256(${inner} || ${message})), 'hex'), ${ID_HEX_DIGITS})`;
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
