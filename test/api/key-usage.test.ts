import { describe, expect, it } from 'vitest';
import { KeyUsageTracker } from '../../src/auth/key-usage.js';
import { createDb } from '../../src/db/knex.js';
import { useTestContext } from '../helpers/context.js';
import { createKey, silentLogger } from '../helpers/factory.js';

// api_keys.last_used_at is written in batches (src/auth/key-usage.ts); a batch the database
// refuses is kept for the next one.
describe('key usage', () => {
  const t = useTestContext({});

  it('a flush that fails (the table locked past the statement timeout) is written by the next one', async () => {
    const key = await createKey(t.db, 'free');
    const slow = createDb(t.url, { poolMax: 1, statementTimeoutMs: 200 });
    const tracker = new KeyUsageTracker(slow, silentLogger, 3_600_000);
    const used = new Date('2026-11-28T10:00:00.000Z');
    try {
      tracker.record(key.id, used);
      const lock = await t.db.transaction();
      try {
        await lock.raw('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE');
        await tracker.flush();
      } finally {
        await lock.rollback();
      }
      expect((await t.db('api_keys').where({ id: key.id }).first()).last_used_at).toBeNull();
      await tracker.flush();
      expect((await t.db('api_keys').where({ id: key.id }).first()).last_used_at).toEqual(used);
    } finally {
      await slow.destroy();
    }
  });
});
