import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/demo/random.js';
import { createDb } from '../../src/db/knex.js';
import { parseTimestamptz, pgTimestamptz } from '../../src/db/timestamptz.js';
import { useTestContext } from '../helpers/context.js';

// timestamptz values are parsed by src/db/timestamptz.ts (a fast path for PostgreSQL's usual
// output) instead of pg's own parser: the same value for every string, whatever the zone,
// fraction or year, and the forms it does not handle go to pg's parser.
const t = useTestContext();
const same = (s: string) => {
  const mine = parseTimestamptz(s);
  const theirs = pgTimestamptz(s);
  if (theirs instanceof Date) expect(mine instanceof Date && mine.getTime(), s).toBe(Number.isNaN(theirs.getTime()) ? NaN : theirs.getTime());
  else expect(mine, s).toEqual(theirs);
};

describe('timestamptz parsing', () => {
  it("gives what pg gives for PostgreSQL's forms: fractions of 0-6 digits, zones with minutes and seconds, any year", () => {
    const rng = new Rng(1184);
    const p2 = (n: number) => String(n).padStart(2, '0');
    for (let k = 0; k < 20_000; k++) {
      const year = rng.chance(0.9) ? rng.int(1970, 2100) : rng.int(1, 9999);
      const fraction = rng.chance(0.3) ? '' : '.' + String(rng.int(0, 999_999)).padStart(6, '0').slice(0, rng.int(1, 6));
      const zone = rng.pick(['+00', '-05', '+01', '+05:30', '-09:30', '+05:45:12', '-00:00:36', '+14']);
      same(`${String(year).padStart(4, '0')}-${p2(rng.int(1, 12))}-${p2(rng.int(1, 28))} ${p2(rng.int(0, 23))}:${p2(rng.int(0, 59))}:${p2(rng.int(0, 59))}${fraction}${zone}`);
    }
    for (const s of ['infinity', '-infinity', '0099-01-01 00:00:00+00', '0001-12-31 23:59:59.999+00 BC', '2026-02-29 10:00:00+00', '2026-11-26 16:00:00.5+00', '12026-01-01 00:00:00+00', '2026-11-26T16:00:00Z', '2026-11-26']) same(s);
  });

  it('is the parser pg uses for timestamptz columns, and reads them as before', async () => {
    expect(pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text')).toBe(parseTimestamptz);
    const db = createDb(t.url, { poolMax: 1 });
    try {
      const { rows } = await db.raw(`SELECT '2026-11-26 16:01:02.345678+05:30'::timestamptz AS a, '-infinity'::timestamptz AS b, NULL::timestamptz AS c`);
      expect((rows[0].a as Date).toISOString()).toBe('2026-11-26T10:31:02.345Z');
      expect(rows[0].b).toBe(-Infinity);
      expect(rows[0].c).toBeNull();
    } finally {
      await db.destroy();
    }
  });
});
