import { DateTime } from 'luxon';
import { hasControlCharacter } from '../lib/text.js';

export const LU_ZONE = 'Europe/Luxembourg';

// A value that may be given but be wrong: `null` when absent, an Error-like reason when
// present but unreadable (the record is then rejected, never half-filled).
export type Parsed<T> = { ok: true; value: T | null } | { ok: false; reason: string };

const ok = <T>(value: T | null): Parsed<T> => ({ ok: true, value });
const bad = <T>(reason: string): Parsed<T> => ({ ok: false, reason });

// Said for "not stated" ("-", "n/a", "nc": non communiqué, "k.A.": keine Angabe): an empty field.
const UNSTATED_WORDS = new Set(['-', '–', '—', 'n/a', 'na', 'n.a.', '?', 'nc', 'n.c.', 'k.a.', 'ka']);
const isBlank = (v: unknown) => v === null || v === undefined || (typeof v === 'string' && (v.trim() === '' || UNSTATED_WORDS.has(v.trim().toLowerCase())));

export function show(v: unknown): string {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

// Every space agencies put in numbers: plain, no-break, narrow no-break, thin; and the Swiss
// apostrophe thousands mark.
const NUMBER_SPACES = /[\s\u00a0\u202f\u2009'’]/g;

// Reads "1850", "1 850", "1.850", "1850,00", "1.250.000", "85,5", "85.5", "1,250,000.50".
// thousandsHint: a single separator followed by exactly three digits is a thousands mark
// (prices: "1.850" is 1850 EUR); without it, it is a decimal mark (areas: "85,5").
export function parseDecimal(text: string, thousandsHint: boolean): number | null {
  let s = text.replace(NUMBER_SPACES, '');
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

const CURRENCY_WORDS: [RegExp, string][] = [
  [/€|\bEUR\b|\beuros?\b/i, 'EUR'],
  [/\bCHF\b|\bFr\.|\bSFr\b/i, 'CHF'],
  [/\$|\bUSD\b/i, 'USD'],
  [/£|\bGBP\b/i, 'GBP'],
  [/\bJPY\b|¥/i, 'JPY'],
  [/\bPLN\b|\bzł\b/i, 'PLN'],
  [/\bSEK\b|\bDKK\b|\bNOK\b|\bCZK\b|\bHUF\b|\bCAD\b|\bAUD\b/i, '?'],
];

export interface PriceValue {
  amount: number;
  currency: string | null;
  // A period written after the price ("1850 €/mois", "450 EUR per week"), else null.
  period: 'month' | 'week' | null;
}

// "about" before a figure: "ca. 1850", "env. 85 m²", "~ 85", "± 85".
const APPROX = /^\s*(?:ca\.?|circa|env\.?|environ|approx\.?|~|±)\s*/i;

// "/mois", "par mois", "per month", "p.m.", "/Monat", "mtl.", "/semaine", "per week", "/Woche".
const PRICE_PERIOD = /(?:\/|\bpar\b|\bper\b|\bpro\b|\ba\b)?\s*\b(mois|mensuel|month|monthly|monat|monatlich|mtl|p\.?\s?m|semaine|hebdomadaire|week|weekly|woche|wöchentlich)\b\.?\s*$/i;
const WEEKLY = new Set(['semaine', 'hebdomadaire', 'week', 'weekly', 'woche', 'wöchentlich']);

// Prices as agencies type them: "1 250 €", "€ 2 100", "1.250.000 €", "1.690,00", "4 900 CHF".
export function parsePrice(v: unknown): Parsed<PriceValue> {
  if (isBlank(v)) return ok(null);
  if (typeof v === 'number') return Number.isFinite(v) ? ok({ amount: v, currency: null, period: null }) : bad(`price ${show(v)} is not a number`);
  if (typeof v !== 'string') return bad(`price ${show(v)} is not a number`);
  let currency: string | null = null;
  let period: PriceValue['period'] = null;
  let rest = v.replace(APPROX, '');
  const p = PRICE_PERIOD.exec(rest);
  if (p) {
    period = WEEKLY.has(p[1].toLowerCase()) ? 'week' : 'month';
    rest = rest.slice(0, p.index);
  }
  for (const [re, code] of CURRENCY_WORDS) {
    const m = re.exec(rest);
    if (m) {
      currency = code === '?' ? m[0].toUpperCase() : code;
      rest = rest.replace(re, ' ');
      break;
    }
  }
  // "1 250,- €" and "1250.-": the dash says "no cents".
  rest = rest.replace(/[.,]\s*[-–]\s*$/, '').trim();
  const n = parseDecimal(rest, true);
  if (n === null) return bad(`price ${show(v)} is not a number`);
  return ok({ amount: n, currency, period });
}

// "85", "85,5", "85.5", "85,5 m²", "85 m2", "85 qm".
export function parseArea(v: unknown): Parsed<number> {
  if (isBlank(v)) return ok(null);
  let n: number | null;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string') n = parseDecimal(v.replace(APPROX, '').replace(/\s*(m²|m2|sqm|qm|m\^2)\s*$/i, '').trim(), false);
  else n = null;
  if (n === null || !Number.isFinite(n)) return bad(`area ${show(v)} is not a number`);
  if (n < 0) return bad(`area ${show(v)} is negative`);
  if (n > 100_000) return bad(`area ${show(v)} m2 is not plausible for a dwelling`);
  if (n === 0) return ok(null);
  return ok(Math.round(n * 100) / 100);
}

// The words agencies write after a count of rooms or bedrooms ("3 pièces", "3 Zimmer",
// "2 ch."), and the French T3 / F3 (three rooms).
const COUNT_WORDS = /\s*(pi[eè]ces?|pcs?\.?|p\.|zimmer|zi\.?|rooms?|chambres?|ch\.?|bedrooms?|schlafzimmer)\s*$/i;
const FRENCH_TYPE = /^[TF]\s*(\d{1,2})$/i;

// Rooms and bedrooms: whole numbers; fractions ("2.5", "2,5") round down.
export function parseCount(v: unknown, what: string): Parsed<number> {
  if (isBlank(v)) return ok(null);
  let n: number | null;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string') {
    const s = v.trim().replace(COUNT_WORDS, '');
    const t = FRENCH_TYPE.exec(s);
    n = t ? Number(t[1]) : parseDecimal(s, false);
  }
  else n = null;
  if (n === null || !Number.isFinite(n)) return bad(`${what} ${show(v)} is not a number`);
  if (n < 0) return bad(`${what} ${show(v)} is negative`);
  if (n > 100) return bad(`${what} ${show(v)} is not plausible`);
  return ok(Math.floor(n));
}

export function parseCoordinate(v: unknown): number | null {
  if (isBlank(v)) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v !== 'string') return null;
  const s = v.trim().replace(',', '.');
  if (!/^[+-]?\d{1,3}(\.\d+)?$/.test(s)) return null;
  return Number(s);
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

// Dates as the formats give them. A date without an offset is wall time in Luxembourg:
// "21/11/2026 14:03" (csv), "2026-11-19" (openimmo stand_vom), "2026-11-20T08:00:00"; one
// with an offset or Z is taken as it says ("2026-11-20T08:00:00Z", "...+01:00").
export function parseFeedDate(v: unknown): Parsed<Date> {
  if (isBlank(v)) return ok(null);
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? bad('invalid date') : ok(v);
  if (typeof v !== 'string') return bad(`date ${show(v)} is not a date`);
  const s = v.trim();
  const opts = { zone: LU_ZONE, setZone: false };
  let dt: DateTime | null = null;
  // Day first (21/11/2026, 21.11.2026, 21-11-2026), or year first with slashes (2026/11/21).
  const french = /^(\d{1,2})([/.-])(\d{1,2})\2(\d{4})(?:[ T](\d{1,2})[:h](\d{2})(?::(\d{2}))?)?$/.exec(s);
  const yearFirst = /^(\d{4})\/(\d{1,2})\/(\d{1,2})(?:[ T](\d{1,2})[:h](\d{2})(?::(\d{2}))?)?$/.exec(s);
  if (french || yearFirst) {
    const [d, m, y, hh, mm, ss] = french ? [french[1], french[3], french[4], french[5], french[6], french[7]] : [yearFirst![3], yearFirst![2], yearFirst![1], yearFirst![4], yearFirst![5], yearFirst![6]];
    dt = DateTime.fromObject(
      { year: +y, month: +m, day: +d, hour: hh ? +hh : 0, minute: mm ? +mm : 0, second: ss ? +ss : 0 },
      { zone: LU_ZONE },
    );
  } else if (/^\d{4}-\d{2}-\d{2}/.test(s)) {
    dt = DateTime.fromISO(s.replace(' ', 'T'), opts);
  }
  if (!dt || !dt.isValid) return bad(`date ${show(v)} is not a date (expected e.g. 21/11/2026 14:03 or 2026-11-21T14:03:00Z)`);
  const d = dt.toJSDate();
  if (d.getUTCFullYear() < 1990 || d.getUTCFullYear() > 2200) return bad(`date ${show(v)} is out of range`);
  return ok(d);
}

export function isHttpUrl(s: unknown): s is string {
  if (typeof s !== 'string' || s.length > 2000) return false;
  // The URL parser would percent-encode a control character, but the text is stored as given:
  // a NUL there failed the whole import in PostgreSQL (22021, 22P05 in the images' jsonb).
  if (hasControlCharacter(s.trim())) return false;
  try {
    const u = new URL(s.trim());
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
