// Whether a record says its deal is done (src/ingest/adapters/csv.ts, json.ts, openimmo.ts).
import type { ListingType } from '../../domain/listing.js';
import { tokens } from '../../reference/gazetteer.js';
import { titleTexts } from './common.js';

// Words that say a deal is done or the listing is off the market, in French, German,
// Luxembourgish and English. Agency software writes them where the kind of offer stands
// (`Loué`, `Vente - VENDU`, `Verkauft`), in a status field (`sold STC`, `let agreed`, `off market`,
// `expired`), or at the head of a title (`LOUÉ - Appartement 4`). Such a record withdraws its
// listing: rejected, it left the last version on offer for ever (an outside probe of stop 48).
// A let property is sold as such: for a sale, "let" words describe the tenancy, not the deal
// (`Vente - bien loué`, `Loué - rendement 4 %`: its regression probe found them withdrawn).
const LET = ['loue', 'louee', 'loues', 'louees', 'vermietet', 'verlount', 'rented', 'leased'];
const SOLD = ['vendu', 'vendue', 'vendus', 'vendues', 'verkauft', 'verkaaft', 'sold', 'compromis'];
// Reserved: taken for now (rent or sale). Also "reserved for" (students...): read only alone.
const RESERVED = ['reserve', 'reservee', 'reserves', 'reservees', 'reserviert'];
// `Sous promesse (de vente)`, `Bail signé`, `Offer accepted`: an outside probe of stop 48.
const PAIRS = new Set(['let agreed', 'sale agreed', 'under offer', 'under contract', 'off market', 'sous offre', 'sous option', 'sous compromis', 'sous promesse', 'offer accepted', 'bail signe']);
// Pairs of one kind of deal: a sale's, a let's.
const SALE_PAIRS = new Set(['sale agreed', 'under contract', 'sous compromis', 'sous promesse']);
const LET_PAIRS = new Set(['let agreed', 'bail signe']);
const pairFits = (pair: string, type: ListingType | null) => type === null || !(type === 'SALE' ? LET_PAIRS : SALE_PAIRS).has(pair);
// Words beside them that say nothing more ("sold STC", "déjà loué", "bereits vermietet").
// "de" of `Sous compromis de vente`.
const FILLERS = new Set(['stc', 'deja', 'bereits', 'already', 'just', 'recently', 'recemment', 'subject', 'to', 'contract', 'de']);
// Words of the kind of offer, passed over in an offer's text ("Location (loué)", "Vente - VENDU").
const KIND_WORDS = new Set(['location', 'louer', 'rent', 'rental', 'vente', 'vendre', 'sale', 'miete', 'vermietung', 'verkauf', 'kauf', 'colocation', 'souslocation', 'sous', 'sublet', 'flatshare', 'a']);

const SALE_DONE = new Set([...SOLD, ...RESERVED]);
const LET_DONE = new Set([...LET, ...RESERVED]);
const ANY_DONE = new Set([...LET, ...SOLD, ...RESERVED]);
const doneWords = (type: ListingType | null): Set<string> => (type === 'SALE' ? SALE_DONE : type === null ? ANY_DONE : LET_DONE);

// Whether words say the deal is done and nothing else (fillers and, in an offer, the kind aside):
// `Loué`, `Vente - VENDU`, `Location (loué)`, `sold STC`, `Sous compromis`, `let agreed`. Not
// `Vente - appartement loué`, `Location - réservé étudiants`, `Vente - compromis possible`.
export function saysDone(text: string, type: ListingType | null = null): boolean {
  const words = tokens(text);
  const done = doneWords(type);
  let said = false;
  for (let i = 0; i < words.length; i++) {
    const pair = `${words[i]} ${words[i + 1]}`;
    if (PAIRS.has(pair) && pairFits(pair, type)) {
      said = true;
      i++;
    } else if (done.has(words[i])) said = true;
    else if (!FILLERS.has(words[i]) && !KIND_WORDS.has(words[i])) return false;
  }
  return said;
}

// A title that begins with such a word standing apart (`LOUÉ - Appartement`, `[VENDU] Maison`,
// `*** Verkauft *** Wohnung`, `Sold: flat`), or is that word alone; not one in which it begins a
// phrase (`Loué meublé`). Not "reserved": `Réservé : étudiants` says for whom. A title of several
// languages: any of them.
// A pair may be followed by what it is of: `Sous compromis de vente – Maison` (the regression probe of
// stop 49 found such titles left on offer).
const TITLE_DONE = /^[\s[(*#!>-]*(\p{L}+(?:\s+\p{L}+){0,3})\s*(?:[\])*!:|–—-]|$)/u;
const OF_DEAL: Record<'SALE' | 'LET', Set<string>> = { SALE: new Set(['vente']), LET: new Set(['location', 'bail']) };
// A title is read only when the offer's kind is known (a sale's title may say its property is let).
export function titleSaysDone(title: unknown, type: ListingType | null = null): boolean {
  if (type === null) return false;
  const done = doneWords(type);
  return titleTexts(title).some((t) => {
    const m = TITLE_DONE.exec(t);
    if (!m) return false;
    let w = tokens(m[1]);
    if (w.length === 4 && w[2] === 'de' && OF_DEAL[type === 'SALE' ? 'SALE' : 'LET'].has(w[3])) w = w.slice(0, 2);
    return (w.length === 1 && done.has(w[0]) && !RESERVED.includes(w[0])) || (w.length === 2 && PAIRS.has(w.join(' ')) && pairFits(w.join(' '), type));
  });
}
