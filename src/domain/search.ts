import type { GeoCircle } from './geo.js';
import type { ListingType } from './listing.js';

// What a listing search asks for, whoever answers it (SQL or the read model).
export const SORTS = ['price', '-price', 'size', '-size', 'createdAt', '-createdAt', 'distance'] as const;
export type Sort = (typeof SORTS)[number];

export interface ListingFilter {
  // Canonical commune names (one, or several for a locality name that communes share).
  communes?: string[];
  // Canonical locality names, any of them (one, or several for a name that several
  // localities bear: "Bonnevoie" is both Bonnevoie quarters), within `communes`.
  localities?: string[];
  minPrice?: number;
  maxPrice?: number;
  minRooms?: number;
  listingType?: ListingType;
  source?: string;
  studentOnly?: boolean;
  geo?: GeoCircle;
  // Free and Starter keys never see flagged listings.
  includeFlagged: boolean;
  flagged?: boolean;
}
