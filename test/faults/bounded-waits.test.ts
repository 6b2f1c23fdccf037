import { describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/knex.js';
import { useTestContext } from '../helpers/context.js';

// How long the client waits for a statement (src/db/knex.ts): its statement timeout plus a
// margin, or what its transaction set with SET LOCAL, until that transaction ends. What a
// server that does not answer at all gets is in pg-faults.test.ts; here, statements that do
// answer, slowly, within what PostgreSQL allows them.
describe('the client waits for a statement as long as PostgreSQL lets it run', () => {
  const t = useTestContext({});

  it('a transaction with its own SET LOCAL statement_timeout is waited for that long (or without bound for a unit it does not read); after it ends, the default again', async () => {
    // Default: PostgreSQL ends a statement after 300 ms; the client would give up after 2.3 s.
    const db = createDb(t.url, { poolMax: 1, statementTimeoutMs: 300 });
    try {
      const slow = (trx: typeof db) => trx.raw('SELECT pg_sleep(2.6) AS slept');
      await db.transaction(async (trx) => {
        await trx.raw(`SET LOCAL statement_timeout = '4s'`);
        expect((await slow(trx)).rows).toHaveLength(1);
      });
      await db.transaction(async (trx) => {
        await trx.raw(`SET LOCAL statement_timeout = '1h'`);
        expect((await slow(trx)).rows).toHaveLength(1);
      });
      // The same pooled connection, outside a transaction: PostgreSQL's own 300 ms again.
      await expect(db.raw('SELECT pg_sleep(1)')).rejects.toMatchObject({ code: '57014' });
    } finally {
      await db.destroy();
    }
  }, 300_000);
});
