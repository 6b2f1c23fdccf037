import { isBlank, MAX_VALUE_TEXT } from './values.js';

// Degrees, minutes and seconds ("49°36'42\"N", "6° 7' 55.2'' E", "49°36.7'N"), and a hemisphere
// letter after or before decimal degrees ("49.6116N", "N 49.6116", "6.0231E"): S and W are
// negative. (O is left alone: Ouest in French, Ost in German.) An outside probe of stop 46 found
// these dropped without a word.
const DMS = /^([NSEW])?\s*(\d{1,3})\s*°\s*(?:(\d{1,2}(?:\.\d+)?)\s*(?:'|′|’)\s*(?:(\d{1,2}(?:\.\d+)?)\s*(?:"|″|''|”)\s*)?)?([NSEW])?$/i;
const HEMISPHERE = /^([NSEW])?\s*([+]?\d{1,3}(?:\.\d+)?)\s*(?:°\s*)?([NSEW])?$/i;

export function parseCoordinate(v: unknown): number | null {
  if (isBlank(v)) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v !== 'string' || v.length > MAX_VALUE_TEXT) return null;
  // "49.6005°", "49,6005 °": the degree sign says what the figure already is.
  const s = v.trim().replace(/\s*°$/, '').replace(',', '.');
  if (/^[+-]?\d{1,3}(\.\d+)?$/.test(s)) return Number(s);
  // One letter at most (`N 49.6 E` says two things); none: north or east, as in Luxembourg.
  const withLetter = (letters: (string | undefined)[], n: number) => {
    const given = letters.filter((l): l is string => l !== undefined).map((l) => l.toUpperCase());
    if (given.length > 1) return null;
    return given[0] === 'S' || given[0] === 'W' ? -n : n;
  };
  const t = v.trim().replace(/,/g, '.');
  const dms = DMS.exec(t);
  if (dms && (dms[3] !== undefined || dms[1] !== undefined || dms[5] !== undefined)) {
    const [, before, d, m, sec, after] = dms;
    if (Number(m ?? 0) >= 60 || Number(sec ?? 0) >= 60) return null;
    // To 7 decimals (about 1 cm), as decimal degrees are written: the sum's floating-point noise
    // ("49°50'51\"N" was 49.847500000000004: an outside probe of stop 47) is no precision.
    return withLetter([before, after], Math.round((Number(d) + Number(m ?? 0) / 60 + Number(sec ?? 0) / 3600) * 1e7) / 1e7);
  }
  const h = HEMISPHERE.exec(t);
  return h && (h[1] !== undefined || h[3] !== undefined) ? withLetter([h[1], h[3]], Number(h[2])) : null;
}
