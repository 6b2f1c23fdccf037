// The facts deduplication looks at, for one live listing (rule.ts, groups.ts; candidates.ts's NODE_COLS reads them).
export interface DedupNode {
  id: string;
  source: string;
  listing_type: string;
  commune: string;
  locality: string | null;
  // The postcode the record states (a street or a part of one), or null.
  postcode: number | null;
  // Its source writes one postcode for a whole locality (postcodes.ts): two postcodes, one of
  // them such, say nothing against the pair.
  postcode_of_place: boolean;
  lat: number | null;
  lng: number | null;
  // Coordinates that say where the flat is: given, and not a reference point (a commune's
  // or locality's point, where geocoders put what they could not place; see the migration
  // 20261123000200). Unlocated listings are compared by commune only.
  located: boolean;
  area_m2: number | null;
  rooms: number | null;
  price_eur: number;
  // The rent is stated with its charges included (true), without them (false), or the record
  // does not say (null): see priceGap.
  charges_included: boolean | null;
  // The charges stated beside a rent without them (charges_included false), else null: see gapOf.
  charges_eur: number | null;
  // The floor the title says the flat is on (floor.ts), or null. Left out (tests' nodes): null.
  floor?: number | null;
  image_count: number;
  has_source_url: boolean;
  created_at: Date;
  // The creation date the record states, uncapped (listings.stated_created_at), null when it
  // states none: then created_at is when the service first saw it, which depends on the order
  // of the imports (migrations/20261130000300). Left out (tests' nodes): created_at is it.
  stated_at?: Date | null;
  // Flagged stale: its source has not confirmed it for 14 days (flags.ts).
  stale: boolean;
  // Flagged price_outlier at the last verdict (flags.ts; a live listing, merged rows too): hidden
  // from Free and Starter keys, so no look-alike is flagged as its duplicate, and ranked after
  // one that is not for its group's public listing.
  outlier?: boolean;
}
