// The kind of offer a CSV's or a JSON's offer text names (split from common.ts, which holds what
// the adapters share otherwise).
import type { ListingType } from '../../domain/listing.js';
import { tokens } from '../../reference/gazetteer.js';
import { isNumberWord } from '../counts.js';

// The kind of offer, in the words of each format (the CSV's French, the JSON's English) and of
// the other languages agencies here write in. Agency software writes phrases, not codes
// ("À louer", "Location meublée", "Vente VEFA", "Zimmer in WG"), so the text is read word by
// word, any letter case or accents; words that say no kind (meublée, longue durée, neuf) are
// passed over. Two words written as one or apart ("sous-location", "sous location",
// "flat share") are one word.
const OFFER_WORDS: Record<string, ListingType> = {
  location: 'RENT', louer: 'RENT', rent: 'RENT', rental: 'RENT', let: 'RENT', letting: 'RENT', lease: 'RENT',
  miete: 'RENT', mieten: 'RENT', vermieten: 'RENT', vermietung: 'RENT', verlounen: 'RENT',
  vente: 'SALE', vendre: 'SALE', achat: 'SALE', vefa: 'SALE', sale: 'SALE', sell: 'SALE', buy: 'SALE', purchase: 'SALE',
  kauf: 'SALE', kaufen: 'SALE', verkauf: 'SALE', verkaufen: 'SALE', verkafen: 'SALE',
  colocation: 'FLATSHARE', coloc: 'FLATSHARE', flatshare: 'FLATSHARE', houseshare: 'FLATSHARE', coliving: 'FLATSHARE',
  wg: 'FLATSHARE', wohngemeinschaft: 'FLATSHARE',
  souslocation: 'SUBLET', sublet: 'SUBLET', sublease: 'SUBLET', subletting: 'SUBLET', untermiete: 'SUBLET',
  untervermietung: 'SUBLET',
};
// Short or loose words that name a kind only at the head of the offer, when no other word names one
// and none makes them something else: `Loc.`, `Bail` (a lease: let), `shared` (a flat share); not `Vente
// en bail emphytéotique`, `Bail emphytéotique`, `Droit au bail`, `Shared ownership` (an outside probe of
// stop 50).
const LOOSE_OFFER_WORDS: Record<string, ListingType> = { loc: 'RENT', bail: 'RENT', shared: 'FLATSHARE' };
// What a loose word may be let with that is no home, or a lease that is no home's, as the first word
// after it (links passed over): `Bail rural`, `Bail à ferme`, `Bail de chasse`, `Loc. box`, `Loc. cabinet
// médical`, `Shared workspace`, `Bail à céder` (the re-checks of stop 50 found them homes on offer).
// Only the first word: further on such words describe the home (`Loc. maison avec jardin`, `Loc.
// appartement Place Guillaume`, `salle de bain`: the fourth re-check found 1,230 homes refused when any
// word of the offer counted).
const NOT_LOOSE_THING = new Set([
  'droit', 'cession', 'reprise', 'emphyteotique', 'ownership', 'equity', 'rural', 'ferme', 'agricole', 'pature', 'paturage', 'chasse', 'peche',
  'construction', 'professionnel', 'professionnelle', 'commercial', 'stationnement', 'cave', 'caves', 'local', 'locaux',
  'reel', 'solidaire', 'box', 'emplacement', 'place', 'atelier', 'hangar', 'cabinet', 'medical', 'jardin', 'workspace',
  'desk', 'garden', 'kitchen', 'coworking', 'salle', 'buro', 'keller', 'tiefgarage', 'lagerhalle', 'halle', 'ladenlokal',
  'gewerbeflache', 'praxis', 'werkstatt', 'scheune', 'pferdebox', 'weide', 'acker', 'pre', 'jagd', 'fischerei', 'verger',
  'vigne', 'etang', 'warehouse', 'storage', 'magasin', 'boutique', 'depot', 'voiture', 'vehicule', 'materiel', 'ceder',
  'cede', 'reprendre', 'derogatoire', 'precaire',
]);
// The articles passed over too before that first word: "Loc. d'un box", "Loc. une cave", "Loc. du box"
// (the fifth re-check: on offer as homes).
const ARTICLES = new Set(['un', 'une', 'du', 'des', 'l', 'les', 'au', 'aux', 'en', 'the', 'ein', 'eine', 'einen', 'einer', 'der', 'die', 'das', 'den', 'dem']);
// Words anywhere in the offer that say the home is taken, held or no longer let, in the three
// languages, and the deal words themselves: beside other words a deal word does not withdraw (deal-done.ts),
// so the record is refused, never put on offer (`Loc. T3 (loué)`, `Loc. expired`, `Loc. vergeben`: the
// third re-check). Alone beside the loose word, a deal word withdraws the listing (offerForDone).
const NOT_LOOSE_STATE = new Set([
  'reserve', 'reservee', 'reserved', 'taken', 'option', 'indisponible', 'unavailable', 'resilie', 'termine', 'expire',
  'expired', 'terminated', 'gekundigt', 'vergeben', 'annule', 'cancelled', 'canceled', 'withdrawn', 'archive', 'retire',
  'beendet', 'abgelaufen', 'vacancy', 'loue', 'louee', 'vendu', 'vendue', 'signe', 'signed', 'vermietet', 'verkauft',
  'rented', 'sold',
]);
// A room on its own is let in a shared flat, unless a count makes it part of a home ("2
// chambres") or another word says what the offer is ("Sous-location chambre").
const ROOM_WORDS = new Set(['room', 'chambre', 'zimmer']);
// What is not a home, whatever the kind of offer: "Location bureau", "Garage à louer",
// "Terrain à vendre" are no listings of this feed (rejected as before the words were read).
// Nor are holiday or short lets ("Location de vacances", "Location saisonnière"), rooms of a
// hotel or guest house, a business ("Location-gérance", "Vente fonds"), rent-to-own, or a
// deal already done ("Let agreed").
export const NOT_HOME_WORDS = new Set([
  'bureau', 'bureaux', 'office', 'offices', 'garage', 'garages', 'parking', 'parkings', 'stellplatz', 'commercial', 'commerciale',
  'commerciales', 'commerciaux', 'commerce', 'gewerbe', 'entrepot', 'lager', 'terrain', 'terrains', 'grundstuck', 'land', 'viager',
  'vacances', 'vacance', 'saisonniere', 'saisonnier', 'airbnb', 'holiday', 'holidays', 'ferien', 'ferienwohnung', 'hotes',
  'gerance', 'accession', 'agreed',
]);
// A kind named only to be ruled out or allowed as an option ("pas de sous-location",
// "Rent (no sublet)", "keine WG", "Sous-location possible", "Colocation interdite") is not
// the kind of the offer.
const NEGATIONS = new Set(['pas', 'sans', 'no', 'non', 'not', 'keine', 'kein', 'ohne', 'nicht']);
const OPTIONS = new Set([
  'possible', 'possibles', 'interdit', 'interdite', 'interdits', 'interdites', 'exclu', 'exclue', 'exclus', 'exclues', 'autorise',
  'autorisee', 'autorises', 'autorisees', 'accepte', 'acceptee', 'acceptes', 'acceptees', 'permis', 'permise', 'permises', 'refuse',
  'refusee', 'refuses', 'refusees', 'allowed', 'forbidden', 'permitted', 'accepted', 'erlaubt', 'verboten', 'moglich', 'gestattet',
]);
const LINKS = new Set(['de', 'd', 'la', 'le', 'of', 'a', 'an']);

// Whether the words of an offer name something that is not a home ("Location bureau",
// "Location de vacances", "Let agreed").
export function offerNotAHome(words: string[] | string): boolean {
  return (typeof words === 'string' ? tokens(words) : words).some((w) => NOT_HOME_WORDS.has(w));
}

// The kinds an offer's words name, when they name more than one that are not the one narrower
// kind ("Location-vente", "Location ou vente": rent and sale), for a refusal that says so (an
// outside probe of stop 51 was told "unknown kind of offer"); else null.
export function offerKindsInConflict(text: string): ListingType[] | null {
  const words = tokens(text);
  const kinds = new Set<ListingType>();
  for (let i = 0; i < words.length; i++) {
    const [kind, width] = kindAt(words, i);
    i += width - 1;
    if (kind) kinds.add(kind);
  }
  if (kinds.has('FLATSHARE') || kinds.has('SUBLET')) kinds.delete('RENT');
  return kinds.size > 1 ? [...kinds] : null;
}

function offerWord(word: string): ListingType | undefined {
  // Plurals: "Locations", "Ventes", "Rentals".
  return OFFER_WORDS[word] ?? (word.endsWith('s') ? OFFER_WORDS[word.slice(0, -1)] : undefined);
}

// The kind the words name at position i, and how many words name it: two written apart as one
// ("sous location") first.
function kindAt(words: string[], i: number): [ListingType | undefined, number] {
  const joined = i + 1 < words.length ? offerWord(words[i] + words[i + 1]) : undefined;
  return joined ? [joined, 2] : [offerWord(words[i]), 1];
}

// The kind the words name. A flat share or a sublet is also let ("Colocation à louer",
// "Room for rent"): the narrower kind is meant. Words of two other kinds ("Location-vente",
// rent-to-own; "Location ou vente") contradict each other: null, like text that names none.
// (loose: false reads the other words alone.)
export function offerType(text: string, loose = true): ListingType | null {
  const words = tokens(text);
  if (offerNotAHome(words)) return null;
  const kinds = new Set<ListingType>();
  let looseKind: ListingType | null = null;
  let room = false;
  // The word before position i, links ("de", "of") passed over.
  const before = (i: number) => {
    let k = i - 1;
    while (k >= 0 && LINKS.has(words[k])) k--;
    return words[k] ?? '';
  };
  for (let i = 0; i < words.length; i++) {
    const start = i;
    const [kind, width] = kindAt(words, i);
    i += width - 1;
    // "pas de sous-location", "sous-location possible", "colocation non autorisée",
    // "(colocation: non)", "flatshare not allowed".
    const [next, after] = [words[i + 1] ?? '', words[i + 2] ?? ''];
    const ruledOut = NEGATIONS.has(before(start)) || OPTIONS.has(next) || (NEGATIONS.has(next) && (after === '' || OPTIONS.has(after)));
    if (kind) {
      if (!ruledOut) kinds.add(kind);
    } else if (LOOSE_OFFER_WORDS[words[i]] && start === 0) {
      const thing = words.slice(i + 1).find((w) => !LINKS.has(w) && !ARTICLES.has(w)) ?? '';
      if (!ruledOut && !NOT_LOOSE_THING.has(thing) && !NOT_LOOSE_THING.has(thing.replace(/s$/, '')) && !words.some((w) => NOT_LOOSE_STATE.has(w))) looseKind = LOOSE_OFFER_WORDS[words[i]];
    } else if (ROOM_WORDS.has(words[i].replace(/s$/, '')) && !ruledOut) {
      // A count before or after the room ("2 chambres", "chambre(s): 2") makes it part of a home.
      const counted = (w: string) => /^\d+$/.test(w) || isNumberWord(w);
      if (!counted(words[i - 1] ?? '') && !counted(next.replace(/^s$/, after))) room = true;
    }
  }
  if (kinds.has('FLATSHARE') || kinds.has('SUBLET')) kinds.delete('RENT');
  if (kinds.size === 0 && looseKind && loose) kinds.add(looseKind);
  if (kinds.size === 0) return room ? 'FLATSHARE' : null;
  if (kinds.size > 1) return null;
  const [kind] = kinds;
  return room && kind === 'RENT' ? 'FLATSHARE' : kind;
}

// The offer and its kind as the words of a deal done are read in it (deal-done.ts, saysDone). A kind
// only a loose word names is no kind there: any deal word withdraws (`Loc. (loué)`, `Bail - vendu`, as
// `Vendu - Bail signé` did when `Bail` named none), the loose words written out for it to pass over.
// (Also where the loose word is not read for the kind, beside a word that is no home's: `Loc. (loué)`.)
export function offerForDone(text: string, kind: ListingType | null): [string, ListingType | null] {
  if (offerType(text, false) !== null || !tokens(text).some((w) => LOOSE_OFFER_WORDS[w])) return [text, kind];
  return [tokens(text).map((w, i, all) => (LOOSE_OFFER_WORDS[w] && `${w} ${all[i + 1]}` !== 'bail signe' ? 'location' : w)).join(' '), null];
}
