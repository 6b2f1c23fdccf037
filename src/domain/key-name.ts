import { DIRECTION_OR_INVISIBLE_CHARACTER, graphemes, hasControlCharacter } from '../lib/text.js';

// An API key's name as it is stored, whoever gives it (the key page, `npm run keys`): white
// space collapsed, 1 to 60 characters of at most 480 code points in all, no control character
// (src/lib/text.ts: invisible, and in a terminal, escape sequences that forge what `keys list`
// shows).
export const KEY_NAME_MAX_CHARS = 60;
// Eight code points a character on average: 60 family emoji (7 each), flags of Scotland (7) or
// Devanagari conjuncts (स्त्री, 6) fit. Counted in characters alone, one letter with 1,200
// accents stacked on it (2.4 KB) was one character, and the command line took an 80 KB name (an
// outside probe of stop 47; its regression probes found a bound of 240 bytes refused 56
// characters of Devanagari, and one of 240 code points 60 of those conjuncts).
export const KEY_NAME_MAX_CODE_POINTS = 480;

export type KeyName = { ok: true; name: string } | { ok: false; problem: 'empty' | 'too_long' | 'too_many_code_points' | 'control_character' };

// What shows nothing on its own: white space, the characters Unicode says to ignore when not
// supported (joiners, variation selectors, tags, invisible operators...), format characters,
// marks without a letter to sit on, the Hangul fillers and the blank Braille pattern. A name of
// these alone is blank in the keys table (outside probes named keys U+200B, U+0301, U+2061).
const SHOWS_NOTHING = /[\s\p{Default_Ignorable_Code_Point}\p{Cf}\p{M}\u2800\u3164\uffa0\u115f\u1160]/gu;

export function parseKeyName(raw: string): KeyName {
  // Nor a character that turns the direction of the text around it (U+202A-202E, U+2066-2069,
  // U+200E-200F, U+061C): shown raw in the keys table and `keys list`, it makes one key's name
  // read as another's (an outside probe); nor a zero-width space or a byte-order mark.
  if (hasControlCharacter(raw) || DIRECTION_OR_INVISIBLE_CHARACTER.test(raw)) return { ok: false, problem: 'control_character' };
  // Composed (NFC): an "é" typed as e + U+0301 is the "é" of another keyboard.
  const name = raw.normalize('NFC').trim().replace(/\s+/g, ' ');
  if (!name.replace(SHOWS_NOTHING, '')) return { ok: false, problem: 'empty' };
  // Characters as people count them (grapheme clusters: an emoji is one, a family emoji made
  // of four joined is one, a letter with its accents is one), not code points or UTF-16 units.
  if (graphemes(name) > KEY_NAME_MAX_CHARS) return { ok: false, problem: 'too_long' };
  // Of the name as stored (composed, white space collapsed).
  if ([...name].length > KEY_NAME_MAX_CODE_POINTS) return { ok: false, problem: 'too_many_code_points' };
  return { ok: true, name };
}

