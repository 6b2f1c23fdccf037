// Whether a record says its deal is done (src/ingest/adapters/csv.ts, json.ts, openimmo.ts).
import { tokens } from '../../reference/gazetteer.js';

// Words that say a deal is done or the listing is off the market: let, sold, reserved, under a
// preliminary sale contract (`compromis`), in French, German, Luxembourgish and English. Agency
// software writes them where the kind of offer stands (`Loué`, `Vente - VENDU`, `Verkauft`), in
// a status field (`sold STC`, `let agreed`, `off market`, `expired`), or at the head of a
// title (`LOUÉ - Appartement 4`). Such a record withdraws its listing: rejected, it left the
// last version on offer for ever (an outside probe of stop 48).
const DONE_WORDS = new Set([
  'loue', 'louee', 'loues', 'louees', 'vendu', 'vendue', 'vendus', 'vendues', 'reserve', 'reservee', 'reserves', 'reservees',
  'compromis', 'vermietet', 'verkauft', 'reserviert', 'verlount', 'verkaaft', 'sold', 'rented', 'leased',
]);
const DONE_PAIRS = new Set(['let agreed', 'sale agreed', 'under offer', 'under contract', 'off market', 'sous offre', 'sous option']);
// A word followed by whom it is for is no deal done: `réservé aux étudiants`, `reserved for`.
const FOR_WHOM = new Set(['a', 'aux', 'au', 'pour', 'for', 'to', 'fur', 'fuer']);
export function saysDone(words: string[] | string): boolean {
  const w = typeof words === 'string' ? tokens(words) : words;
  return w.some((x, i) => (DONE_WORDS.has(x) && !FOR_WHOM.has(w[i + 1] ?? '')) || DONE_PAIRS.has(`${x} ${w[i + 1]}`));
}

// A title that begins with such a word standing apart (`LOUÉ - Appartement`, `[VENDU] Maison`,
// `*** Verkauft *** Wohnung`, `Sold: flat`), or is that word alone; not one in which it begins a
// phrase (`Réservé aux étudiants`, `Loué meublé` are no statement that the deal is done).
const TITLE_DONE = /^[\s[(*#!>-]*(\p{L}+(?:\s+\p{L}+)?)\s*(?:[\])*!:|–—-]|$)/u;
export function titleSaysDone(title: unknown): boolean {
  const texts = typeof title === 'string' ? [title] : title && typeof title === 'object' ? Object.values(title).filter((v): v is string => typeof v === 'string') : [];
  return texts.some((t) => {
    const m = TITLE_DONE.exec(t);
    if (!m) return false;
    const w = tokens(m[1]);
    return (w.length === 1 && DONE_WORDS.has(w[0])) || (w.length === 2 && DONE_PAIRS.has(w.join(' ')));
  });
}
