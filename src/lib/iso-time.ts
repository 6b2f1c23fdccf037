// Date.prototype.toISOString, in JavaScript: the same string for any instant of years 0000 to
// 9999 (other years, and an invalid date, go to toISOString itself, which writes six-digit
// years or throws). The builtin is a runtime call of about a microsecond; a page of 100
// listings presents 200 timestamps, so this one is computed from the time value instead.

const TWO = Array.from({ length: 100 }, (_, k) => (k < 10 ? '0' : '') + k);
const MIN = -62167219200000; // 0000-01-01T00:00:00.000Z
const MAX = 253402300799999; // 9999-12-31T23:59:59.999Z

export function isoTimestamp(d: Date): string {
  const t = d.getTime();
  if (!(t >= MIN && t <= MAX)) return d.toISOString();
  const ms = ((t % 1000) + 1000) % 1000;
  const seconds = (t - ms) / 1000;
  const ofDay = ((seconds % 86400) + 86400) % 86400;
  // Days since 1970-01-01 to year, month and day (H. Hinnant's civil_from_days, proleptic
  // Gregorian calendar, as ECMAScript's).
  const z = (seconds - ofDay) / 86400 + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const hour = Math.floor(ofDay / 3600);
  const minute = Math.floor((ofDay % 3600) / 60);
  const second = ofDay % 60;
  return (
    TWO[Math.floor(year / 100)] + TWO[year % 100] + '-' + TWO[month] + '-' + TWO[day] + 'T' + TWO[hour] + ':' + TWO[minute] + ':' + TWO[second] + '.' +
    TWO[Math.floor(ms / 10)] + (ms % 10) + 'Z'
  );
}
