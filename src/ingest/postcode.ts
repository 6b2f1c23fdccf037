// Luxembourg postcodes, as records write them, and the regions they cover (for place.ts).

// Luxembourg postcodes are four digits, written `L-1234`, `L1234`, `LU-1234` or `1234`.
export function parsePostcode(s: string | null | undefined): number | null {
  if (!s) return null;
  const m = /^\s*(?:LU?\s*-?\s*)?(\d{4})\s*$/i.exec(s);
  return m ? Number(m[1]) : null;
}

// The first digit of a postcode tells the region. This is coarse and generous (a region
// maps to every canton that has postcodes starting with that digit), so it only ever
// narrows down a locality name that several communes share; it never picks a commune on
// its own, except for 1xxx and 2xxx, which belong to the City of Luxembourg alone.
const POSTCODE_REGION_CANTONS: Record<number, string[]> = {
  1: ['Luxembourg'],
  2: ['Luxembourg'],
  3: ['Esch-sur-Alzette', 'Luxembourg'],
  4: ['Esch-sur-Alzette', 'Capellen'],
  5: ['Remich', 'Luxembourg', 'Grevenmacher', 'Esch-sur-Alzette'],
  6: ['Grevenmacher', 'Echternach', 'Luxembourg'],
  7: ['Mersch', 'Luxembourg', 'Capellen', 'Diekirch', 'Echternach'],
  8: ['Capellen', 'Luxembourg', 'Redange', 'Mersch'],
  9: ['Diekirch', 'Clervaux', 'Wiltz', 'Vianden', 'Redange', 'Echternach', 'Mersch'],
};

// The postcode of a listing in `commune` (canton `canton`), as deduplication compares it
// (src/ingest/dedup/rule.ts): the stated one when its region (first digit) covers the
// commune's canton, else null (a postcode of another part of the country is a slip, and
// says nothing about the street).
export function postcodeFor(postcode: number | null, canton: string | undefined): number | null {
  if (postcode === null || canton === undefined) return null;
  return cantonsOfRegion(postcode).includes(canton) ? postcode : null;
}

// A postcode of the City of Luxembourg (1xxx and 2xxx, its alone).
export const isCityPostcode = (postcode: number): boolean => postcode >= 1000 && postcode < 3000;

// The cantons a postcode's region (its first digit) covers.
export function cantonsOfRegion(postcode: number): string[] {
  return POSTCODE_REGION_CANTONS[Math.floor(postcode / 1000)] ?? [];
}

// The postcode written in a place text ("L-4410 Belvaux", "Belvaux (4410)"), or null.
const POSTCODE_IN_TEXT = /(?:^|[\s,;(/])(?:LU?)?\s*-?\s*(\d{4})(?=$|[\s,;)/])/i;

export function postcodeIn(text: string | null): number | null {
  const m = text === null ? null : POSTCODE_IN_TEXT.exec(text);
  return m ? Number(m[1]) : null;
}

// The place text without the postcodes written in it ("L-4410 Luxembourg": " Luxembourg").
export function withoutPostcodes(text: string): string {
  return text.replace(new RegExp(POSTCODE_IN_TEXT.source, 'gi'), ' ');
}
