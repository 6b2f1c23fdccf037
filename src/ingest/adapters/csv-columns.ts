import { placeKey } from '../../reference/gazetteer.js';
import { FeedParseError } from '../errors.js';

// The CSV's documented columns, and where a file has them.
export const CSV_HEADER = [
  'Référence', "Type d'offre", 'Type de bien', 'Titre', 'Prix', 'Surface', 'Pièces', 'Chambres', 'Localité',
  'Code postal', 'Latitude', 'Longitude', 'Photos', 'Étudiants', 'Date de création', 'Lien',
] as const;

// Where each column of CSV_HEADER is in the file (`at`), and how many fields a row needs to
// hold them all.
export interface Columns {
  at: number[];
  needed: number;
  // The header's number of columns, documented or not.
  length: number;
}

// The unit a header states in brackets, for the columns whose figures have one: prices are
// read as EUR (per month for a rent), areas as m². Another currency, thousands or millions, a
// figure per m², or square feet would be read as what they are not (an outside probe of stop
// 46: `Prix (CHF)` 4 900 stored as 4,900 EUR, `Surface (sq ft)` 1290 as 1,290 m², and with
// `Prix (€/m²)` before `Prix` the price per m² taken for the price).
// Each a word or sign of its own: "net EUR", "€/mois", "EUR pro Monat", "HT €" are EUR as
// written (a regression probe of stop 46: an unanchored form refused 20 of 53 such headers).
const OTHER_CURRENCY = /\b(?:chf|sfr|fr|usd|gbp|francs?|dollars?|pounds?|sterling)\b|\$|£|¥/i;
const THOUSANDS = /\bk\s*(?:€|eur\b)|(?:€|\beur)\s*k\b|\b(?:keur|teur|tsd|mio|meur|millions?|milliers?|thousands?|tausend)\b|\b[mt]\s*€|x\s*1[\s.]?000\b|\b000\b/i;
const PER_AREA = /(?:\/|\b(?:par|per|pro|le|la)\b)\s*(?:m²|m2|qm|sqm|sq\.?\s*m\b|m\s*(?:$|\)|,|;)|mètre|metre)/i;
const PER_YEAR = /(?:\/|\b(?:par|per|pro)\b)\s*(?:an|année|annee|year|jahr)\b/i;
const NOT_M2 = /sq\.?\s*f|sqft|\bft\b|ft²|feet|foot|\bpieds?\b|\bacres?\b/i;
function unitRefused(name: (typeof CSV_HEADER)[number], header: string): string | null {
  const units = [...header.matchAll(/\(([^)]*)\)/g)].map((m) => m[1]).join(' ');
  if (units.trim() === '') return null;
  if (name === 'Prix' && [OTHER_CURRENCY, THOUSANDS, PER_AREA, PER_YEAR].some((re) => re.test(units))) {
    return 'prices are read as EUR (a month\'s rent, a sale\'s price), as written: not in another currency, thousands, per m² or per year';
  }
  if (name === 'Surface' && NOT_M2.test(units)) return 'areas are read in m²';
  return null;
}

// The columns found by name (letter case and accents aside), so that a file with the same
// columns in another order, or with others among them, reads as one in the documented order.
// A unit written beside the name (`Prix (€)`, `Surface (m²)`) is not part of it.
// A column missing: the file is refused, naming the columns missing when most are there (an
// outside probe: a header in another order without Surface was said to have "Lien" where
// "Référence" was expected), else the first place where the header departs from the documented
// one (another separator, another header altogether).
export function columnsOf(header: string[]): Columns {
  const keys = header.map((h) => placeKey(h.replace(/\([^)]*\)/g, '')));
  const at = CSV_HEADER.map((h) => {
    const named = keys.flatMap((k, i) => (k === placeKey(h) ? [i] : []));
    if (named.length === 0) return -1;
    // (Another column named twice: the first, as ever.)
    if (h !== 'Prix' && h !== 'Surface') return named[0];
    // Two columns of one name (`Prix (€/m²)`, `Prix`): the first whose unit is read (`Prix (€
    // HC)` before `Prix (€ CC)`: the first, as ever).
    const usable = named.filter((i) => unitRefused(h, header[i]) === null);
    if (usable.length > 0) return usable[0];
    const i = named[0];
    throw new FeedParseError(`the CSV column "${header[i].trim().slice(0, 60)}" states a unit this importer does not read: ${unitRefused(h, header[i])}; nothing was read`);
  });
  if (at.every((k) => k >= 0)) return { at, needed: Math.max(...at) + 1, length: header.length };
  const missing = CSV_HEADER.filter((_, k) => at[k] < 0);
  if (missing.length <= 3) {
    const names = missing.map((h) => `"${h}"`).join(', ');
    throw new FeedParseError(`wrong CSV header: ${missing.length === 1 ? `the column ${names} is` : `the columns ${names} are`} missing (the header must name the columns ${CSV_HEADER.join(';')}, in any order, separated by semicolons)`);
  }
  const i = CSV_HEADER.findIndex((h, k) => header[k] === undefined || keys[k] !== placeKey(h));
  const got = header[i];
  const shown = got === undefined ? 'missing' : `"${got.slice(0, 40)}"`;
  throw new FeedParseError(
    `wrong CSV header: column ${i + 1} is ${shown}, expected "${CSV_HEADER[i]}" (the header must name the columns ${CSV_HEADER.join(';')}, separated by semicolons)`,
  );
}
