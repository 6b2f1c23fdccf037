import knex from 'knex';
import { describe, expect, it } from 'vitest';
import { failureLine, StartupError } from '../../src/cluster.js';
import { PG_BASE } from '../helpers/pg.js';

// The one line a failed start prints (src/server.ts). An outside probe of stop 44: against a
// PostgreSQL behind a 2.5 s delay the start ended on knex's words for developers, "Timeout
// acquiring a connection. The pool is probably full. Are you missing a .transacting(trx) call?".
describe('the line a failed start prints', () => {
  it('says in words that the database answers too slowly when no connection comes in time', async () => {
    // A real pool of one whose connection is held: the next acquire times out as at that start.
    const db = knex({ client: 'pg', connection: `${PG_BASE}/postgres`, pool: { min: 0, max: 1 }, acquireConnectionTimeout: 200 });
    try {
      const trx = await db.transaction();
      const err = await db.raw('SELECT 1').then(() => null, (e: unknown) => e);
      await trx.rollback();
      expect(String((err as Error).message)).toMatch(/Timeout acquiring a connection/);
      expect(failureLine(err)).toBe('Failed to start: the database answers too slowly (no connection was ready in time); check the database and the network to it, then start again');
    } finally {
      await db.destroy();
    }
  });

  it('prints a StartupError as it is, and any other error after "Failed to start:"', () => {
    expect(failureLine(new StartupError('port 3000 is in use; set PORT'))).toBe('port 3000 is in use; set PORT');
    expect(failureLine(new Error('relation "x" does not exist'))).toBe('Failed to start: relation "x" does not exist');
  });
});
