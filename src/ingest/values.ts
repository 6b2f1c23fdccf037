import { AREA_EXTRA, AREA_KIND, areaNotesOff, grossAfter } from './area-notes.js';
import { PERIOD_FIRST, PRICE_PERIOD, WEEKLY, YEARLY } from './periods.js';
import { spaceRunsSqueezed } from './space-runs.js';
import { BRACKETED, CHARGES_IN, CHARGES_OUT, ENDS_IN_DATE, NOTE_FIGURE, ON_REQUEST, OPTION_FIGURE, OPTION_NOTE, PRICE_NOTE } from './price-notes.js';
import type { Parsed } from './parsed.js';

export type { Parsed } from './parsed.js';

export const ok = <T>(value: T | null): Parsed<T> => ({ ok: true, value });
export const bad = <T>(reason: string): Parsed<T> => ({ ok: false, reason });

// Said for "not stated" ("-", "n/a", "nc": non communiqué, "k.A.": keine Angabe): an empty field.
const UNSTATED_WORDS = new Set(['-', '–', '—', 'n/a', 'na', 'n.a.', '?', 'nc', 'n.c.', 'k.a.', 'ka']);
export const isBlank = (v: unknown) => v === null || v === undefined || (typeof v === 'string' && (v.trim() === '' || UNSTATED_WORDS.has(v.trim().toLowerCase())));

// A price, area, count, coordinate or date text longer than this is none of them; the cap
// also bounds the regular expressions' work (a long run of spaces made them take seconds).
export const MAX_VALUE_TEXT = 100;

export function show(v: unknown): string {
  // (JSON writes Infinity and NaN, which a JSON feed's 1e999 becomes, as null.)
  const s = typeof v === 'number' && !Number.isFinite(v) ? String(v) : (JSON.stringify(v) ?? String(v));
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

// Every space agencies put in numbers: plain, no-break, narrow no-break, thin; and the Swiss
// apostrophe thousands mark.
const NUMBER_SPACES = /[\s\u00a0\u202f\u2009'’]/g;

// Reads "1850", "1 850", "1.850", "1850,00", "1.250.000", "85,5", "85.5", "1,250,000.50".
// thousandsHint: a single separator followed by exactly three digits is a thousands mark
// (prices: "1.850" is 1850 EUR); without it, it is a decimal mark (areas: "85,5").
// Figures parted by spaces are thousands groups ("1 250 000", "1 850,50", "1'250'000.50"): three
// digits in every group after the first, decimals only in the last, no mark beside a space. Else
// the text holds two figures ("1850, 2 mois", "1.850 200", "12 5"), which were read as one (1850.2,
// 1.8502, 125).
// A decimal part written with a space before its mark is one figure's ("1 850 ,00", "85 ,5", "1 850 ,
// 00"), and so are thousands written "1850 000" (the last groups 000): the regression probe of this
// change found them refused, read until then.
const SPACED = /[\s\u00a0\u202f\u2009'’]/;
const SPACED_GROUPS = /^[+-]?\d{1,3}(?:[\s\u00a0\u202f\u2009'’]+\d{3})+(?:[.,]\d+)?$|^[+-]?\d+(?:[\s\u00a0\u202f\u2009'’]+000)+(?:[.,]\d+)?$/;
// A price's cents are two digits ("1 850 ,00", "1 850 , 00" only for none): "1850 ,2 mois", "1850 , 20"
// stay two figures (its re-check); an area's or a count's decimal may be one ("85 ,5").
const SPACED_DECIMALS = /[\s\u00a0\u202f\u2009]+([.,])(?:(\d{1,2})|[\s\u00a0\u202f\u2009](\d{2}))$/;
const SPACED_CENTS = /[\s\u00a0\u202f\u2009]+([.,])(?:(\d{2})|[\s\u00a0\u202f\u2009](00))$/;
export function parseDecimal(text: string, thousandsHint: boolean): number | null {
  const trimmed = text.trim().replace(thousandsHint ? SPACED_CENTS : SPACED_DECIMALS, (_m, mark: string, glued?: string, parted?: string) => mark + (glued ?? parted));
  if (SPACED.test(trimmed) && !SPACED_GROUPS.test(trimmed)) return null;
  let s = trimmed.replace(NUMBER_SPACES, '');
  if (!/^[+-]?[\d.,]+$/.test(s) || !/\d/.test(s)) return null;
  const lastDot = s.lastIndexOf('.');
  const lastComma = s.lastIndexOf(',');
  if (lastDot >= 0 && lastComma >= 0) {
    // Both marks: the last one is the decimal mark.
    const dec = lastDot > lastComma ? '.' : ',';
    const thou = dec === '.' ? ',' : '.';
    s = s.split(thou).join('').replace(dec, '.');
  } else if (lastDot >= 0 || lastComma >= 0) {
    const sep = lastDot >= 0 ? '.' : ',';
    const parts = s.split(sep);
    if (parts.length > 2) {
      if (!parts.slice(1).every((p) => p.length === 3)) return null;
      s = parts.join('');
    } else if (thousandsHint && parts[1].length === 3 && parts[0].replace(/^[+-]/, '').length > 0) {
      s = parts.join('');
    } else {
      s = parts.join('.');
    }
  }
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

// A currency written against the figure ("EUR1850", "1850EUR") is still a currency: only a
// letter beside the code makes it part of a word.
// "€uros" is euros too: "2 100 €uros" (an outside probe of stop 48).
const CURRENCY_WORDS: [RegExp, string][] = [
  [/€(?:uros?(?!\p{L}))?|(?<!\p{L})(?:EUR|euros?)(?!\p{L})/iu, 'EUR'],
  [/(?<!\p{L})(?:CHF|SFr)(?!\p{L})|(?<!\p{L})Fr\./iu, 'CHF'],
  [/\$|(?<!\p{L})USD(?!\p{L})/iu, 'USD'],
  [/£|(?<!\p{L})GBP(?!\p{L})/iu, 'GBP'],
  [/¥|(?<!\p{L})JPY(?!\p{L})/iu, 'JPY'],
  [/(?<!\p{L})(?:PLN|zł)(?!\p{L})/iu, 'PLN'],
  [/(?<!\p{L})(?:SEK|DKK|NOK|CZK|HUF|CAD|AUD)(?!\p{L})/iu, '?'],
];

// The currency a text names, and the text without it; between: whether figures stand on both
// sides of it ("1850 € 200"), which the text without it would join into one.
function takeCurrency(text: string): { currency: string | null; rest: string; between: boolean } {
  for (const [re, code] of CURRENCY_WORDS) {
    const m = re.exec(text);
    if (m) {
      const between = /\d/.test(text.slice(0, m.index)) && /\d/.test(text.slice(m.index + m[0].length));
      return { currency: code === '?' ? m[0].toUpperCase() : code, rest: text.replace(re, ' '), between };
    }
  }
  return { currency: null, rest: text, between: false };
}

export interface PriceValue {
  amount: number;
  currency: string | null;
  // A period written after the price ("1850 €/mois", "450 EUR per week"), else null.
  period: 'month' | 'week' | null;
  // What a note or label says of the charges: included ("CC", "charges comprises",
  // "Warmmiete:", "dont 200 € de charges"), not included ("HC", "hors charges", "+ 200 €
  // charges", "Kaltmiete:"), or nothing (null; also when notes say both).
  chargesIncluded: boolean | null;
  // The monthly charges a note adds to a rent that does not include them ("+ 200 € charges",
  // "+ charges 200 €", "(charges: 200 €)"), else null.
  charges: number | null;
}

// "about" before a figure: "ca. 1850", "env. 85 m²", "~ 85", "± 85", "+/- 85", "+- 85"; and
// after an area: "85 m² env.", "85 m² environ", "85 qm ca.". Also "c. 85 m²" and, in brackets,
// "85 m² (approx.)" (an outside probe of stop 49).
const APPROX = /^\s*(?:circa|ca\.?|c\.|environ|env\.?|approx\.?|~|±|\+\s*\/?\s*-)\s*/i;
const APPROX_AFTER = /\s*(?:\(\s*)?(?<!\p{L})(?:ca\.?|circa|env\.?|environ|approx\.?|approximately)(?:\s*\))?\s*$/iu;

// "from" before an asking price ("à partir de 495.000 €", "ab 495.000 €"): the figure asked.
const FROM = /^\s*(?:[àa]\s+partir\s+de|dès|ab|from|starting\s+(?:at|from))\s+/i;
// A label before the figure: "Loyer : 1850 €", "Prix: 695.000 €", "Kaltmiete: 1.850 €"; and
// "Asking price €850,000", the label before the euro sign (an outside probe of stop 49).
const LABEL = /^\s*(?:loyer(?:\s+mensuel)?|prix(?:\s+de\s+vente)?|price|asking\s+price|rent|miete|kaltmiete|warmmiete|mietpreis|kaufpreis)\s*(?::\s*|(?=\d|€))/i;

// The notes written after a price, and which of them say the charges are in it: price-notes.ts.
function chargesSaid(texts: readonly string[]): boolean | null {
  const inc = texts.some((t) => CHARGES_IN.test(t));
  const out = texts.some((t) => CHARGES_OUT.test(t));
  return inc === out ? null : inc;
}

// The figure of the one note that states charges outside the rent, in the price's currency (a
// note's own currency, if it names one, must be the same); null when none or several do.
function chargesStated(notes: readonly string[], currency: string | null): number | null {
  const stating = notes.filter((n) => CHARGES_OUT.test(n) && /\d/.test(n));
  if (stating.length !== 1) return null;
  const noted = takeCurrency(stating[0]).currency;
  if (noted !== null && currency !== null && noted !== currency) return null;
  const n = noteFigure(stating[0]);
  return n !== null && n > 0 ? n : null;
}

// The figure a note states ("+ 200 € charges": 200), or null.
function noteFigure(note: string): number | null {
  const figure = NOTE_FIGURE.exec(note);
  return figure ? parseDecimal(figure[0].trim(), true) : null;
}

// "1,25 Mio €", "1,25 million €", "1,5 Millionen", "1.25M€": the figure is in millions, with a
// decimal mark. A bare M only against the figure or the currency ("1.25M", "1,25 M€").
const MILLIONS = /(?:\s*(?:mio\.?|millions?|millionen)|(?<=\d)m)\s*$/i;
const MILLIONS_CURRENCY = /(?<=\d)\s*m(€|eur)(?!\p{L})/iu;
// "750 K€", "1,5k": in thousands, with a decimal mark.
const THOUSANDS = /(?<=\d)\s*k\s*$/i;
// "1,5 kEUR", "750 TEUR", "750 T€" (German Tausend): thousands glued to the currency, parted
// so that the currency is read as one ("1,5 k EUR").
const THOUSANDS_CURRENCY = /(?<=\d)\s*[kt](€|eur)(?!\p{L})/iu;

// notePeriods: the periods written right after a note's figure ("+ charges 150 €/semaine"): the
// note's, not the price's (its re-check of stop 49 found "1450 € + charges 1600 €/semaine" read as
// a weekly rent of 1450).
interface PriceParts { head: string; notes: string[]; periods: string[]; notePeriods: string[] }
const NOTE_ENDS_IN_FIGURE = /\d(?:[\d.,'’]|[\s\u00a0\u202f]+(?=[\d.,'’]))*(?:[.,]\s*-{1,2})?\s*(?:(?:€|eur|euros?)\s*)?$/iu;

// Splits off, from the end, the notes and periods written after the figure, in any order
// ("1 850 €/mois CC", "1850 € HC par mois"). What is left is the price itself.
function splitPriceNotes(text: string): PriceParts | null {
  let head = text;
  const notes: string[] = [];
  const periods: string[] = [];
  const notePeriods: string[] = [];
  let lastWasPeriod = false;
  for (;;) {
    // A note that ends in a period word ("caution 2 mois") is the note, not a period: the one
    // that begins first is taken (a regression probe of stop 47 found it refused).
    const period = PRICE_PERIOD.exec(head);
    const note = PRICE_NOTE.exec(head);
    const p = period && !(note && note.index < period.index) ? period : null;
    const n = p ? null : note;
    const b = p || n ? null : BRACKETED.exec(head);
    const m = p ?? n ?? b;
    if (!m) return { head, notes, periods, notePeriods };
    if (p) periods.push(p[1].toLowerCase());
    else if (n) {
      notes.push(n[0]);
      // Only a period right after the note's figure and currency ("+ charges 150 €/semaine"), not
      // after its words ("caution 2 mois par semaine", "+ 150 € charges par semaine": the rent's, as
      // before; its re-check found weekly rents read monthly).
      // (Not after a date: "libre au 01/12/2026 par semaine" is a weekly rent.)
      if (lastWasPeriod && NOTE_ENDS_IN_FIGURE.test(n[0]) && !ENDS_IN_DATE.test(n[0])) notePeriods.push(periods.pop()!);
    } else {
      // A bracket must hold only notes (or a period), else it may say anything ("(ou 1900)").
      const inner = splitPriceNotes(b![1]);
      if (!inner || inner.head.trim() !== '') return null;
      notes.push(...inner.notes);
      periods.push(...inner.periods);
      notePeriods.push(...inner.notePeriods);
    }
    lastWasPeriod = p !== null;
    head = head.slice(0, m.index);
  }
}

// A price holding two figures apart (`1850 + 200`, `1850 (ou 1900)`) says so (stop 51: "not a number").
const TWO_FIGURES = /\d\s*(?:\+|ou|or|oder|\(\s*(?:ou|or|oder))\s*\d/i;
const twoFigures = (v: string) => bad<PriceValue>(`price ${show(v)} holds two figures: which one is the price?`);
const notANumber = (v: string) => (TWO_FIGURES.test(v) ? twoFigures(v) : bad<PriceValue>(`price ${show(v)} is not a number`));

// Prices as agencies type them: "1 250 €", "€ 2 100", "1.250.000 €", "1.690,00", "4 900 CHF",
// with a note after the figure ("1850 € HC", "1.850 € + 200 € charges", "695.000 € TTC").
export const parsePrice = spaceRunsSqueezed(readPrice, show, MAX_VALUE_TEXT);
function readPrice(v: unknown): Parsed<PriceValue> {
  if (isBlank(v)) return ok(null);
  if (typeof v === 'number') return Number.isFinite(v) ? ok({ amount: v, currency: null, period: null, chargesIncluded: null, charges: null }) : bad(`price ${show(v)} is not a number`);
  if (typeof v !== 'string' || v.length > MAX_VALUE_TEXT) return bad(`price ${show(v)} is not a number`);
  if (ON_REQUEST.test(v)) return bad(`price ${show(v)} is not given (on request)`);
  const label = LABEL.exec(v)?.[0] ?? '';
  const first = PERIOD_FIRST.exec(v.slice(label.length));
  const parts = splitPriceNotes(v.slice(label.length + (first?.[0].length ?? 0)).replace(FROM, '').replace(APPROX, '').replace(THOUSANDS_CURRENCY, ' k $1').replace(MILLIONS_CURRENCY, ' mio $1'));
  if (!parts) return notANumber(v);
  if (first) parts.periods.push(first[1].toLowerCase());
  // (A year after a note's figure too: "+ NK 150 €/an" is refused as before.)
  const yearly = [...parts.periods, ...parts.notePeriods].some((p) => YEARLY.test(p));
  const kinds = new Set(parts.periods.filter((p) => !YEARLY.test(p)).map((p) => (WEEKLY.has(p) ? 'week' : 'month')));
  if (kinds.size > 1) return bad(`price ${show(v)} says both a week and a month`);
  const period: PriceValue['period'] = kinds.has('week') ? 'week' : kinds.has('month') ? 'month' : null;
  const own = takeCurrency(parts.head);
  // The price's own currency decides; a note's ("+ 200 € charges") only when the price has
  // none. Two different ones contradict each other.
  const noted = parts.notes.map((n) => takeCurrency(n).currency).find((c) => c !== null) ?? null;
  if (own.currency && noted && own.currency !== noted) return bad(`price ${show(v)} mixes currencies ${own.currency} and ${noted}`);
  const currency = own.currency ?? noted;
  // "1 250,- €", "1.250,-- €" and "1250.-": the dash says "no cents".
  let rest = own.rest.replace(/[.,]\s*[-–]{1,2}\s*$/, '').trim();
  const millions = MILLIONS.exec(rest);
  const thousands = millions ? null : THOUSANDS.exec(rest);
  const scaled = millions ?? thousands;
  if (scaled) rest = rest.slice(0, scaled.index);
  // "1.250 K€", "1,250k": a mark before three digits is a thousands mark or a decimal one, 1,250
  // thousand or 1.25 thousand: not guessed (an outside probe: read as 1,250 EUR, a sale published).
  const marked = thousands ? /^(\d{1,3})[.,](\d{3})$/.exec(rest.trim()) : null;
  if (marked) {
    // Both readings in euros, from the figure's own digits: "1.250 K€" is 1250000 € or 1250 €
    // (the regression probes of stop 44: "1,850 kEUR" was told "1250"; "1.005 k€" was told
    // "1,005 K€", which is refused again).
    const digits = Number(marked[1] + marked[2]);
    return bad(`price ${show(v)} is ambiguous: write ${digits * 1000} € or ${digits} €`);
  }
  const n = parseDecimal(rest, !scaled);
  // "1850 € 200", "1850 €, 2 mois": two figures, not 1,850,200 or 1850.2 (both were read so).
  const secondAfterCurrency = bad<PriceValue>(`price ${show(v)} has a second figure after its currency: which one is the price?`);
  if (n === null) {
    if (own.between) return parseDecimal(rest.replace(NUMBER_SPACES, ''), !scaled) === null ? bad(`price ${show(v)} is not a number`) : secondAfterCurrency;
    // "€ 1850, 2 mois", "1.850 200": the same with the currency before both (notes of stop 48).
    if (/^[\d.,\s'’]+$/.test(rest) && /\d\s*[.,]?\s+[.,]?\s*\d/.test(rest)) return twoFigures(v);
    return notANumber(v);
  }
  if (own.between) return secondAfterCurrency;
  // Refused, as a CSV column `Prix (€/an)` is, but saying why: the figure itself was read.
  if (yearly) return bad(`price ${show(v)} is a yearly figure: a rent is read per month or per week`);
  const amount = millions ? Math.round(n * 100_000_000) / 100 : thousands ? Math.round(n * 100_000) / 100 : n;
  const chargesIncluded = chargesSaid([label, ...parts.notes]);
  // Charges stated as much as the price or more ("1450 € dont charges 1600 €", "150 € dont charges 1
  // 450 €", "1450 € + NK 1 600 €"): which figure is the rent? Refused, as they were until stop 49's
  // forms were read (its regression probe).
  // (Not beside a weekly rent, whose charges are not kept: its re-check found "350 €/semaine + charges
  // 400 €/mois" refused.)
  for (const note of period === 'week' ? [] : parts.notes) {
    if (!(CHARGES_IN.test(note) || CHARGES_OUT.test(note))) continue;
    const stated = noteFigure(note);
    if (stated !== null && stated >= amount) return bad(`price ${show(v)} states charges of ${stated}, as much as the price or more: which figure is the rent?`);
  }
  // A parking place or garage offered at as much as the price or more ("1850 € + 2000 € parking"): which
  // figure is the rent? Refused (stop 50).
  // (An option's figure not read, "+ garage 1 50 €", is no smaller one: refused as not a number.)
  for (const note of parts.notes.filter((n) => OPTION_NOTE.test(n))) {
    const option = parseDecimal(OPTION_FIGURE.exec(note)![0], true);
    if (option === null) return bad(`price ${show(v)} is not a number`);
    if (option >= amount) return bad(`price ${show(v)} offers an option at ${option}, as much as the price or more: which figure is the price?`);
  }
  // Charges beside a weekly rent: a week's or a month's? Not kept; nor charges said to be weekly.
  const weeklyNote = parts.notePeriods.some((p) => WEEKLY.has(p));
  const charges = chargesIncluded === false && period !== 'week' && !weeklyNote ? chargesStated(parts.notes, currency) : null;
  return ok({ amount, currency, period, chargesIncluded, charges });
}

// What is added to an area, which area it is, and the notes after it: area-notes.ts.
// What a figure includes, in brackets: an area's "85 m² (dont 10 m² mezzanine)", "(davon 10 m²
// Galerie)", a count's "3 (dont 1 bureau)", "4 (davon 1 Büro)"; or not, then a figure and what it
// counts: "4 pièces dont 3 chambres", "4 Zimmer, davon 3 Schlafzimmer" (an outside probe of stop 48).
export const INCLUDES = /\s*(?:\(\s*(?:dont|davon|incl\.?|inkl\.?|including)\s[^()]*\)|,?\s+(?:dont|davon|including)\s+(?:\d{1,3}(?:[.,]\d{1,2})?|une?|deux|trois|quatre|eine?|zwei|drei|vier|one|two|three|four)\s*(?:m\s?²|m2)?\s*\p{L}[\p{L}\s.'’-]*)\s*$/iu;
// A label before an area: "Wohnfläche: 185 m²", "Wohnfläche ca. 185 m²", "surface habitable 85 m²",
// "Surface: 85 m²" (an outside probe of stop 48); "hab. 85 m²" (stop 50).
const AREA_LABEL = /^\s*(?:hab\.|wohnfl(?:ä|ae)che|wfl\.|surface(?:\s+(?:habitable|utile))?|superficie(?:\s+habitable)?|living\s+area|fl(?:ä|ae)che)\s*:?\s*(?=\d|ca\.?\s|c\.\s|circa\s|env(?:\.|iron\s)|approx|~|±|\+)/i;
// The unit: "m²", "m ²", "m2", "m^2", "mq" (Italian), "sqm", "sq.m.", "qm", "m", "m.", and written
// out ("mètres carrés", "Quadratmeter", "square metres"); "sq m" and "m 2" too (an outside probe of
// stop 49). Square feet ("sq ft") are not here: refused, saying so (SQUARE_FEET).
const AREA_UNIT = /\s*(?<!\p{L})(?:m\s?[²2]|m\^2|mq|sqm|sq\.?\s?m\.?|qm|m\.?|m[èe]tres?\s+carr[ée]s?|quadratmeter|square\s+met(?:re|er)s?)\s*$/iu;
// One separator and exactly three digits after it, the first digit not 0: "1.050", "2,400".
const ONE_THOUSANDS_GROUP = /^[1-9][.,]\d{3}$/;
// Under this not even a room is plausible: "1.050" is then 1,050 m², not 1.05 m² (while
// "9.500" stays a room of 9.5 m²).
const MIN_PLAUSIBLE_M2 = 5;

// An area text without its label, "about", what it includes or adds, its kind and its unit.
const areaText = (text: string) =>
  areaNotesOff(text).replace(AREA_LABEL, '').replace(APPROX, '').replace(APPROX_AFTER, '').replace(INCLUDES, '').replace(AREA_EXTRA, '').replace(AREA_KIND, '').replace(AREA_UNIT, '').trim();
// The figure of an area text, the separator read as a decimal mark ("85,5") unless that
// gives an implausible dwelling and the thousands reading does not ("1.050" is 1,050 m²).
function areaFigure(text: string): number | null {
  if (text.length > MAX_VALUE_TEXT) return null;
  const gross = grossAfter(text);
  if (gross) {
    const [home, all] = [areaFigure(gross.rest), areaFigure(`${gross.gross} m²`)];
    return home !== null && all !== null && all > home ? home : null;
  }
  const s = areaText(text);
  const n = parseDecimal(s, false);
  if (n !== null && n < MIN_PLAUSIBLE_M2 && ONE_THOUSANDS_GROUP.test(s.replace(NUMBER_SPACES, ''))) return parseDecimal(s, true);
  return n;
}

// Two areas, each with its unit and kind ("85 m² habitables / 100 m² utiles"): the living one
// is the listing's. Without one said to be the living area, neither is taken.
const AREA_PAIR = /^([^/;|]+?)\s*(?:[/;|]|,\s|\s[-–]\s)\s*([^/;|]+)$/;
const AREA_HAS_UNIT = /\d\s*(?:m\s?²|m2|qm|sqm)(?!\p{L})/iu;
const LIVING_AREA = /(?<!\p{L})(?:hab\.?|habitables?|wohnfl(?:ä|ae)che|wfl\.?|living(?:\s+(?:area|space))?)(?:\s*\))?\s*$|^\s*(?:hab\.|wohnfl(?:ä|ae)che|wfl\.|surface\s+habitable|living\s+area)(?!\p{L})/iu;
// A plot's area after the home's: "185 m² / terrain 6 ares", "185 m², Grundstück 600 m²", "185 m²
// / 12 a", "185 m² - 1,2 ha". In ares or hectares, or in m² named as land, it is the land's, and
// the other figure the home's (an outside probe of stop 48), also when the land comes first.
const LAND = String.raw`(?:terrain|parcelle|grundst(?:ü|ue)ck(?:sfl(?:ä|ae)che)?|plot|land)`;
const LAND_FIGURE = String.raw`(?:ca\.?|env\.?|environ|~|±)?\s*\d[\d.,'’\s]*?\s*`;
const LAND_AREA = new RegExp(
  String.raw`^\s*(?:${LAND}\s*(?:de\s+)?:?\s*)?${LAND_FIGURE}(?:ares?|a|ha)\.?(?:\s+(?:de\s+)?${LAND})?\s*$` +
    String.raw`|^\s*${LAND}\s*(?:de\s+)?:?\s*${LAND_FIGURE}(?:m\s?²|m2|qm)\s*$|^\s*${LAND_FIGURE}(?:m\s?²|m2|qm)\s+(?:de\s+)?${LAND}\s*$`,
  'iu',
);
function twoAreas(text: string, given: unknown): Parsed<number> | null {
  const m = text.length <= MAX_VALUE_TEXT ? AREA_PAIR.exec(text) : null;
  // The land first ("terrain 6 ares / 185 m²"): the home's is the other.
  if (m && LAND_AREA.test(m[1]) && AREA_HAS_UNIT.test(m[2]) && !LAND_AREA.test(m[2])) {
    const home = areaFigure(m[2]);
    return home === null ? null : ok(home);
  }
  if (!m || !AREA_HAS_UNIT.test(m[1])) return null;
  if (LAND_AREA.test(m[2])) {
    const home = LAND_AREA.test(m[1]) ? null : areaFigure(m[1]);
    return home === null ? null : ok(home);
  }
  if (!AREA_HAS_UNIT.test(m[2])) return null;
  const figures = [m[1], m[2]].map((t) => areaFigure(t));
  if (figures.some((f) => f === null)) return null;
  const living = [m[1], m[2]].flatMap((t, i) => (LIVING_AREA.test(t) ? [figures[i]!] : []));
  if (living.length === 1) return ok(living[0]);
  return bad(`area ${show(given)} gives two areas (${figures.join(' and ')} m2) and does not say which one is the living area`);
}

// An area in square feet ("85 sq ft", "900 sqft", "85 ft²"), and a range ("85-90 m²", "85 à 90 m²"):
// refused, saying so, not as "not a number" (an outside probe of stop 49).
const SQUARE_FEET = /^[^\p{L}]*(?:sq\.?\s?(?:ft|feet)\.?|sqft|square\s+f(?:ee|oo)t|ft\s?[²2])\s*$/iu;
const AREA_RANGE = /^\d(?:[\d.,]*\d)?\s*(?:-|–|à|bis|to)\s*\d[\d.,]*$/i;

// "85", "85,5", "85.5", "85,5 m²", "85 m2", "85 qm", "+/- 85 m² hab.", "1.050 m²"; and "85 mÂ²", UTF-8
// read as Latin-1, its "²" written "Â²" (an outside probe of stop 48).
export const parseArea = spaceRunsSqueezed(readArea, show, MAX_VALUE_TEXT);
function readArea(v: unknown): Parsed<number> {
  if (isBlank(v)) return ok(null);
  const text = typeof v === 'string' ? v.replace(/Â(?=²)/g, '') : null;
  const pair = text !== null ? twoAreas(text, v) : null;
  if (pair && !pair.ok) return pair;
  const n = pair ? pair.value : typeof v === 'number' ? v : text !== null ? areaFigure(text) : null;
  if (n === null && text !== null && text.length <= MAX_VALUE_TEXT) {
    if (SQUARE_FEET.test(text.replace(APPROX, '')) && /\d/.test(text)) return bad(`area ${show(v)} is in square feet, which are not read: give it in m²`);
    if (/\d\s*(?:-|–|à|bis|to)\s*\d/i.test(text) && AREA_RANGE.test(areaText(text))) return bad(`area ${show(v)} is a range, not one area`);
  }
  if (n === null || !Number.isFinite(n)) return bad(`area ${show(v)} is not a number`);
  if (n < 0) return bad(`area ${show(v)} is negative`);
  const area = Math.round(n * 100) / 100; // to the hundredth: 0.001 is no more a surface than 0
  if (area === 0) return ok(null);
  // Over 100,000 m2, or not even a room (1.05 m2, "3"): a slip, not a figure to publish.
  if (area > 100_000 || area < MIN_PLAUSIBLE_M2) return bad(`area ${show(v)} is not plausible for a dwelling (read as ${Number.isFinite(area) ? area : n} m2)`);
  return ok(area);
}

const TRUE_WORDS = new Set(['1', 'true', 'yes', 'oui', 'ja', 'y', 'o', 'j', 'x', 'vrai', 'wahr']);
const FALSE_WORDS = new Set(['0', 'false', 'no', 'non', 'nein', 'n', 'faux', 'falsch', '']);

export function parseBool(v: unknown, what: string): Parsed<boolean> {
  if (v === null || v === undefined) return ok(null);
  if (typeof v === 'boolean') return ok(v);
  if (typeof v === 'number') return v === 1 ? ok(true) : v === 0 ? ok(false) : bad(`${what} ${show(v)} is neither yes nor no`);
  if (typeof v === 'string') {
    const k = v.trim().toLowerCase();
    if (TRUE_WORDS.has(k)) return ok(true);
    if (FALSE_WORDS.has(k) || UNSTATED_WORDS.has(k)) return ok(false);
  }
  return bad(`${what} ${show(v)} is neither yes nor no`);
}
