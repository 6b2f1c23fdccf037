import type { ListingFilter } from '../domain/search.js';
import { type Columns, FLAGGED } from './columns.js';
import { Circle } from './geo-grid.js';

// A filter compiled against the dictionaries: codes and bounds (-1 / ±Infinity for "any").
export interface CompiledFilter {
  flag: number; // -1 any, 0 clean only, FLAGGED flagged only
  mask: Uint8Array | null; // communes
  minP: number;
  maxP: number;
  minR: number;
  typ: number;
  src: number;
  loc: number;
  students: boolean;
  // Every row passes (`trivial`), or the flag is the only condition (`flagOnly`).
  trivial: boolean;
  flagOnly: boolean;
  geo: Circle | null;
}

// The filter against an index's dictionaries, or null when nothing can match.
export function compileFilter(f: ListingFilter, d: Columns['dicts']): CompiledFilter | null {
  const flag = !f.includeFlagged ? 0 : f.flagged === undefined ? -1 : f.flagged ? FLAGGED : 0;
  let mask: Uint8Array | null = null;
  if (f.communes) {
    mask = new Uint8Array(d.commune.size);
    let any = false;
    for (const name of f.communes) {
      const code = d.commune.find(name);
      if (code >= 0) (mask[code] = 1), (any = true);
    }
    if (!any) return null;
  }
  const loc = f.locality !== undefined ? d.locality.find(f.locality) : -1;
  const typ = f.listingType ? d.type.find(f.listingType) : -1;
  const src = f.source !== undefined ? d.source.find(f.source.toLowerCase()) : -1;
  if ((f.locality !== undefined && loc < 0) || (f.listingType && typ < 0) || (f.source !== undefined && src < 0)) return null;
  const students = f.studentOnly === true;
  const others = mask !== null || loc >= 0 || typ >= 0 || src >= 0 || f.minPrice !== undefined || f.maxPrice !== undefined || f.minRooms !== undefined || students;
  return {
    flag,
    mask,
    minP: f.minPrice ?? -Infinity,
    maxP: f.maxPrice ?? Infinity,
    minR: f.minRooms ?? -Infinity, // unknown rooms (-1) fail any given minimum (>= 0)
    typ,
    src,
    loc,
    students,
    trivial: !others && flag < 0,
    flagOnly: !others && flag === 0,
    geo: f.geo ? new Circle(f.geo.lat, f.geo.lng, f.geo.radiusKm) : null,
  };
}
