import { DateTime } from 'luxon';
import { bad, isBlank, MAX_VALUE_TEXT, ok, show, type Parsed } from './values.js';

// The dates feeds give (a listing's publication): the forms agencies write, read in
// Luxembourg's time unless they name another zone.

export const LU_ZONE = 'Europe/Luxembourg';

function twoDigitYear(yy: number): number {
  return 2000 + yy <= new Date().getUTCFullYear() + 1 ? 2000 + yy : 1900 + yy;
}

// A zone name after a date: Luxembourg's own (CET, CEST, MEZ, MESZ) reads as a date without
// one; UTC, GMT and Z as UTC.
const ZONE_NAME = /(?<=[\d\s.])\s*(CET|CEST|MEZ|MESZ|UTC|GMT|Z)$/i;
const LU_ZONE_NAMES = new Set(['cet', 'cest', 'mez', 'mesz']);

// The time after a date: " 14:03", "T14:03", " 14h03", " 14:03:00.000", " 2:03 PM", " - 14:03",
// " à 14h03", " um 14:03". "h" or ":" between hours and minutes, or "." after a space ("21/11/2026
// 14.03", as German and French software writes it: an outside probe of stop 50): "11.2026" is no time.
const TIME_AT_END = /(?:\s*[-–,]\s*|\s+(?:à|um|at)\s+|\s+|T)(\d{1,2})(?:[:h]|(?<=\s\d{1,2})\.)(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:\s*([ap])\.?\s?m\.?)?$/i;

// Day first (21/11/2026, 21.11.2026, 21-11-2026, 21/11/26), year first with slashes
// (2026/11/21), or ISO's basic form (20261121).
const DAY_FIRST = /^(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})$/;
const YEAR_FIRST = /^(\d{4})\/(\d{1,2})\/(\d{1,2})$/;
const COMPACT = /^(\d{4})(\d{2})(\d{2})$/;
// A month written as a word: "21 nov. 2026", "21 novembre 2026", "21. November 2026",
// "Nov 21, 2026". Luxon knows the month names of each language.
const MONTH_NAME_FORMATS: [string, string[]][] = [
  ['fr', ['d MMMM yyyy', 'd MMM yyyy']],
  ['de', ['d. MMMM yyyy', 'd. MMM yyyy', 'd MMMM yyyy']],
  ['en', ['MMMM d, yyyy', 'MMM d, yyyy', 'MMMM d yyyy', 'MMM d yyyy', 'd MMMM yyyy', 'd MMM yyyy']],
];
// The weekday before such a date: "vendredi 20 novembre 2026", "Freitag, 20. November 2026",
// "Friday, November 20, 2026" (an outside probe of stop 47). Luxon checks that it is the
// date's: "samedi 20 novembre 2026" is unread, as a wrong weekday in RFC 2822 is.
const WEEKDAY_FIRST = /^\p{L}+\.?,?\s/u;
const WEEKDAY_FORMATS = ['EEEE', 'EEEE,', 'EEE', 'EEE,'];

// The weekday before a date in figures: "Sa 21.11.2026", "samedi 21/11/2026", "Sat, 21/11/2026" (an
// outside probe of stop 50).
const WEEKDAY_BEFORE_FIGURES = /^(\p{L}+)\.?,?\s+(?=\d)/u;

interface Day { year: number; month: number; day: number }

// The names a day's weekday goes by in French, German and English, written in full or short ("sam.",
// "Sa.", "Sat"), and German's two letters ("Sa", "Di"), without accents or dots.
function weekdayNames(day: Day): Set<string> {
  const dt = DateTime.fromObject(day);
  const plain = (s: string) => s.normalize('NFKD').replace(/\p{M}+/gu, '').replace(/\./g, '').toLowerCase();
  const names = ['fr', 'de', 'en'].flatMap((l) => [dt.setLocale(l).toFormat('cccc'), dt.setLocale(l).toFormat('ccc')]).map(plain);
  return new Set([...names, plain(dt.setLocale('de').toFormat('cccc')).slice(0, 2)]);
}

function readDay(text: string): Day | null {
  const w = WEEKDAY_BEFORE_FIGURES.exec(text);
  if (w) {
    // Only the date's own weekday: "vendredi 21/11/2026" (a Saturday) is unread, as with the month in words.
    const day = readDay(text.slice(w[0].length));
    if (day && DateTime.fromObject(day).isValid && weekdayNames(day).has(w[1].normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase())) return day;
  }
  const d = DAY_FIRST.exec(text);
  // A two-digit year is this century's unless that would be more than a year ahead ("99" is
  // 1999, which is then out of range, not 2099).
  const year = d && (d[4].length === 2 ? twoDigitYear(+d[4]) : +d[4]);
  // The month first when the day cannot be ("11/21/2026", as American software writes, with slashes or
  // dashes): only then, so that "03/04/2026" is still the 3rd of April (an outside probe of stop 50).
  // Dots are the day first's alone: "11.21.2026" is a slip, unread.
  if (d && d[2] !== '.' && +d[3] > 12 && +d[1] >= 1 && +d[1] <= 12) return { year: year!, month: +d[1], day: +d[3] };
  if (d) return { year: year!, month: +d[3], day: +d[1] };
  const y = YEAR_FIRST.exec(text) ?? COMPACT.exec(text);
  if (y) return { year: +y[1], month: +y[2], day: +y[3] };
  if (!/\p{L}/u.test(text)) return null;
  // "1er mars 2026": the French first of the month (after its weekday too: "dimanche 1er mars").
  const s = text.replace(/^((?:\p{L}+\.?,?\s+)?\d{1,2})er\b/iu, '$1');
  const weekdays = WEEKDAY_FIRST.test(s) ? WEEKDAY_FORMATS : [];
  for (const [locale, formats] of MONTH_NAME_FORMATS) {
    for (const format of [...formats, ...weekdays.flatMap((w) => formats.map((f) => `${w} ${f}`))]) {
      const dt = DateTime.fromFormat(s, format, { locale });
      if (dt.isValid) return { year: dt.year, month: dt.month, day: dt.day };
    }
  }
  return null;
}

// A date and maybe a time, as wall time in the zone: null when it cannot be read.
function readWallTime(text: string, zone: string): DateTime | null {
  const t = TIME_AT_END.exec(text);
  const day = readDay(t ? text.slice(0, t.index) : text);
  if (!day) return null;
  let hour = t ? +t[1] : 0;
  if (t?.[5]) {
    // 12 AM is midnight, 12 PM noon; a 24-hour clock with AM or PM says nothing readable.
    if (hour < 1 || hour > 12) return null;
    hour = (hour % 12) + (t[5].toLowerCase() === 'p' ? 12 : 0);
  }
  const millisecond = t?.[4] ? Number(t[4].padEnd(3, '0').slice(0, 3)) : 0;
  return DateTime.fromObject({ ...day, hour, minute: t ? +t[2] : 0, second: t?.[3] ? +t[3] : 0, millisecond }, { zone });
}

// A number (JSON) is a Unix time: seconds, or milliseconds when larger than any date in
// seconds could be (1e11 s is the year 5138).
function readEpoch(n: number): DateTime | null {
  if (!Number.isFinite(n)) return null;
  return DateTime.fromMillis(n > 1e11 ? n : n * 1000, { zone: 'UTC' });
}

function readDate(v: unknown): DateTime | null {
  if (typeof v === 'number') return readEpoch(v);
  if (typeof v !== 'string' || v.length > MAX_VALUE_TEXT) return null;
  const s = v.trim();
  // RFC 2822 ("Fri, 20 Nov 2026 08:00:00 GMT") always carries its zone.
  const rfc = DateTime.fromRFC2822(s);
  if (rfc.isValid) return rfc;
  const z = ZONE_NAME.exec(s);
  const zone = z && !LU_ZONE_NAMES.has(z[1].toLowerCase()) ? 'UTC' : LU_ZONE;
  const text = z ? s.slice(0, z.index).trim() : s;
  // ISO's basic form with a time too ("20261121T140300", "20261121T1403+0100"), as JSON exports write.
  if (/^\d{4}-\d{2}-\d{2}/.test(text) || /^\d{8}T\d{4}/i.test(text)) return DateTime.fromISO(text.replace(' ', 'T'), { zone, setZone: false });
  return readWallTime(text, zone);
}

// Dates as the formats give them. A date without an offset is wall time in Luxembourg:
// "21/11/2026 14:03" (csv), "2026-11-19" (openimmo stand_vom), "2026-11-20T08:00:00"; one
// with an offset or Z is taken as it says ("2026-11-20T08:00:00Z", "...+01:00"). A date
// that cannot be read is left out, as a missing one is: the date is not worth the listing.
// So is one read but out of range: before 1990 it is a CRM's placeholder for "unknown"
// (1900-01-01, the Unix time 0), after 2200 a typing slip.
export function parseFeedDate(v: unknown): Parsed<Date> {
  if (isBlank(v)) return ok(null);
  const dt = v instanceof Date ? DateTime.fromJSDate(v) : readDate(v);
  if (!dt || !dt.isValid) return ok(null);
  const d = dt.toJSDate();
  if (d.getUTCFullYear() < 1990 || d.getUTCFullYear() > 2200) return ok(null);
  return ok(d);
}

