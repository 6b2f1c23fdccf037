// Counts of rooms and bedrooms as agencies write them: split from values.ts, which holds the
// other values (prices, areas).
import { spaceRunsSqueezed } from './space-runs.js';
import { bad, INCLUDES, isBlank, MAX_VALUE_TEXT, ok, parseDecimal, show, type Parsed } from './values.js';

// The words agencies write after a count of rooms or bedrooms ("3 pièces", "3 Zimmer",
// "2 ch.", "2 beds"), and the French T3 / F3 (three rooms), also "T1 bis" and "T3 duplex"
// (a variant of the type, not another room).
// Also "3 pces", "2 chbres", "2 chambres à coucher", "3 Räume", "3-Zimmer", "3 Zimmer-Wohnung" and the
// German "3 ZKB" (Zimmer, Küche, Bad: 3 rooms, a kitchen and a bathroom) (an outside probe of stop 49).
// Also "3 pièces principales" (the main rooms, as French listings count rooms), "2 chambre(s)", "2 SZ"
// (Schlafzimmer) and "2 bdr", "2 bdrm", "2 bdrms" (an outside probe of stop 50).
const COUNT_WORDS = /\s*(?:-\s*)?(pi[eè]ces?(?:\s+principales?)?|pces?\.?|pcs?\.?|p\.?|zimmer(?:\s*-\s*wohnung|wohnung)?|zi\.?|zkb|r(?:ä|ae)ume?|rooms?|chambres?(?:\s+[àa]\s+coucher|\s*\(s\))?|chbres?\.?|ch\.?|bedrooms?|beds?|schlafzimmer|sz\.?|bdr(?:ms?|s)?\.?)\s*$/i;
// A room of another kind added to the count: "3 + bureau", "2 chambres + bureau", "3 Zimmer + Büro",
// "2 + study". It is not counted (not a bedroom, nor always a room): the figure is the one before
// the "+" (an outside probe of stop 48). A figure after it ("3+1") is still no count.
// Also in brackets, counted as one ("2 (+ 1 bureau)"), and the kitchen ("3 pièces + cuisine") (an
// outside probe of stop 49).
const EXTRA_ROOM_WORDS = String.raw`\+\s*(?:(?:un|une|ein|a|an|1)\s+)?(?:bureau|office|study|b(?:ü|ue)ro|arbeitszimmer|dressing|mezzanine|buanderie|cuisine|k(?:ü|ue)che|kitchen)`;
const EXTRA_ROOM = new RegExp(String.raw`\s*(?:${EXTRA_ROOM_WORDS}|\(\s*${EXTRA_ROOM_WORDS}\s*\))\s*$`, 'i');
// A bound or a range ("6+", "3-4", "3 à 4") is no count: refused, saying so.
// (`3+1`, rooms and a study, say, since stop 51: it was "not a number".)
const NOT_ONE_COUNT = /^\d{1,2}\s*\+(?:\s*\d{1,2})?$|^\d{1,2}\s*(?:-|–|à|a|bis|to)\s*\d{1,2}$/i;
const FRENCH_TYPE = /^[TF]\s*(\d{1,2})(?:\s+(?:bis|ter|duplex|triplex))?$/i;
// A half room: "3 ½", "2 1/2", "2½" are 3.5 and 2.5, rounded down as "2.5" is.
const HALF = /^(\d{1,2})\s*(?:½|1\s?\/\s?2)$/;
// A count spelt out, in French, German or English ("deux pièces", "zwei Zimmer"), up to twelve
// (up to six until stop 55: an outside probe's house of "huit" rooms was refused whole).
const NUMBER_WORDS = new Map<string, number>([
  ['un', 1], ['une', 1], ['deux', 2], ['trois', 3], ['quatre', 4], ['cinq', 5], ['six', 6],
  ['sept', 7], ['huit', 8], ['neuf', 9], ['dix', 10], ['onze', 11], ['douze', 12],
  ['ein', 1], ['eine', 1], ['eins', 1], ['zwei', 2], ['drei', 3], ['vier', 4], ['fünf', 5], ['sechs', 6],
  ['sieben', 7], ['acht', 8], ['neun', 9], ['zehn', 10], ['elf', 11], ['zwölf', 12],
  ['one', 1], ['two', 2], ['three', 3], ['four', 4], ['five', 5], ['six', 6],
  ['seven', 7], ['eight', 8], ['nine', 9], ['ten', 10], ['eleven', 11], ['twelve', 12],
]);

// Whether a word spells out a count of a home's rooms in an offer's words ("deux chambres",
// "zwei Zimmer": a home, not a room to let): up to six only. Past six the words are as often
// something else beside a room ("chambre neuf", new; "room ten minutes from…"; "Zimmer acht
// Minuten…"), and the re-check of stop 55 found such rooms read as rents or refused.
export function isNumberWord(word: string): boolean {
  return (NUMBER_WORDS.get(word) ?? Infinity) <= 6;
}

// A count text without what it includes, what is added to it, and its word.
const countText = (text: string) => text.trim().replace(INCLUDES, '').replace(EXTRA_ROOM, '').replace(COUNT_WORDS, '').trim();

// A count of rooms that says how many of them are bedrooms ("4 pièces dont 3 chambres", "4 Zimmer,
// davon 3 Schlafzimmer"), in a bedrooms field: the bedrooms it includes, not the rooms (a
// regression probe of stop 48 found 4 bedrooms read).
// Also the main rooms and the French type: "3 pièces principales dont 2 chambres", "T3 dont 2 chambres"
// (the re-check of stop 50: refused as rooms only, and the type was read as 3 bedrooms).
// The rooms spelt out too ("sept pièces dont 5 chambres": the second re-check of stop 55 found the
// rooms' word read as the bedrooms once words past six were counts).
const ROOMS_THEN_INCLUDED = new RegExp(
  String.raw`^\s*(?:[TF]\s*(\d{1,2})|(\d{1,2}|${[...NUMBER_WORDS.keys()].join('|')})\s*(?:pi[eè]ces?(?:\s+principales?)?|pcs?|p|zimmer|zi|rooms?)\.?)(?=[\s,;:–-])[^]*?\b(?:dont|davon|including)\b([^]*)$`,
  'i',
);
// Rooms with their bedrooms in brackets, no "dont" said: "4 pièces (3 chambres)" is 4 rooms, 3 of them
// bedrooms (an outside probe of stop 49).
const ROOMS_THEN_BEDROOMS = /^\s*(\d{1,2})\s*(?:pi[eè]ces?|pces?|pcs?|p|zimmer|zi|rooms?)\.?\s*\(\s*(\d{1,2}|une?|deux|trois|quatre|eine?|zwei|drei|vier|one|two|three|four)\s*(?:chambres?(?:\s+[àa]\s+coucher)?|chbres?\.?|ch\.|schlafzimmer|schlafr(?:ä|ae|a)ume?|bedrooms?)\s*\)\s*$/iu;
// Rooms as their bedrooms and the living room, in brackets: "3 (2 chambres + séjour)" is 3 rooms, 2 of them
// bedrooms; read only when the brackets add up to the rooms (an outside probe of stop 50).
const ROOMS_AS_BEDROOMS_AND_LIVING = /^\s*(\d{1,2})\s*(?:(?:pi[eè]ces?|pces?|pcs?|p|zimmer|zi|rooms?)\.?\s*)?\(\s*(\d{1,2}|une?|deux|trois|quatre|eine?|zwei|drei|vier|one|two|three|four)\s*(?:chambres?(?:\s+[àa]\s+coucher)?|chbres?\.?|ch\.|schlafzimmer|schlafr(?:ä|ae|a)ume?|bedrooms?)\s*(?:\+|et|und|and)\s*(?:(?:salle\s+de\s+)?s[ée]jour|salon|living(?:\s*room)?|wohnzimmer|lounge)\s*\)\s*$/iu;
const BEDROOMS_COUNTED = /^\s*(\d{1,2}|une?|deux|trois|quatre|eine?|zwei|drei|vier|one|two|three|four)\s*(?:chambres?|chbres?|ch\.|schlafzimmer|schlafr(?:ä|ae|a)ume?|bedrooms?)(?!\p{L})/iu;

// A count as written: a figure or a word ("3", "trois").
const countWord = (w: string): number => NUMBER_WORDS.get(w.toLowerCase()) ?? Number(w);

// Forms that count rooms and nothing else ("3 ZKB", "3-Zimmer", "3 Zimmer-Wohnung", "3 Räume", "3
// pièces + cuisine"): no count of bedrooms, refused in a bedrooms field, as they were (the
// regression probe of stop 49 found "3 ZKB" there read as 3 bedrooms, so 4 rooms).
// (The kitchen only after rooms: "2 chambres + cuisine" counts 2 bedrooms, as it did: its re-check.)
// "3 pièces principales" too: the main rooms, bedrooms and living room alike (stop 50).
const ROOMS_ONLY = /zkb|pi[eè]ces?\s+principales?|zimmer\s*-?\s*wohnung|\d\s*-\s*zimmer|(?<!\p{L})r(?:ä|ae)ume?(?!\p{L})|(?<!\p{L})(?:pi[eè]ces?|pces?\.?|p\.|zimmer|zi\.?|rooms?)\s*\(?\s*\+\s*(?:cuisine|k(?:ü|ue)che|kitchen)/iu;

// Whether a count text counts rooms only: those forms, and the French type ("T3" is three rooms, of
// which two bedrooms as a rule, not always: refused in a bedrooms field rather than read as 3).
const countsRoomsOnly = (text: string) => ROOMS_ONLY.test(text) || FRENCH_TYPE.test(countText(text));

// The figure of a count text. A studio is one room and no bedroom.
function countFigure(text: string, what: string): number | null {
  if (text.length > MAX_VALUE_TEXT) return null;
  const bracketed = ROOMS_THEN_BEDROOMS.exec(text);
  if (bracketed) {
    const rooms = Number(bracketed[1]);
    if (what !== 'bedrooms') return rooms;
    const n = countWord(bracketed[2]);
    return n <= rooms ? n : null;
  }
  const living = ROOMS_AS_BEDROOMS_AND_LIVING.exec(text);
  if (living) {
    // Brackets that do not add up ("4 (2 chambres + séjour)": what is the fourth room?) are no count.
    const rooms = Number(living[1]);
    const n = countWord(living[2]);
    if (n + 1 !== rooms) return null;
    return what === 'bedrooms' ? n : rooms;
  }
  const included = what === 'bedrooms' ? ROOMS_THEN_INCLUDED.exec(text) : null;
  if (included) {
    const bedrooms = BEDROOMS_COUNTED.exec(included[3].replace(/^[\s(]+/, ''));
    // More bedrooms than rooms ("4 pièces dont 12 chambres") is a slip: no count.
    if (bedrooms) {
      const n = countWord(bedrooms[1]);
      return n <= countWord(included[1] ?? included[2]) ? n : null;
    }
    // None said: in brackets, read as before (the rooms' figure: "4 Zimmer (davon 1 Büro)"), rather
    // than lose a record read until now (its re-check); written out ("4 pièces dont 1 bureau"),
    // refused, as it was.
    if (!/\(\s*(?:dont|davon|including)\b/i.test(text)) return null;
  }
  // Rooms only, no bedrooms said: none counted in a bedrooms field.
  if (what === 'bedrooms' && countsRoomsOnly(text)) return null;
  const s = countText(text);
  const word = s.toLowerCase();
  if (word === 'studio') return what === 'bedrooms' ? 0 : 1;
  const t = FRENCH_TYPE.exec(s);
  if (t) return Number(t[1]);
  const half = HALF.exec(s);
  if (half) return Number(half[1]) + 0.5;
  return NUMBER_WORDS.get(word) ?? parseDecimal(s, false);
}

// Rooms and bedrooms (what: 'rooms' or 'bedrooms'): whole numbers; fractions ("2.5", "2,5")
// round down.
export const parseCount = spaceRunsSqueezed(readCount, show, MAX_VALUE_TEXT);
function readCount(v: unknown, what: string): Parsed<number> {
  if (isBlank(v)) return ok(null);
  let n: number | null;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string') n = countFigure(v, what);
  else n = null;
  if (n === null && typeof v === 'string' && v.length <= MAX_VALUE_TEXT) {
    if (NOT_ONE_COUNT.test(countText(v))) return bad(`${what} ${show(v)} is not one count`);
    if (what === 'bedrooms' && countsRoomsOnly(v) && !ROOMS_THEN_INCLUDED.test(v)) return bad(`bedrooms ${show(v)} counts rooms, not bedrooms`);
  }
  if (n === null || !Number.isFinite(n)) return bad(`${what} ${show(v)} is not a number`);
  if (n < 0) return bad(`${what} ${show(v)} is negative`);
  if (n > 100) return bad(`${what} ${show(v)} is not plausible`);
  return ok(Math.floor(n));
}
