// Control characters: C0 (NUL to U+001F, tab and line breaks included), DEL, and C1
// (U+0080 to U+009F). None belongs in an id, an email, a name or a search term: NUL is
// refused by PostgreSQL (22021) and truncates what bcrypt hashes, the others are invisible
// and forge log lines or display text. Inputs are refused with them at the edge.
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;

export function hasControlCharacter(s: string): boolean {
  return CONTROL_CHARACTER.test(s);
}

// Characters that show nothing in a name: format characters (zero-width spaces and joiners,
// direction marks and overrides, the soft hyphen, the byte-order mark) and variation
// selectors. A name searched for with one is not the name it hides in (an outside probe:
// `Lux%C2%ADembourg`, `Luxembourg%E2%80%8B` were read as Luxembourg), so it is refused.
// Also every other code point Unicode says shows nothing (Default_Ignorable_Code_Point): the
// combining grapheme joiner, the Mongolian and supplementary variation selectors and the Hangul
// fillers (a regression probe of stop 46 found them still read, and they were listed one by one),
// the Khmer inherent vowels, U+2065, U+FFF0-U+FFF8, the unassigned tags (an outside probe of
// stop 56). Format characters that are not default-ignorable (the Arabic number signs) stay
// refused with \p{Cf}.
export const INVISIBLE_IN_NAME = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;

// The line and paragraph separators (U+2028, U+2029): line breaks, as a search term's control
// characters are (an outside probe of stop 56: `commune=Lux%E2%80%A8embourg` was Luxembourg).
const LINE_SEPARATOR = /[\u2028\u2029]/;

// What no place name holds: symbols (emoji, <, |, +), private-use characters and code points
// Unicode has not assigned (noncharacters among them). A name is matched by its letters and
// digits, so they were dropped and `Lux😀embourg` was Luxembourg (an outside probe of stop 56).
// The acute accent and the grave accent typed alone (´ `) are kept: keyboards' stand-ins for an
// apostrophe (`Vallée de l´Ernz`), read as one (its re-check).
const NOT_IN_A_NAME = /(?![\u00b4\u0060])[\p{S}\p{Co}\p{Cn}]/u;

// What a name searched for may not hold, anywhere (at the ends too: a tab or a line break was
// trimmed there and refused inside, an outside probe of stop 47), and what to say of it: the
// API's text parameters (src/http/validate.ts) and the /market page's commune
// (src/web/market-page.ts), in this order.
export const NAME_CHARACTER_RULES: readonly { refused: (s: string) => boolean; message: string }[] = [
  {
    refused: (s) => INVISIBLE_IN_NAME.test(s),
    message: 'must not contain invisible characters (zero-width spaces, direction marks, soft hyphens, byte-order marks, variation selectors)',
  },
  { refused: (s) => hasControlCharacter(s) || LINE_SEPARATOR.test(s), message: 'must not contain control characters' },
  { refused: (s) => NOT_IN_A_NAME.test(s), message: 'must not contain symbols, emoji or private-use characters (letters, digits, spaces and punctuation only)' },
];

// Every control character of a text, for replace().
export const CONTROL_CHARACTERS = new RegExp(CONTROL_CHARACTER.source, 'g');

// Invisible characters that change how the text around them reads: the bidirectional
// overrides and isolates (U+202A-U+202E, U+2066-U+2069: "Flat\u202Egnp.exe" shows reversed),
// the zero-width space and the byte-order mark inside a text. (U+200C and U+200D stay: emoji
// and some scripts are written with them.)
export const INVISIBLE_FORMATTING = /[\u202a-\u202e\u2066-\u2069\u200b\ufeff]/g;

// What turns the direction of the text around it or hides between letters: the above, and the
// direction marks (U+200E, U+200F, U+061C).
export const DIRECTION_OR_INVISIBLE_CHARACTER = /[\u061c\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/;
const DIRECTION_OR_INVISIBLE = new RegExp(DIRECTION_OR_INVISIBLE_CHARACTER.source, 'g');
const asEscape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

// A text a page shows back to its visitor (a value of the address, in a message): each such
// character as its escape (\u202e). Shown as it came, U+202E made the page read as a message of
// the attacker's on our site, our own words reversed around it (an outside probe).
export function showDirectionCharacters(s: string): string {
  return s.replace(DIRECTION_OR_INVISIBLE, asEscape);
}

// A text for a terminal: each control character shown as its escape (\u001b) instead of
// acting on the terminal. For what a command prints that came from outside (feed values in
// reject reasons, parser messages).
export function escapeControlCharacters(s: string): string {
  return s.replace(CONTROL_CHARACTERS, asEscape);
}

// A "%" that begins no percent-encoding (not followed by two hexadecimal digits), in a query
// string or a path: said as such rather than as text that is not UTF-8.
export const BARE_PERCENT = /%(?![0-9a-f]{2})/i;

// At most `n` UTF-16 code units of `s` and `…` when it is longer, never cutting a character
// written as two (an emoji, a letter beyond the Basic Multilingual Plane) in half: a lone
// surrogate in an error's JSON is text no UTF-8 encoder takes (an outside probe of stop 57).
export function cutText(s: string, n: number): string {
  if (s.length <= n) return s;
  const last = s.charCodeAt(n - 1);
  return `${s.slice(0, last >= 0xd800 && last <= 0xdbff ? n - 1 : n)}…`;
}

// Characters as people count them (grapheme clusters: an emoji is one, a family emoji made of
// four joined is one, a letter with its accents is one), not code points or UTF-16 units.
const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
export function graphemes(s: string): number {
  let n = 0;
  for (const _ of segmenter.segment(s)) n++;
  return n;
}
