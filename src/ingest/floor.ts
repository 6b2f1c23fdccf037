// The floor a title says a flat is on ("Appartement 2 chambres, 1er étage", "3-Zimmer-Wohnung
// im 2. OG", "Two-bedroom flat, 3rd floor", "rez-de-chaussée", "Erdgeschoss", "ground floor"),
// for deduplication only (rule.ts: two records stating different floors are two flats, the
// twin flats of one building that agree on everything else; an outside probe of stop 56 lost
// 24 of its 25 pairs of twins to wrong merges). Feeds have no field for it; titles say it in
// French, German or English, and the three count floors alike (the floor above the ground
// floor is the first: "1er étage", "1. OG", "first floor").
//
// Only what names one floor for certain is read: a number or an ordinal word before the word
// for a floor, or "floor 3", and the ground floor's names. Not read: a count of floors ("sur 2
// étages", "2-stöckig", "on two floors"), the top floor ("dernier étage", "Dachgeschoss",
// "penthouse": which one?), a garden level or a raised ground floor (rez-de-jardin,
// Hochparterre, called the ground floor by some), a basement, a floor's area, plan or kind
// ("floor area 80", "floor plan", "parquet floor"), an energy class ("Energieklasse EG"), and any
// floor in the title of a house, a building, a shop or an office (a room's or a unit's). A title
// naming two floors ("EG + 1. OG", "1er étage, parking au rez-de-chaussée"), a flat on several (a
// duplex, "4e et 5e étage", "1. OG und DG"), a choice ("1er ou 2e étage") or a floor over 40 says
// no one floor: null. Two outside re-checks of stop 56 wrote 447 titles with the floor a careful
// reader sees: none read as another floor, 42 read as none (docs/feed-operators.md).
const MAX_FLOOR = 40;

const ORDINALS = new Map<string, number>([
  ['premier', 1], ['premiere', 1], ['deuxieme', 2], ['second', 2], ['seconde', 2], ['troisieme', 3], ['quatrieme', 4],
  ['cinquieme', 5], ['sixieme', 6], ['septieme', 7], ['huitieme', 8], ['neuvieme', 9], ['dixieme', 10],
  ['erste', 1], ['zweite', 2], ['dritte', 3], ['vierte', 4], ['funfte', 5], ['fuenfte', 5], ['sechste', 6],
  ['siebte', 7], ['achte', 8], ['neunte', 9], ['zehnte', 10],
  ['first', 1], ['third', 3], ['fourth', 4], ['fifth', 5], ['sixth', 6], ['seventh', 7], ['eighth', 8],
  ['ninth', 9], ['tenth', 10],
  ['eischte', 1], ['zweete', 2], ['drette', 3], ['veierte', 4], ['fenneft', 5],
]);
const ORDINAL_WORDS = [...ORDINALS.keys()].join('|');

// On text lowercased with its accents taken off (see unaccent).
const FLOOR_FORMS: { re: RegExp; value: (m: RegExpMatchArray) => number }[] = [
  // French: "1er étage", "1ère étage", "2e", "2ème", "2eme", "2ieme", "1ier", "2nd", "2°" étage;
  // "3e ét." (abbreviated, with its dot).
  { re: /(?<![\d,.a-z])(\d{1,2})\s*(?:er|ere|re|ier|nd|e|eme|ieme|°)\s*(?:etage\b|et\.)/g, value: (m) => Number(m[1]) },
  // German: "2. OG", "2.OG", "2 OG", "2. Obergeschoss", "2. Etage", "2te Etage", "2. Stock", "im 2ten
  // Stock", "2. Stockwerk"; Luxembourgish "2. Stack".
  { re: /(?<![\d,.a-z])(\d{1,2})\s*(?:\.|te|ten)\s*(?:og|obergeschoss|etage|stock|stockwerk|stack)\b|(?<![\d,.a-z])(\d{1,2})\s*og\b/g, value: (m) => Number(m[1] ?? m[2]) },
  // English: "3rd floor", "3rd-floor", "floor 3" (not "floor 3 m²"). "level" is not read:
  // a level is as often a split level or a standard.
  { re: /(?<![\d,.a-z])(\d{1,2})\s*(?:st|nd|rd|th)[\s-]*floor\b/g, value: (m) => Number(m[1]) },
  // "floor 3" alone, or before punctuation or "of" ("Floor 3 of 5", "floor 2, lift"); not a
  // count after it ("Top floor 2 bedroom flat", "Parquet floor 3 bedrooms": a stop 56 re-check),
  // nor a kind of floor before it ("heated floor 2 bathrooms").
  {
    re: /(?<!\b(?:top|whole|entire|parquet|heated|wooden|wood|tiled|laminate|marble|stone|concrete|vinyl|oak|open)[\s-]+)\bfloor\s+(\d{1,2})(?=\s*(?:$|[,;:.)\]\/|–-](?!\d)|of\b))/g,
    value: (m) => Number(m[1]),
  },
  // Ordinal words: "premier étage", "zweiten Stock", "im dritten OG", "second floor".
  { re: new RegExp(String.raw`\b(${ORDINAL_WORDS})[nrms]?\s+(?:etage|og|obergeschoss|stock|stockwerk|stack)\b`, 'g'), value: (m) => ORDINALS.get(m[1])! },
  { re: new RegExp(String.raw`\b(${ORDINAL_WORDS})[\s-]+floor\b`, 'g'), value: (m) => ORDINALS.get(m[1])! },
  // The ground floor ("EG" is read in capitals only, on the title as written: "eg" is also
  // English's "e.g."; "parterre" is not read: in French a flower bed).
  { re: /\brez[\s-]*de[\s-]*chaussee\b|\brdc\b|\berdgeschoss|\bground[\s-]*floor\b/g, value: () => 0 },
];

// Accents off ("étage", "fünfte" -> "etage", "funfte"), "ß" as "ss"; lowercased after.
const unaccent = (s: string) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, '').replace(/ß/g, 'ss');

// A flat on two or three floors: which one a record names (the entrance's, the lower) is each
// agency's choice. Also "4e et 5e étage", "1. und 2. OG", "1st & 2nd floor".
// Also "du 1er au 2e étage", "au 1er et au 2e étage", "vom 1. bis zum 2. OG".
const SPANS =
  /\b(?:duplex|triplex|souplex|maisonn?ette)\b|\d\s*(?:er|ere|re|e|eme|ieme|°|\.|st|nd|rd|th)\s*(?:et|und|and|&|-|\/|\+|,|a|au|bis|to)(?:\s+(?:au|a|le|la|the|zum|ins|im))?\s*\d{1,2}\s*(?:er|ere|re|e|eme|ieme|°|\.|st|nd|rd|th)?\s*(?:etage|og|obergeschoss|stock|floor)/;
// Two levels joined, or offered as a choice: a flat on both ("Wohnung im 1. OG und DG", "ground
// and first floor", "rez-de-chaussée et sous-sol", "EG mit Souterrain"), or one of two ("au 1er ou
// au 2e étage", "1. oder 2. OG", "2nd or 3rd floor"), which is no one floor either (a stop 56
// re-check: the last one was read).
const LEVEL = String.raw`(?:\d{1,2}\s*(?:er|ere|re|ier|e|eme|ieme|°|\.|st|nd|rd|th|te|ten)(?:\s*(?:etage|og|obergeschoss|stock|floor))?|(?:${ORDINAL_WORDS})[nrms]?(?:\s+(?:etage|og|obergeschoss|stock|floor))?|rez[\s-]*de[\s-]*chaussee|rdc|eg|erdgeschoss|ground(?:[\s-]*floor)?|sous[\s-]*sol|souterrain|basement|ug|untergeschoss|dg|dachgeschoss|attic|combles|etage)`;
const JOINED = new RegExp(String.raw`\b${LEVEL}\s*(?:et|und|and|&|\+|mit|with|ou|oder|or)\s*(?:(?:au|a|le|la|l'|the|zum|ins|im|dem|du)\s+)?${LEVEL}(?![a-z0-9])`);

// Levels some call the ground floor and others the first, or a floor below it: no floor said
// ("Hochparterre", "rez-de-chaussée surélevé", "raised", "upper" or "lower ground floor").
const NOT_ONE_LEVEL = /\bhochparterre\b|\brez[\s-]*de[\s-]*(?:chaussee[\s-]+sureleve|jardin)e?s?\b|\b(?:raised|upper|lower)[\s-]+ground[\s-]*floor\b|\bsouterrain\b/g;

// An energy class ("Energieklasse EG", "classe énergétique B", "CPE: EG"): not a floor.
const ENERGY_CLASS = /\b(?:energieklasse|energieeffizienzklasse|energiepass|energie|energy(?:\s+class)?|classe(?:\s+energetique)?|cpe|epc|passeport(?:\s+energetique)?)\s*:?\s*[a-i]{1,2}\b/gi;

// A home that is not one flat: the floor a title names is a room's or a unit's ("séjour au
// rez-de-chaussée", "3 chambres au 1er étage", "2nd floor terrace", "commerce au rdc"), not the
// home's (stop 56 re-checks: two agencies' titles of one house kept it apart). The first of the
// words for a home that the title names decides: "Haus mit Einliegerwohnung" is a house,
// "Wohnung im Mehrfamilienhaus" a flat, "Chambre dans maison" a room.
const HOME_WORD =
  /\b(?:(maison|villa|bungalow|fermette|ferme|chalet|house|hous|farmhouse|cottage|townhouse|[a-z]*haus(?:halfte)?|bauernhof|semi[\s-]*detached|detached|end[\s-]*of[\s-]*terrace|terraced|mansion|barn|pavillon|propriete|moulin|longere|home|immeuble|building|commerce|commercial|cafe|restaurant|bureaux?|office|shop|garage|cave|investment)|(appartements?|apartments?|[a-z]*wohnung|flat|studio|penthouse|loft|chambres?|zimmer|rooms?))\b/;

export function floorOf(title: string): number | null {
  const written = unaccent(title).replace(ENERGY_CLASS, ' ');
  const folded = written.toLowerCase();
  if (SPANS.test(folded) || JOINED.test(folded)) return null;
  if (HOME_WORD.exec(folded)?.[1] !== undefined) return null;
  const text = folded.replace(NOT_ONE_LEVEL, ' ');
  const found = new Set<number>();
  for (const form of FLOOR_FORMS) {
    for (const m of text.matchAll(form.re)) found.add(form.value(m));
  }
  if (/\bEG\b/.test(written)) found.add(0);
  if (found.size !== 1) return null;
  const [floor] = found;
  return floor <= MAX_FLOOR ? floor : null;
}
