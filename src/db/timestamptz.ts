import pg from 'pg';

// timestamptz values as pg parses them (the postgres-date package: a Date, or ±Infinity),
// with a fast path for the form PostgreSQL writes by default (DateStyle ISO):
// "YYYY-MM-DD HH:MM:SS[.fraction]±HH[:MM[:SS]]" with a four-digit year from 1000. A page of
// 100 listings carries 200 of them, and the package runs four regular expressions on each.
// Any other form (BC, infinity, a short year, another DateStyle) goes to the package's parser.

type Parser = (value: string) => unknown;

// pg's own parser, taken when this module loads (before src/db/knex.ts replaces it).
export const pgTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as Parser;

const FORM = /^[1-9]\d{3}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?[+-]\d\d(?::\d\d){0,2}$/;
const digit = (s: string, k: number) => s.charCodeAt(k) - 48;
const two = (s: string, k: number) => digit(s, k) * 10 + digit(s, k + 1);

export function parseTimestamptz(value: string): unknown {
  if (!FORM.test(value)) return pgTimestamptz(value);
  let k = 19;
  let ms = 0;
  if (value.charCodeAt(k) === 46 /* . */) {
    let end = k + 1;
    while (value.charCodeAt(end) >= 48 && value.charCodeAt(end) <= 57) end++;
    ms = 1000 * parseFloat(value.slice(k, end)); // as the package computes it (Date.UTC truncates)
    k = end;
  }
  const year = digit(value, 0) * 1000 + digit(value, 1) * 100 + two(value, 2);
  const time = Date.UTC(year, two(value, 5) - 1, two(value, 8), two(value, 11), two(value, 14), two(value, 17), ms);
  // The zone: a sign and hours, then minutes and seconds if given.
  let offset = two(value, k + 1) * 3600;
  if (k + 3 < value.length) offset += two(value, k + 4) * 60;
  if (k + 6 < value.length) offset += two(value, k + 7);
  return new Date(time - (value.charCodeAt(k) === 45 /* - */ ? -offset : offset) * 1000);
}
