import type { ListingFilter } from '../domain/search.js';
import { type Columns, type Dictionary, FLAGGED } from './columns.js';
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
  loc: Uint8Array | null; // localities
  students: boolean;
  // Every row passes (`trivial`), or the flag is the only condition (`flagOnly`).
  trivial: boolean;
  flagOnly: boolean;
  geo: Circle | null;
}

// Codes of a column's dictionary: 1 for each of `names` (null: any value; 'none': no name is
// in the column, so nothing can match).
function maskOf(names: string[] | undefined, dict: Dictionary): Uint8Array | null | 'none' {
  if (!names) return null;
  const mask = new Uint8Array(dict.size);
  let any = false;
  for (const name of names) {
    const code = dict.find(name);
    if (code >= 0) (mask[code] = 1), (any = true);
  }
  return any ? mask : 'none';
}

// The filter against an index's dictionaries, or null when nothing can match.
export function compileFilter(f: ListingFilter, d: Columns['dicts']): CompiledFilter | null {
  const flag = !f.includeFlagged ? 0 : f.flagged === undefined ? -1 : f.flagged ? FLAGGED : 0;
  const mask = maskOf(f.communes, d.commune);
  const loc = maskOf(f.localities, d.locality);
  if (mask === 'none' || loc === 'none') return null;
  const typ = f.listingType ? d.type.find(f.listingType) : -1;
  const src = f.source !== undefined ? d.source.find(f.source.toLowerCase()) : -1;
  if ((f.listingType && typ < 0) || (f.source !== undefined && src < 0)) return null;
  const students = f.studentOnly === true;
  const others = mask !== null || loc !== null || typ >= 0 || src >= 0 || f.minPrice !== undefined || f.maxPrice !== undefined || f.minRooms !== undefined || students;
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
