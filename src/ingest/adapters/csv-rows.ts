import { parseCoordinate } from '../coordinates.js';
import { parseCount } from '../counts.js';
import { parseFeedDate } from '../feed-dates.js';
import { parsePostcode } from '../postcode.js';
import { isBlank, parseArea, parseBool, parsePrice } from '../values.js';
import { offerForDone, offerType } from './common.js';
import { saysDone } from './deal-done.js';

// What the CSV reader (csv.ts) asks of a row's values: the typed columns, and the rows that
// leave out their empty trailing fields.

// The documented columns whose values have a form of their own (CSV_HEADER's order), and the
// check of a value found where they would be. A price must be there: every row has one.
export const TYPED_COLUMNS: [number, (v: string) => boolean][] = [
  [4, (v) => { const p = parsePrice(v); return p.ok && p.value !== null; }],
  [5, (v) => parseArea(v).ok],
  [6, (v) => parseCount(v, 'rooms').ok],
  [7, (v) => parseCount(v, 'bedrooms').ok],
  [10, (v) => v.trim() === '' || parseCoordinate(v) !== null],
  [11, (v) => v.trim() === '' || parseCoordinate(v) !== null],
  [13, (v) => parseBool(v, 'students').ok],
  [14, (v) => parseFeedDate(v).ok],
];

// Of values found where typed columns stand: how many, how many are of their column's form or
// not stated (`-`, `n/a`), and how many are of their form and stated.
export function fitOfTyped(typed: [string, (v: string) => boolean][]): { count: number; fits: number; stated: number } {
  let fits = 0;
  let stated = 0;
  for (const [v, check] of typed) {
    const blank = isBlank(v);
    const form = check(v);
    if (blank || form) fits++;
    if (!blank && form) stated++;
  }
  return { count: typed.length, fits, stated };
}

// A row that stops before the last column, the ones it leaves out empty: some agency software
// writes no separators after the last field that holds something (an outside probe of stop 52:
// such rows were refused). Read so when the row states a reference, an offer and a price and
// every typed column it holds is of its form, as a row's are; a line broken inside a field
// leaves a start without a price, or one the next line shows cut (shortRow in readCsvFeed), and
// a rest whose values stand in other columns, refused as before.
export function leftOutAtEnd(fields: string[], at: number[]): boolean {
  if (fields.length <= Math.max(at[0], at[1]) || isBlank(fields[at[0]])) return false;
  // Its offer is one, or a deal done (`Loué`, `VENDU`: the listing withdrawn); the rest of a broken
  // line has something else there (a URL, a figure). A deal done is held to the rest as any row
  // (the third regression check of stop 52: a `Statut` column saying `Loué` after the broken
  // field made the rest a withdrawal).
  if (readOffer(fields[at[1]]) === null || fields.length <= at[4] || isBlank(fields[at[4]])) return false;
  // A date stated but unread is the date and the link run together (`01/11/2026 10:00https://…`,
  // a separator lost): the link would be lost without a word.
  const date = fields[at[14]];
  const read = date === undefined || isBlank(date) ? null : parseFeedDate(date);
  if (read && (!read.ok || read.value === null)) return false;
  // A postcode run into the latitude (`475049,5589`), or a latitude whose longitude is missing:
  // the row's end is not where its writer put it.
  if (!isBlank(fields[at[9]] ?? '') && parsePostcode(fields[at[9]]) === null && /\d{5}/.test(fields[at[9]])) return false;
  if (!isBlank(fields[at[10]] ?? '') && isBlank(fields[at[11]] ?? '')) return false;
  return typedFit(fields, at);
}

// Every price, area, rooms, bedrooms, coordinate and students value a row holds is of its form
// (the price left out when `price` is false).
function typedFit(fields: string[], at: number[], price = true): boolean {
  const typed = fitOfTyped(TYPED_COLUMNS.filter(([k]) => at[k] < fields.length && (price || k !== 4)).map(([k, check]) => [fields[at[k]], check]));
  return typed.fits === typed.count;
}

// A short row that is a row of its own, read or not: one leftOutAtEnd reads, or one with an offer
// where the offer column stands and its other typed values in place (`Prix sur demande` is
// refused, and is no rest of the row before it). The rest of a broken line has its values one or
// more columns to the left: a URL, a figure or `oui` where the offer and the area stand.
export function rowOfItsOwn(fields: string[], at: number[]): boolean {
  return leftOutAtEnd(fields, at) || (readOffer(fields[at[1]]) !== null && typedFit(fields, at, false));
}

// What the offer column of a row says: a kind of offer, a deal done, or nothing this reader knows.
function readOffer(text: string | undefined): 'offer' | 'done' | null {
  if (text === undefined) return null;
  const kind = offerType(text);
  if (saysDone(...offerForDone(text, kind))) return 'done';
  return kind === null ? null : 'offer';
}

// The number of fields up to the last one that holds something.
export function filledLength(fields: string[]): number {
  let n = fields.length;
  while (n > 0 && fields[n - 1].trim() === '') n--;
  return n;
}
