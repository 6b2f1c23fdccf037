import { randomBytes } from 'node:crypto';
import request, { type Response } from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import type { AppDeps } from '../../src/app.js';
import type { Tier } from '../../src/domain/tiers.js';
import { setApiKeyTier } from '../../src/repositories/api-keys.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, buildTestApp, createKey, listingIdsOf } from '../helpers/factory.js';

// docs/spec/contract.md section 6: per-key daily quotas (Free 100, Starter 5,000,
// Pro/Enterprise none), reset at 00:00 UTC, 429s not counted, and the per-IP limit of
// GET /api/v1/stats.
// Everything runs twice: against the machine's Redis (TEST_REDIS_URL, a unique key prefix
// per test) and with redis: null (the in-process memory store).

const t = useTestContext({ redis: true });
let prefixSeq = 0;

class Clock {
  now: Date;
  constructor(iso: string) {
    this.now = new Date(iso);
  }
  set(iso: string): void {
    this.now = new Date(iso);
  }
  at(ms: number): void {
    this.now = new Date(ms);
  }
  readonly fn = () => this.now;
}

const CONFIG: AppDeps['config'] = { PUBLIC_BASE_URL: 'https://api.example.test', TRUST_PROXY: false, STATS_RATE_LIMIT_PER_MINUTE: 1000 };

function expectProblem(res: Response, status: number, code: string): void {
  expect(res).toHaveStatus(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(res.text);
  expect(body).toMatchObject({ type: 'about:blank', status, code });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
}

function expectNoQuotaHeaders(res: Response): void {
  expect(res.headers['ratelimit-limit']).toBeUndefined();
  expect(res.headers['ratelimit-remaining']).toBeUndefined();
}

describe.each(['redis', 'memory'] as const)('quotas with the %s store', (kind) => {
  async function serve(overrides: Partial<AppDeps> = {}) {
    const prefix = `${t.redisPrefix}${++prefixSeq}:`;
    const app = await buildTestApp(t.db, { redis: kind === 'redis' ? t.redis : null, redisPrefix: prefix, config: CONFIG, ...overrides });
    const { server } = await t.listen(app);
    const agent = request(server);
    return {
      app,
      prefix,
      get: (path: string, key?: string, headers: Record<string, string> = {}) =>
        agent.get(path).set({ ...(key ? bearer(key) : {}), ...headers }),
    };
  }

  // The counter a key has in Redis for one UTC day (only meaningful for the Redis store).
  async function redisCount(prefix: string, keyId: string, day: string): Promise<number | null> {
    const v = await t.redis.get(`${prefix}quota:${keyId}:${day}`);
    return v === null ? null : Number(v);
  }

  // 429s are un-counted after the response finishes; wait until Redis shows it (a generous
  // deadline: on a busy machine the decrement can land seconds later).
  async function waitForRedisCount(prefix: string, keyId: string, day: string, expected: number): Promise<void> {
    await vi.waitFor(async () => expect(await redisCount(prefix, keyId, day)).toBe(expected), { timeout: 30_000, interval: 20 });
  }

  it('Free: requests 1..100 are 200 with RateLimit headers; the 101st is 429 quota_exceeded with Retry-After to 00:00 UTC; a new UTC day gives the full quota back', async () => {
    const clock = new Clock('2026-11-02T08:00:00.400Z');
    const { get, prefix } = await serve({ clock: clock.fn });
    const k = await createKey(t.db, 'free');
    const start = Date.parse('2026-11-02T08:00:00.400Z');

    for (let i = 1; i <= 100; i++) {
      clock.at(start + i * 1000); // 08:00:i.400 → 57,600 − i − 0.4 s to midnight, rounded up
      const res = await get('/api/v1/communes', k.key);
      expect(res, `request ${i}`).toHaveStatus(200);
      expect(res.headers['ratelimit-limit']).toBe('100');
      expect(res.headers['ratelimit-remaining'], `request ${i}`).toBe(String(100 - i));
      expect(res.headers['ratelimit-policy']).toBe('100;w=86400');
      expect(res.headers['ratelimit-reset'], `request ${i}`).toBe(String(57_600 - i));
      expect(res.headers['retry-after']).toBeUndefined();
    }

    clock.set('2026-11-02T23:59:30.000Z');
    const over = await get('/api/v1/communes', k.key);
    expectProblem(over, 429, 'quota_exceeded');
    expect(over.headers['retry-after']).toBe('30');
    expect(over.headers['ratelimit-limit']).toBe('100');
    expect(over.headers['ratelimit-remaining']).toBe('0');
    expect(over.headers['ratelimit-reset']).toBe('30');
    expect(over.headers['cache-control']).toBe('private, max-age=0, must-revalidate');

    // More 429s later that day: Retry-After follows the injected clock.
    for (const [at, retry] of [
      ['2026-11-02T23:59:31.000Z', '29'],
      ['2026-11-02T23:59:45.500Z', '15'],
      ['2026-11-02T23:59:59.000Z', '1'],
      ['2026-11-02T23:59:59.999Z', '1'],
    ] as const) {
      clock.set(at);
      const res = await get('/api/v1/communes', k.key);
      expectProblem(res, 429, 'quota_exceeded');
      expect(res.headers['retry-after'], at).toBe(retry);
    }
    if (kind === 'redis') await waitForRedisCount(prefix, k.id, '2026-11-02', 100);

    // 00:00:00.000 UTC: a new day, a full quota.
    clock.set('2026-11-03T00:00:00.000Z');
    const fresh = await get('/api/v1/communes', k.key);
    expect(fresh).toHaveStatus(200);
    expect(fresh.headers['ratelimit-limit']).toBe('100');
    expect(fresh.headers['ratelimit-remaining']).toBe('99');
    expect(fresh.headers['ratelimit-reset']).toBe('86400');

    if (kind === 'redis') {
      expect(await redisCount(prefix, k.id, '2026-11-03')).toBe(1);
      // Counters expire by themselves an hour after their day (window = 25 h).
      const ttl = await t.redis.pttl(`${prefix}quota:${k.id}:2026-11-03`);
      expect(ttl).toBeGreaterThan(24 * 3_600_000);
      expect(ttl).toBeLessThanOrEqual(25 * 3_600_000);
    }
  });

  it('429s do not count: after several 429s the key has used exactly 100 (seen when the key is upgraded to Starter the same day)', async () => {
    const clock = new Clock('2026-11-05T12:00:00.000Z');
    const { get, prefix } = await serve({ clock: clock.fn });
    const k = await createKey(t.db, 'free');
    for (let i = 1; i <= 100; i++) expect(await get('/api/v1/communes', k.key)).toHaveStatus(200);
    for (let i = 0; i < 7; i++) expectProblem(await get('/api/v1/communes', k.key), 429, 'quota_exceeded');
    if (kind === 'redis') await waitForRedisCount(prefix, k.id, '2026-11-05', 100);

    await setApiKeyTier(t.db, k.id, 'starter');
    const res = await get('/api/v1/communes', k.key);
    expect(res).toHaveStatus(200);
    expect(res.headers['ratelimit-limit']).toBe('5000');
    // 100 counted before + this one; the seven 429s are not in the count.
    expect(res.headers['ratelimit-remaining']).toBe(String(5000 - 101));
  });

  it('requests answered 400 and 404 count toward the quota (every authenticated request except 429s)', async () => {
    const clock = new Clock('2026-11-06T10:00:00.000Z');
    const { get } = await serve({ clock: clock.fn });
    const k = await createKey(t.db, 'free');
    const unknownListing = `/api/v1/listings/${(await listingIdsOf(t.db))('test-agency', 'does-not-exist')}`;
    let used = 0;
    const check = (res: Response, status: number) => {
      used++;
      expect(res, `request ${used}`).toHaveStatus(status);
      expect(res.headers['ratelimit-limit']).toBe('100');
      expect(res.headers['ratelimit-remaining'], `request ${used}`).toBe(String(100 - used));
    };
    for (let i = 0; i < 40; i++) check(await get('/api/v1/listings?bogus=1', k.key), 400);
    for (let i = 0; i < 20; i++) check(await get(unknownListing, k.key), 404);
    for (let i = 0; i < 20; i++) check(await get('/api/v1/no-such-route', k.key), 404);
    for (let i = 0; i < 20; i++) check(await get('/api/v1/communes', k.key), 200);
    expect(used).toBe(100);
    expectProblem(await get('/api/v1/listings?bogus=1', k.key), 429, 'quota_exceeded');
    expectProblem(await get('/api/v1/communes', k.key), 429, 'quota_exceeded');
  });

  it('Starter: the limit of 5000 is reported in RateLimit-Limit', async () => {
    const clock = new Clock('2026-11-02T18:00:00.000Z');
    const { get } = await serve({ clock: clock.fn });
    const k = await createKey(t.db, 'starter');
    for (let i = 1; i <= 3; i++) {
      const res = await get('/api/v1/communes', k.key);
      expect(res).toHaveStatus(200);
      expect(res.headers['ratelimit-limit']).toBe('5000');
      expect(res.headers['ratelimit-remaining']).toBe(String(5000 - i));
      expect(res.headers['ratelimit-policy']).toBe('5000;w=86400');
      expect(res.headers['ratelimit-reset']).toBe('21600');
    }
  });

  it.each(['pro', 'enterprise'] as Tier[])('%s: never limited (150 requests in one UTC day, all 200)', async (tier) => {
    const clock = new Clock('2026-11-02T09:00:00.000Z');
    const { get } = await serve({ clock: clock.fn });
    const k = await createKey(t.db, tier);
    const statuses: number[] = [];
    for (let batch = 0; batch < 15; batch++) {
      const rs = await Promise.all(Array.from({ length: 10 }, () => get('/api/v1/communes', k.key)));
      statuses.push(...rs.map((r) => r.status));
    }
    expect(statuses).toHaveLength(150);
    expect(statuses.every((s) => s === 200)).toBe(true);
  });

  it('quotas are per key: two Free keys of the same account count separately', async () => {
    const clock = new Clock('2026-11-07T10:00:00.000Z');
    const { get } = await serve({ clock: clock.fn });
    const email = `shared-${randomBytes(4).toString('hex')}@example.com`;
    const a = await createKey(t.db, 'free', email);
    const b = await createKey(t.db, 'free', email);
    expect(a.id).not.toBe(b.id);
    for (let i = 1; i <= 100; i++) expect(await get('/api/v1/communes', a.key)).toHaveStatus(200);
    expectProblem(await get('/api/v1/communes', a.key), 429, 'quota_exceeded');
    const rb = await get('/api/v1/communes', b.key);
    expect(rb).toHaveStatus(200);
    expect(rb.headers['ratelimit-remaining']).toBe('99');
    expectProblem(await get('/api/v1/communes', a.key), 429, 'quota_exceeded');
  });

  describe('GET /api/v1/stats: no key, limited per client IP', () => {
    const statsConfig = (trust: AppDeps['config']['TRUST_PROXY']): AppDeps['config'] => ({ ...CONFIG, TRUST_PROXY: trust, STATS_RATE_LIMIT_PER_MINUTE: 3 });

    it('the 4th request in a minute is 429 rate_limited with Retry-After', async () => {
      const { get } = await serve({ config: statsConfig(false) });
      for (let i = 1; i <= 3; i++) {
        const res = await get('/api/v1/stats');
        expect(res).toHaveStatus(200);
        expect(res.headers['ratelimit-limit']).toBe('3');
        expect(res.headers['ratelimit-remaining']).toBe(String(3 - i));
      }
      const res = await get('/api/v1/stats');
      expectProblem(res, 429, 'rate_limited');
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      const retry = Number(res.headers['retry-after']);
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
      // A key does not lift the per-IP limit of /stats, and keyed routes are not affected.
      const k = await createKey(t.db, 'free');
      expectProblem(await get('/api/v1/stats', k.key), 429, 'rate_limited');
      expect(await get('/api/v1/communes', k.key)).toHaveStatus(200);
    });

    it('with TRUST_PROXY unset, X-Forwarded-For does not give a fresh budget', async () => {
      const { get } = await serve({ config: statsConfig(false) });
      for (let i = 1; i <= 3; i++) expect(await get('/api/v1/stats', undefined, { 'X-Forwarded-For': `203.0.113.${i}` })).toHaveStatus(200);
      expectProblem(await get('/api/v1/stats', undefined, { 'X-Forwarded-For': '203.0.113.99' }), 429, 'rate_limited');
      expectProblem(await get('/api/v1/stats', undefined, { 'X-Forwarded-For': '198.51.100.7, 203.0.113.98' }), 429, 'rate_limited');
      expectProblem(await get('/api/v1/stats'), 429, 'rate_limited');
    });

    it.each([[['loopback']], [1]] as [AppDeps['config']['TRUST_PROXY']][])(
      'with TRUST_PROXY=%j, different X-Forwarded-For addresses get separate budgets',
      async (trust) => {
        const { get } = await serve({ config: statsConfig(trust) });
        const xff = (ip: string) => ({ 'X-Forwarded-For': ip });
        for (let i = 1; i <= 3; i++) expect(await get('/api/v1/stats', undefined, xff('203.0.113.10'))).toHaveStatus(200);
        expectProblem(await get('/api/v1/stats', undefined, xff('203.0.113.10')), 429, 'rate_limited');
        const other = await get('/api/v1/stats', undefined, xff('203.0.113.11'));
        expect(other).toHaveStatus(200);
        expect(other.headers['ratelimit-remaining']).toBe('2');
        // The proxy itself (loopback, no X-Forwarded-For) has its own budget too.
        expect(await get('/api/v1/stats')).toHaveStatus(200);
        expectNoQuotaHeaders(await get('/api/v1/communes')); // 401 before any quota
      },
    );
  });
});
