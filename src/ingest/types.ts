import type { ListingContent, ListingType } from '../domain/listing.js';

export const FEED_FORMATS = ['openimmo', 'csv', 'json', 'native'] as const;
export type FeedFormat = (typeof FEED_FORMATS)[number];

export type FeedMode = 'full' | 'delta';

// What an adapter makes of one record of a feed: the values as the format gives them, with
// only the format's own vocabulary translated. The shared normalizer does the rest.
export interface RawRecord {
  // Where the record sits in the file, for a person: "line 4", "listings[2]", "immobilie 3 (line 51)".
  position: string;
  externalId: string | null;
  // upsert: an active listing. withdraw: the record says the listing is no longer on offer
  // (sold, let, a withdrawn native post). delete: a delta's deletion.
  action: 'upsert' | 'withdraw' | 'delete';
  listingType: ListingType | null;
  // The format's own words for the type, quoted in the reject reason when unknown.
  typeText?: string | null;
  // Why the format's fields give no kind, when the adapter knows (a property type that is not
  // a home, an OpenImmo vermarktungsart that says both or neither): the whole reject reason.
  typeReason?: string | null;
  title?: unknown;
  price?: unknown;
  currency?: string | null;
  pricePeriod?: string | null;
  // What the format's structure says of the rent's charges (OpenImmo: warmmiete true,
  // kaltmiete false), when it does; a note in the price text says it otherwise ("CC", "HC").
  chargesIncluded?: boolean | null;
  // The monthly charges the format states beside a rent without them (OpenImmo nebenkosten,
  // or warmmiete above kaltmiete; JSON { "rent": { "net", "charges" } }); a note in the price
  // text states them otherwise ("+ 200 € charges").
  charges?: unknown;
  area?: unknown;
  rooms?: unknown;
  bedrooms?: unknown;
  // Place as given: a commune, locality or quarter name, a quarter, a postcode.
  town?: string | null;
  quarter?: string | null;
  postcode?: string | null;
  country?: string | null;
  lat?: unknown;
  lng?: unknown;
  images?: string[];
  students?: unknown;
  // created: the agency's creation or publication date (content, kept up to date).
  // changed: a last-change date (openimmo stand_vom), used as created_at only on first sight.
  date?: unknown;
  dateKind?: 'created' | 'changed';
  // How a date without an offset is read: local wall time in Luxembourg.
  sourceUrl?: string | null;
}

export interface Reject {
  external_id: string | null;
  position: string;
  reason: string;
}

// What a streaming adapter reports, in file order: a record, a record it could not read at
// all (not an object, wrong column count...), or what the file says of itself (openimmo
// umfang, json mode), which may come before, between or after the records.
export type FeedEvent = { kind: 'record'; record: RawRecord } | { kind: 'reject'; reject: Reject } | { kind: 'mode'; mode: FeedMode };

// A whole feed in memory: what the adapters' convenience functions (tests, tools) return.
export interface ParsedFeed {
  // What the file says of itself; null when it cannot say (csv).
  mode: FeedMode | null;
  records: RawRecord[];
  rejects: Reject[];
}

// A record ready for the listings table.
export type NormalizedListing = ListingContent & {
  // The postcode the record states, for deduplication only (not public, not in the content
  // hash: see migrations/20261128000100_listing_postcode.ts).
  postcode: number | null;
  // Whether the rent is stated with its charges included, for deduplication only (not public,
  // not in the content hash: see migrations/20261129000200_listing_charges_included.ts).
  charges_included: boolean | null;
  // The monthly charges stated beside a rent that does not include them, in EUR, for
  // deduplication only (not public, not in the content hash: see
  // migrations/20261129000300_listing_charges_eur.ts).
  charges_eur: number | null;
  // The floor the title says the flat is on (floor.ts), for deduplication only (not public, not
  // in the content hash, which holds the title: see migrations/20261201000100_listing_floor.ts).
  floor: number | null;
  created_at: Date | null;
  created_at_kind: 'created' | 'changed' | null;
  // The date as the record states it, not capped at the import's time (created_at is): what
  // deduplication ranks by (listings.stated_created_at, migrations/20261130000300).
  stated_at: Date | null;
  content_hash: string;
};

// Every record read ends in exactly one of created, updated, unchanged, reactivated,
// deleted, skipped and rejected (for a run that is not refused): read is their sum.
// withdrawn counts listings, not records: those deleted by a record of the file plus those
// a full snapshot no longer contains.
export interface ImportCounts {
  read: number;
  created: number;
  updated: number;
  unchanged: number;
  reactivated: number;
  // Records that withdrew a live listing: a delta's deletion, or a record saying the
  // listing is sold, let, reserved or withdrawn.
  deleted: number;
  // Records that asked to withdraw a listing that was not live (unknown, or already
  // withdrawn): nothing to do.
  skipped: number;
  rejected: number;
  withdrawn: number;
  merged: number;
  // Listings that had been duplicates of another listing and are their own public listing again.
  separated: number;
  flagged: number;
}

export interface ImportReport {
  source: string;
  format: FeedFormat;
  mode: FeedMode;
  status: 'ok' | 'refused';
  run_id: number;
  started_at: string;
  finished_at: string;
  counts: ImportCounts;
  // The first MAX_REPORTED_REJECTS rejects (counts.rejected has them all; the onReject
  // option of importFeed sees every one).
  rejects: Reject[];
  // Set when the withdrawal guard refused the import.
  refusal?: { live: number; would_withdraw: number };
  // Set when the connection dropped once COMMIT was sent and the commit was applied all the same
  // (the run's row, finished in the transaction, says so): the import is done, as reported.
  commit_answer_lost?: true;
}

export type ProgressEvent =
  // While reading: records so far, bytes so far, and the size of the input when known.
  | { phase: 'read'; records: number; bytes: number; totalBytes: number | null }
  | { phase: 'parsed'; records: number; bytes: number }
  | { phase: 'waiting-for-lock'; source: string }
  | { phase: 'write'; step: string }
  // The transaction's work is done and its COMMIT goes next: from here a failure may leave the
  // outcome unknown (the run's row tells).
  | { phase: 'commit'; runId: number }
  | { phase: 'done' };
