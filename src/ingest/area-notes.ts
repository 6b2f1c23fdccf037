// The notes agencies write after an area (which area it is, what is added to it or said beside it):
// patterns only, read by parseArea (values.ts), which holds the figure's own reading.

// A figure in the notes, its spaces only between its digits ("1 200"): spaces beside it are the
// patterns' own, so that no run of spaces can be split two ways (a slow match on long texts).
const FIGURE = String.raw`\d(?:[\d.,'’]|[\s\u00a0\u202f]+(?=[\d.,'’]))*`;
const M2 = String.raw`(?:m\s?²|m2|qm)`;

// What is added to the area, not part of it: "85 m² + balcon", "85 m² (+ 8 m² terrasse)"; since stop 50
// the figure after the word too, and German and English words ("85 m² + balcon 6 m²", "85 m² (+ cave 8
// m²)", "85 m² + Balkon 6 m²") (an outside probe of stop 50). A figure without its unit is still no
// area's ("85 m2 + 2 balcons": refused).
const EXTRA_WORDS = String.raw`(?:balcons?|terrasses?|loggias?|jardin|cave|caves|garage|parking|grenier|balkone?|terrassen?|garten|keller|balcony|terrace|garden|cellar)`;
export const AREA_EXTRA = new RegExp(
  String.raw`\s*(?:\(\s*)?\+\s*(?:\d+(?:[.,]\d+)?\s*(?:m\s?²|m2)\s*)?(?:de\s+|d['’]\s*)?${EXTRA_WORDS}(?:\s*:?\s*\d+(?:[.,]\d+)?\s*(?:m\s?²|m2))?(?:\s*\))?\s*$`,
  'iu',
);
// What agencies write after an area to say which area it is ("85 m² hab.", "85 m2 habitables", "85 m²
// (habitable)", "85 m² utiles"): not another figure. Also gross or net ("85 m² brut", "85 m2 net") and
// the English "85 m² living" (an outside probe of stop 49); and "(surface habitable)", "(loi Carrez)"
// (the French legal measure of a flat's floor), "total", and a flat on two floors, "(duplex)" (an
// outside probe of stop 50).
export const AREA_KIND = new RegExp(
  String.raw`\s*(?:\(\s*)?(?<!\p{L})(?:hab\.?|habitables?|utiles?|wohnfl(?:ä|ae)che|wfl\.?|bruts?|brutes?|nets?|nettes?|brutto|netto|gross|living(?:\s+(?:area|space))?` +
    String.raw`|surface\s+(?:habitable|utile)|(?:loi\s+)?carrez|totale?|gesamt(?:fl(?:ä|ae)che)?|(?:en\s+)?(?:duplex|triplex))(?:\s*\))?\s*$`,
  'iu',
);

// Said after the area, none of it a figure of the home's: a footnote mark ("85 m²*"); the floors it
// spans ("sur 2 niveaux"); the plot it stands on ("sur terrain de 5 ares", "sur un terrain de 600 m²":
// in ares or hectares, or named as land); the rooms, after a separator ("– 3 ch."); what it includes,
// said so ("(balcon 6 m² inclus)", "(y compris terrasse)").
const FOOTNOTE = /\s*\*+\s*$/;
const LEVELS = /\s*(?:\(\s*)?(?:sur|on|(?:ü|ue)ber|auf)\s+(?:[2-9]|deux|trois|quatre|two|three|four|zwei|drei|vier)\s+(?:niveaux|[ée]tages|levels|floors|etagen|ebenen|stockwerke)(?:\s*\))?\s*$/iu;
const LAND = String.raw`(?:terrain|parcelle|grundst(?:ü|ue)ck|plot|land)`;
const ON_LAND = new RegExp(
  String.raw`\s*(?:\(\s*)?(?:sur|on|auf)\s+(?:(?:un|une|a|einem)\s+)?(?:${LAND}\s*(?:de\s+|of\s+|von\s+)?:?\s*${FIGURE}\s*(?:ares?|a|ha|${M2})|${FIGURE}\s*(?:ares?|ha)(?:\s+(?:de\s+)?${LAND})?)\.?(?:\s*\))?\s*$`,
  'iu',
);
const ROOMS = new RegExp(
  String.raw`\s*[-–,/|]\s*(?:\d{1,2}\s*(?:ch\.?|chambres?|chbres?\.?|pi[eè]ces?|pces?\.?|p\.?|zimmer|zi\.?|rooms?|bedrooms?|beds?|schlafzimmer)|[TF]\d{1,2})\s*$`,
  'iu',
);
const INCLUDED_EXTRA = new RegExp(
  String.raw`\s*(?:\(\s*)?(?:(?:y\s+compris|inklusive|including)\s+${EXTRA_WORDS}(?:\s+(?:de\s+)?${FIGURE}\s*${M2})?|${EXTRA_WORDS}(?:\s+(?:de\s+)?${FIGURE}\s*${M2})?\s+(?:inclus|incluse?s?|compris|comprise?s?|included|inklusive))(?:\s*\))?\s*$`,
  'iu',
);
// The unit said in the text ("85 m²"): the rooms after a separator are only taken off an area given so.
const HAS_UNIT = new RegExp(String.raw`\d\s*${M2}`, 'iu');

// An area text without those notes (from its end, any of them, in any order).
export function areaNotesOff(text: string): string {
  let rest = text;
  for (let i = 0; i < 6; i++) {
    const before = rest;
    for (const re of [FOOTNOTE, LEVELS, ON_LAND, INCLUDED_EXTRA]) rest = rest.replace(re, '');
    const rooms = ROOMS.exec(rest);
    if (rooms && HAS_UNIT.test(rest.slice(0, rooms.index))) rest = rest.slice(0, rooms.index);
    if (rest === before) break;
  }
  return rest;
}

// A gross or total area in brackets after the home's ("85 m² (92 m² brut)"): the first is the home's,
// if the bracketed one is larger (a gross area is); else which is which is not said.
const GROSS_AFTER = new RegExp(String.raw`\s*\(\s*(${FIGURE})\s*${M2}\s*(?:bruts?|brutes?|brutto|gross|totale?|gesamt)\s*\)\s*$`, 'iu');
export function grossAfter(text: string): { rest: string; gross: string } | null {
  const m = GROSS_AFTER.exec(text);
  return m ? { rest: text.slice(0, m.index), gross: m[1] } : null;
}
