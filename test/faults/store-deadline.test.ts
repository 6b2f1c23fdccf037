import type { IncrementResponse, Store } from 'express-rate-limit';
import { describe, expect, it } from 'vitest';
import { GuardedStore, newStoreHealth } from '../../src/rate-limit/store.js';
import { silentLogger } from '../helpers/factory.js';

// The quota store's deadline (src/rate-limit/store.ts), on a store whose answer comes when the
// test says: what a hung Redis is, against a busy one that keeps answering other commands.
// (The real Redis, hung and healthy, is in redis-faults.test.ts.)
function slowStore(answerAfterMs: number | null): Store & { decrements: number } {
  return {
    decrements: 0,
    async increment(): Promise<IncrementResponse> {
      if (answerAfterMs === null) return new Promise(() => undefined);
      await new Promise((r) => setTimeout(r, answerAfterMs));
      return { totalHits: 7, resetTime: undefined };
    },
    async decrement() {
      this.decrements++;
    },
    async resetKey() {},
  };
}

describe('the quota store deadline', () => {
  // An outside probe: at a load average of 10-18, a Starter key had up to a quarter of its
  // requests served unlimited with Redis healthy; its answers were late, not missing.
  it('waits on while the connection keeps answering other commands, and counts the request', async () => {
    const health = newStoreHealth();
    let answers = 0;
    const ticking = setInterval(() => answers++, 50);
    try {
      const store = new GuardedStore(slowStore(900), health, silentLogger, 'test', 200, () => answers, 3000);
      expect(await store.increment('k')).toMatchObject({ totalHits: 7 });
      expect(health).toMatchObject({ operations: 1, errors: 0, timeouts: 0 });
    } finally {
      clearInterval(ticking);
    }
  });

  it('gives up at the deadline when nothing answers at all (a hung Redis), and takes the increment back', async () => {
    const health = newStoreHealth();
    const inner = slowStore(null);
    const store = new GuardedStore(inner, health, silentLogger, 'test', 200, () => 0, 3000);
    const started = performance.now();
    await expect(store.increment('k')).rejects.toThrow('rate-limit store did not answer within 200 ms');
    expect(performance.now() - started).toBeLessThan(3000);
    expect(health).toMatchObject({ operations: 1, errors: 1, timeouts: 1 });
    await new Promise((r) => setTimeout(r, 10));
    expect(inner.decrements).toBe(1);
  });

  it('gives up at the longest wait when answers keep coming but never its own', async () => {
    const health = newStoreHealth();
    let answers = 0;
    const ticking = setInterval(() => answers++, 50);
    try {
      const store = new GuardedStore(slowStore(null), health, silentLogger, 'test', 200, () => answers, 1000);
      const started = performance.now();
      await expect(store.increment('k')).rejects.toThrow(/did not answer/);
      expect(performance.now() - started).toBeGreaterThanOrEqual(900);
    } finally {
      clearInterval(ticking);
    }
  });
});
