import { MemoryStore, type Store } from 'express-rate-limit';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { dailyQuotaKey } from '../../src/rate-limit/quota-counters.js';
import { NearLimitGate } from '../../src/rate-limit/near-limit-gate.js';
import { QuotaRefusals } from '../../src/rate-limit/quota-refusals.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, buildTestApp, createKey } from '../helpers/factory.js';

// A key the quota store has just refused is refused again without asking the store, for a
// second at most (src/rate-limit/quota-refusals.ts, src/http/quota.ts): exact, because refused
// requests are not counted and only a 304 taken back lowers a count.

describe('QuotaRefusals', () => {
  const day = dailyQuotaKey('k1', new Date('2026-11-20T12:00:00Z'));
  const t0 = Date.parse('2026-11-20T12:00:00Z');

  it('holds a refusal for its hold time, for the same counter and limit only', () => {
    const r = new QuotaRefusals(1_000);
    expect(r.refuses('k1', day, 100, t0)).toBe(false);
    r.refuse('k1', day, 100, t0);
    expect(r.refuses('k1', day, 100, t0 + 999)).toBe(true);
    expect(r.refuses('k2', day, 100, t0)).toBe(false);
    // Another limit (the key changed tier) or another day's counter: not held.
    expect(r.refuses('k1', day, 5_000, t0 + 1)).toBe(false);
    r.refuse('k1', day, 100, t0);
    expect(r.refuses('k1', dailyQuotaKey('k1', new Date('2026-11-21T00:00:00Z')), 100, t0 + 2)).toBe(false);
    r.refuse('k1', day, 100, t0);
    expect(r.refuses('k1', day, 100, t0 + 1_000)).toBe(false);
    expect(r.size).toBe(0);
  });

  it('forgets a key when one of its requests is taken back', () => {
    const r = new QuotaRefusals();
    r.refuse('k1', day, 100, t0);
    r.forget('k1');
    expect(r.refuses('k1', day, 100, t0)).toBe(false);
  });

  it('stays bounded', () => {
    const r = new QuotaRefusals(1_000, 3);
    for (let i = 0; i < 10; i++) r.refuse(`k${i}`, day, 100, t0);
    expect(r.size).toBeLessThanOrEqual(3);
  });
});

// A store that counts what it is asked (the real in-process store underneath).
class CountingStore extends MemoryStore {
  increments = 0;
  override async increment(key: string) {
    this.increments++;
    return super.increment(key);
  }
}

const t = useTestContext();
let now = new Date('2026-11-20T12:00:00.500Z');

describe('the daily quota with refusals held', () => {

  async function serve() {
    const store = new CountingStore();
    const app = await buildTestApp(t.db, { redis: null, quotaStore: store as Store, clock: () => now });
    return { store, get: (key: string, path = '/api/v1/communes', headers: Record<string, string> = {}) => request(app).get(path).set(bearer(key)).set(headers) };
  }

  it('refuses the 102nd request within a second without asking the store, with the same answer', async () => {
    const { store, get } = await serve();
    const free = await createKey(t.db, 'free');
    for (let i = 0; i < 100; i++) expect(await get(free.key)).toHaveStatus(200);
    const first = await get(free.key);
    expect(first).toHaveStatus(429);
    const asked = store.increments;
    now = new Date(now.getTime() + 600);
    // Conditional requests go through Express: the held refusal is decided there.
    const held = await get(free.key, '/api/v1/communes', { 'If-None-Match': '"x"' });
    expect(store.increments).toBe(asked);
    expect(held).toHaveStatus(429);
    expect(held.body.code).toBe('quota_exceeded');
    expect(held.body.detail).toBe(first.body.detail);
    for (const h of ['ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'content-type', 'cache-control']) expect(held.headers[h], h).toBe(first.headers[h]);
    // The seconds to 00:00 UTC follow the clock.
    expect(Number(held.headers['retry-after'])).toBe(Number(first.headers['retry-after']) - 1);
    expect(held.headers['ratelimit-reset']).toBe(held.headers['retry-after']);
  });

  it('asks the store again after the hold, and the next UTC day gives the full quota back', async () => {
    const { store, get } = await serve();
    const free = await createKey(t.db, 'free');
    now = new Date('2026-11-20T23:59:58.000Z');
    for (let i = 0; i < 100; i++) await get(free.key);
    expect(await get(free.key)).toHaveStatus(429);
    const asked = store.increments;
    now = new Date('2026-11-20T23:59:59.500Z');
    expect(await get(free.key)).toHaveStatus(429);
    expect(store.increments).toBe(asked + 1);
    now = new Date('2026-11-21T00:00:00.100Z');
    const next = await get(free.key);
    expect(next).toHaveStatus(200);
    expect(next.headers['ratelimit-remaining']).toBe('99');
  });

  it('a key upgraded while held is not refused', async () => {
    const { get } = await serve();
    const free = await createKey(t.db, 'free');
    now = new Date('2026-11-20T13:00:00.000Z');
    for (let i = 0; i < 100; i++) await get(free.key);
    expect(await get(free.key)).toHaveStatus(429);
    await t.db('api_keys').where({ id: free.id }).update({ tier: 'starter' });
    const up = await get(free.key);
    expect(up).toHaveStatus(200);
    expect(up.headers['ratelimit-limit']).toBe('5000');
  });
});

// Near its limit a key's requests are admitted one at a time (src/rate-limit/near-limit-gate.ts).
describe('NearLimitGate', () => {
  const order = () => {
    const admitted: string[] = [];
    const releases = new Map<string, () => void>();
    const admit = (name: string) => (release: () => void) => {
      admitted.push(name);
      releases.set(name, release);
    };
    return { admitted, releases, admit };
  };

  it('a key it has not seen, or near its limit: one at a time, in arrival order', () => {
    const g = new NearLimitGate(10);
    const { admitted, releases, admit } = order();
    g.enter('k', admit('a'));
    g.enter('k', admit('b'));
    g.enter('k', admit('c'));
    g.enter('other', admit('x')); // another key is not held back by this one
    expect(admitted).toEqual(['a', 'x']);
    g.saw('k', 5);
    releases.get('a')!();
    releases.get('a')!(); // a second release changes nothing
    expect(admitted).toEqual(['a', 'x', 'b']);
    releases.get('b')!();
    expect(admitted).toEqual(['a', 'x', 'b', 'c']);
  });

  it('far from the limit: admitted at once, and a release that finds the key far lets every waiting request go', () => {
    const g = new NearLimitGate(10);
    const { admitted, releases, admit } = order();
    g.saw('k', 50);
    g.enter('k', admit('a'));
    g.enter('k', admit('b'));
    expect(admitted).toEqual(['a', 'b']);
    releases.get('a')!();
    releases.get('b')!();
    g.saw('k', 3);
    g.enter('k', admit('c'));
    g.enter('k', admit('d'));
    g.enter('k', admit('e'));
    expect(admitted).toEqual(['a', 'b', 'c']);
    g.unanswered('k'); // the store did not answer: nobody waits for the one before
    releases.get('c')!();
    expect(admitted).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  // Outside probes: a client that read nothing held its turn, and every other request of the
  // key waited 150 s; a first cap let the waiting requests all go at once after 1 s, which
  // brought back the wrong refusals. The turn now passes on after maxHoldMs, one at a time.
  it('a turn passes to the next request after maxHoldMs, and the requests still go one at a time', () => {
    vi.useFakeTimers();
    try {
      const g = new NearLimitGate(10, 10_000, 1_000);
      const { admitted, releases, admit } = order();
      g.enter('k', admit('a')); // holds the turn and never releases it
      g.enter('k', admit('b'));
      g.enter('k', admit('c'));
      vi.advanceTimersByTime(999);
      expect(admitted).toEqual(['a']);
      vi.advanceTimersByTime(1);
      expect(admitted).toEqual(['a', 'b']);
      releases.get('b')!(); // answered at once: the next goes at once
      expect(admitted).toEqual(['a', 'b', 'c']);
      releases.get('a')!(); // a late release of an expired turn changes nothing
      g.enter('k', admit('d'));
      expect(admitted).toEqual(['a', 'b', 'c']);
      vi.advanceTimersByTime(1_000);
      expect(admitted).toEqual(['a', 'b', 'c', 'd']);
    } finally {
      vi.useRealTimers();
    }
  });

  // An outside probe of stop 56: Redis answering in 250 ms (under REDIS_TIMEOUT_MS), each turn
  // one round trip, and the 60th of a Free key's requests sent at once waited 15 s.
  // Past it, quota.ts sends the request to the store without its turn (the default of `expired`).
  it('a request waits in the queue maxWaitMs at most, then its `expired` runs instead; the queue goes on', () => {
    vi.useFakeTimers();
    try {
      const g = new NearLimitGate(10, 10_000, 60_000, 3_000);
      const { admitted, releases, admit } = order();
      const expired: string[] = [];
      const gaveUp = (name: string) => () => void expired.push(name);
      g.enter('k', admit('a'), { expired: gaveUp('a') }); // holds the turn (a slow store)
      g.enter('k', admit('b'), { expired: gaveUp('b') });
      vi.advanceTimersByTime(2_000);
      g.enter('k', admit('c'), { expired: gaveUp('c') });
      vi.advanceTimersByTime(999);
      expect([admitted, expired]).toEqual([['a'], []]);
      vi.advanceTimersByTime(1);
      expect([admitted, expired]).toEqual([['a'], ['b']]); // b waited 3 s: its expired ran, not its admit
      releases.get('a')!(); // the turn passes to c, which is still queued
      expect(admitted).toEqual(['a', 'c']);
      vi.advanceTimersByTime(3_000);
      expect([admitted, expired]).toEqual([['a', 'c'], ['b']]); // c's own expiry does nothing now
      releases.get('c')!();
      g.enter('k', admit('d'), { expired: gaveUp('d') }); // the turn is free: d goes at once
      expect(admitted).toEqual(['a', 'c', 'd']);
    } finally {
      vi.useRealTimers();
    }
  });

  // The re-check of stop 56: each plain request waited for the store's answer to the one before
  // it, and behind a slow store most of a burst were served without limiting. Plain requests
  // share the turn (the store counts them atomically); a revalidation takes it alone.
  it('plain requests share the turn; a revalidation takes it alone, and those after it wait for it', () => {
    const g = new NearLimitGate(10);
    const { admitted, releases, admit } = order();
    const plain = { exclusive: false };
    g.enter('k', admit('p1'), plain);
    g.enter('k', admit('p2'), plain);
    expect(admitted).toEqual(['p1', 'p2']); // at once, together
    g.enter('k', admit('r1')); // a revalidation: waits for p1 and p2 to be decided
    g.enter('k', admit('p3'), plain); // behind r1
    expect(admitted).toEqual(['p1', 'p2']);
    releases.get('p1')!();
    expect(admitted).toEqual(['p1', 'p2']);
    releases.get('p2')!();
    expect(admitted).toEqual(['p1', 'p2', 'r1']);
    g.enter('k', admit('p4'), plain); // behind r1 and p3
    releases.get('r1')!(); // answered: the plain requests behind it go together
    expect(admitted).toEqual(['p1', 'p2', 'r1', 'p3', 'p4']);
    g.enter('k', admit('r2'));
    releases.get('p3')!();
    expect(admitted).toEqual(['p1', 'p2', 'r1', 'p3', 'p4']);
    releases.get('p4')!();
    expect(admitted).toEqual(['p1', 'p2', 'r1', 'p3', 'p4', 'r2']);
  });

  // Re-check 5 of stop 56: a burst sent at 65 left went by unqueued (each request saw the key
  // far), and its revalidations got plain requests refused with requests left.
  it('requests admitted far from the limit count against it until decided: a burst is queued once near', () => {
    const g = new NearLimitGate(10);
    const { admitted, releases, admit } = order();
    g.saw('k', 12);
    g.enter('k', admit('a')); // 12 left, none undecided: far
    g.enter('k', admit('b')); // 12 - 1 = 11: far
    g.enter('k', admit('c')); // 12 - 2 = 10: near, and a revalidation waits for a and b to be decided
    g.enter('k', admit('d')); // near: waits for c (a revalidation takes the turn alone)
    expect(admitted).toEqual(['a', 'b']);
    g.saw('k', 10); // a and b counted
    releases.get('a')!();
    expect(admitted).toEqual(['a', 'b']);
    releases.get('b')!();
    expect(admitted).toEqual(['a', 'b', 'c']);
    releases.get('c')!();
    expect(admitted).toEqual(['a', 'b', 'c', 'd']);
    releases.get('d')!();
    g.saw('k', 30); // far again once decided
    g.enter('k', admit('e'));
    expect(admitted).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  // The re-check of stop 57: two revalidations admitted far at 66 left, then 66 plain requests
  // shared the turn at once while the two were still counted, and 2 were refused. Plain requests
  // near the limit wait for revalidations admitted far, as for one holding the turn.
  it('plain requests near the limit wait for the revalidations admitted far to be decided', () => {
    const g = new NearLimitGate(10);
    const { admitted, releases, admit } = order();
    g.saw('k', 12);
    g.enter('k', admit('r1')); // far
    g.enter('k', admit('r2')); // 11: far
    for (const p of ['p1', 'p2', 'p3']) g.enter('k', admit(p), { exclusive: false });
    expect(admitted).toEqual(['r1', 'r2']);
    g.saw('k', 10); // both counted
    g.tookBack('k'); // r1 a 304: 11 left
    releases.get('r1')!();
    expect(admitted).toEqual(['r1', 'r2']);
    g.tookBack('k'); // r2 a 304: 12 left
    releases.get('r2')!();
    // 12 left: p1 goes far (12 - 1 = 11), p2 too (11 - 1 = 10: near from then on), p3 shares the turn.
    expect(admitted).toEqual(['r1', 'r2', 'p1', 'p2', 'p3']);
  });

  // Re-check 6 of stop 56: a queue released whole once the key looked far again went by
  // uncounted, and 4 plain requests were refused with 9 left. It goes only while the key stays
  // far, each request counted as it goes; the rest keep their turns.
  it('a queue released when the key is far again goes only while it stays far', () => {
    const g = new NearLimitGate(10);
    const { admitted, releases, admit } = order();
    g.saw('k', 5);
    g.enter('k', admit('r1')); // near: takes the turn alone
    for (const name of ['p1', 'p2', 'p3', 'p4', 'r2']) g.enter('k', admit(name), { exclusive: name.startsWith('r') });
    expect(admitted).toEqual(['r1']);
    g.saw('k', 13); // r1 a 304, and take-backs of other processes: 13 left, far by 3
    releases.get('r1')!();
    // p1, p2, p3 go as far ones (13 - 1 - 2 = 10 is near again); p4 shares the turn; r2 waits for it.
    expect(admitted).toEqual(['r1', 'p1', 'p2', 'p3', 'p4']);
    releases.get('p1')!();
    expect(admitted).toEqual(['r1', 'p1', 'p2', 'p3', 'p4']); // 13 - 2 undecided - p4 = 10: near
    releases.get('p2')!(); // 13 - 1 - 1 = 11: far again, r2 goes, counted
    expect(admitted).toEqual(['r1', 'p1', 'p2', 'p3', 'p4', 'r2']);
  });

  it('a take-back raises what is left; a refusal is near', () => {
    const g = new NearLimitGate(2);
    const { admitted, releases, admit } = order();
    g.saw('k', 2);
    g.tookBack('k');
    g.enter('k', admit('a'));
    g.enter('k', admit('b'));
    expect(admitted).toEqual(['a']); // 3 left: a far, b near and waiting for a to be decided
    releases.get('a')!();
    expect(admitted).toEqual(['a', 'b']);
    releases.get('b')!();
    g.saw('k', 0);
    g.enter('k', admit('c'));
    g.enter('k', admit('d'));
    expect(admitted).toEqual(['a', 'b', 'c']);
  });
});
