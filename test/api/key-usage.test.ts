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

  // An outside probe of stop 63: a flush dated every key of its batch with the batch's latest use,
  // so a key revoked right after its last request showed a use after its revocation.
  it("each key gets its own latest use, and a flush never moves a key's last use back", async () => {
    const [a, b] = [await createKey(t.db, 'free'), await createKey(t.db, 'starter')];
    const tracker = new KeyUsageTracker(t.db, silentLogger, 3_600_000);
    const lastUsed = async (id: string) => (await t.db('api_keys').where({ id }).first()).last_used_at as Date | null;
    tracker.record(a.id, new Date('2026-11-28T10:00:05.073Z'));
    tracker.record(b.id, new Date('2026-11-28T10:00:20.000Z'));
    tracker.record(b.id, new Date('2026-11-28T10:00:25.542Z'));
    await tracker.flush();
    expect(await lastUsed(a.id)).toEqual(new Date('2026-11-28T10:00:05.073Z'));
    expect(await lastUsed(b.id)).toEqual(new Date('2026-11-28T10:00:25.542Z'));
    // Another process's flush of an earlier use comes after: the later use stays.
    const other = new KeyUsageTracker(t.db, silentLogger, 3_600_000);
    other.record(b.id, new Date('2026-11-28T10:00:21.000Z'));
    other.record(a.id, new Date('2026-11-28T10:00:06.000Z'));
    await other.flush();
    expect(await lastUsed(b.id)).toEqual(new Date('2026-11-28T10:00:25.542Z'));
    expect(await lastUsed(a.id)).toEqual(new Date('2026-11-28T10:00:06.000Z'));
  });
});
