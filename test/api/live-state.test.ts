import net from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { LiveState } from '../../src/cache/live-state.js';
import { revokeApiKey, setApiKeyTier } from '../../src/repositories/api-keys.js';
import { takeMarketSnapshot } from '../../src/repositories/market-snapshots.js';
import { useTestContext } from '../helpers/context.js';
import { monitorRedis } from '../helpers/redis-monitor.js';
import { bearer, buildTestApp, createKey, insertListing, silentLogger, TEST_REDIS_URL } from '../helpers/factory.js';

// Keys and the data version kept in memory (src/cache/live-state.ts), invalidated by the
// database's notifications (migrations/20261124000900_notify.ts, src/db/listener.ts).

const t = useTestContext({ redis: true });
const lives: LiveState[] = [];
let a: App;
let b: App;
let liveA: LiveState;

async function liveApp(): Promise<{ app: App; live: LiveState }> {
  const live = new LiveState().start(t.url, silentLogger, 100);
  lives.push(live);
  expect(await live.ready(10_000)).toBe(true);
  const app = await buildTestApp(t.db, { live, redis: t.redis, redisPrefix: t.redisPrefix });
  return { app, live };
}

beforeAll(async () => {
  await insertListing(t.db, { commune: 'Mamer' });
  ({ app: a, live: liveA } = await liveApp());
  ({ app: b } = await liveApp());
});

afterAll(async () => {
  await Promise.all(lives.map((l) => l.close()));
});

const get = (app: App, key: string, path = '/api/v1/listings?commune=Mamer') => request(app).get(path).set(bearer(key));

// Counts the queries the app's knex sends and the Redis commands under the test's prefix
// while `fn` runs.
async function counting(fn: () => Promise<unknown>): Promise<{ queries: string[]; redis: string[] }> {
  const queries: string[] = [];
  const onQuery = (q: { sql: string }) => queries.push(q.sql);
  const redis: string[] = [];
  const monitor = await monitorRedis(TEST_REDIS_URL, (args) => {
    if (args.some((x) => x.includes(t.redisPrefix))) redis.push(args.join(' '));
  });
  t.db.on('query', onQuery);
  try {
    await fn();
    // A marker command through the monitored server: once it is seen, every command sent
    // before it has been seen too.
    const marker = `${t.redisPrefix}marker:${Math.random()}`;
    await t.redis.get(marker);
    await vi.waitFor(() => expect(redis.some((c) => c.includes(marker))).toBe(true), { timeout: 10_000 });
  } finally {
    t.db.off('query', onQuery);
    monitor.close();
  }
  return { queries, redis: redis.filter((c) => !c.includes(':marker:')) };
}

describe('a request whose key and answer are known', () => {
  it('touches neither PostgreSQL nor, for an unlimited tier, Redis', async () => {
    const pro = await createKey(t.db, 'pro');
    expect(await get(a, pro.key)).toHaveStatus(200); // verifies the key, computes the page
    const first = await counting(async () => expect(await get(a, pro.key)).toHaveStatus(200));
    expect(first.queries).toEqual([]);
    expect(first.redis).toEqual([]);
  });

  it('counts a Free key in Redis without asking PostgreSQL', async () => {
    const free = await createKey(t.db, 'free');
    expect(await get(a, free.key)).toHaveStatus(200);
    const seen = await counting(async () => {
      const res = await get(a, free.key);
      expect(res).toHaveStatus(200);
      expect(res.headers['ratelimit-remaining']).toBe('98');
    });
    expect(seen.queries).toEqual([]);
    expect(seen.redis.length).toBeGreaterThan(0);
  });

  it('answers market prices and history from memory, with no query (the snapshots\' version is kept too)', async () => {
    const pro = await createKey(t.db, 'pro');
    for (const path of ['/api/v1/market/prices?commune=Mamer&rooms=2', '/api/v1/market/history?commune=Mamer&interval=week']) {
      expect(await get(a, pro.key, path)).toHaveStatus(200);
      const seen = await counting(async () => expect(await get(a, pro.key, path)).toHaveStatus(200));
      expect({ path, queries: seen.queries }).toEqual({ path, queries: [] });
    }
  });

  it('without a live state, every request asks PostgreSQL (the fallback)', async () => {
    const plain = await buildTestApp(t.db, { redis: t.redis, redisPrefix: t.redisPrefix });
    const pro = await createKey(t.db, 'pro');
    expect(await get(plain, pro.key)).toHaveStatus(200);
    const seen = await counting(async () => expect(await get(plain, pro.key)).toHaveStatus(200));
    expect(seen.queries.length).toBe(1);
  });
});

describe('changes reach every instance', () => {
  it('a revoked key is refused by both instances', async () => {
    const pro = await createKey(t.db, 'pro');
    for (const app of [a, b]) expect(await get(app, pro.key)).toHaveStatus(200);
    for (const app of [a, b]) expect((await counting(() => get(app, pro.key))).queries).toEqual([]); // both hold it
    await revokeApiKey(t.db, pro.id, new Date());
    for (const app of [a, b]) await vi.waitFor(async () => expect(await get(app, pro.key)).toHaveStatus(401), { timeout: 10_000, interval: 20 });
  });

  it('a tier change is seen by both instances', async () => {
    const key = await createKey(t.db, 'pro');
    for (const app of [a, b]) expect((await get(app, key.key)).headers['ratelimit-limit']).toBeUndefined();
    await setApiKeyTier(t.db, key.id, 'free');
    for (const app of [a, b]) await vi.waitFor(async () => expect((await get(app, key.key)).headers['ratelimit-limit']).toBe('100'), { timeout: 10_000, interval: 20 });
  });

  it('a write to the listings is seen by both instances (the data version moves)', async () => {
    const pro = await createKey(t.db, 'pro');
    const before = (await get(a, pro.key, '/api/v1/listings?commune=Strassen')).body.meta.total;
    for (const app of [a, b]) expect((await get(app, pro.key, '/api/v1/listings?commune=Strassen')).body.meta.total).toBe(before);
    await insertListing(t.db, { commune: 'Strassen' });
    for (const app of [a, b]) {
      await vi.waitFor(async () => expect((await get(app, pro.key, '/api/v1/listings?commune=Strassen')).body.meta.total).toBe(before + 1), { timeout: 10_000, interval: 20 });
    }
  });

  it('a market snapshot taken is seen in the history of both instances', async () => {
    const pro = await createKey(t.db, 'pro');
    const path = '/api/v1/market/history?commune=Mamer&interval=week';
    for (const app of [a, b]) expect(await get(app, pro.key, path)).toHaveStatus(200); // cached by both
    const takenAt = new Date(Date.now() - 1000);
    await takeMarketSnapshot(t.db, { day: takenAt.toISOString().slice(0, 10), takenAt });
    for (const app of [a, b]) {
      await vi.waitFor(async () => expect((await get(app, pro.key, path)).body.meta.last_snapshot_at).toBe(takenAt.toISOString()), { timeout: 10_000, interval: 20 });
    }
  });

  it('a key changed while its lookup ran is not kept', async () => {
    const live = new LiveState();
    live.connected({ data: 1, snapshots: 1 });
    live.alive(performance.now(), { data: 1, snapshots: 1 });
    const token = live.lookupToken();
    live.notification('lf_api_keys', 'key_0000000000000000');
    live.remember('h', { id: 'key_1111111111111111', account_id: 1, tier: 'pro' }, token);
    expect(live.key('h')).toBeUndefined();
    live.remember('h', { id: 'key_1111111111111111', account_id: 1, tier: 'pro' }, live.lookupToken());
    expect(live.key('h')).toBeDefined();
  });
});

describe('when the listener is down', () => {
  it('answers from the database (a revocation is refused at once), and resyncs on reconnect', async () => {
    const pro = await createKey(t.db, 'pro');
    expect(await get(a, pro.key)).toHaveStatus(200);
    expect((await counting(() => get(a, pro.key))).queries).toEqual([]);
    const killed = await t.db.raw(`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = ? AND application_name = 'lux-listings-feed listener'`, [t.name]);
    expect(killed.rows.length).toBe(2);
    await vi.waitFor(() => expect(liveA.fresh()).toBe(false), { timeout: 10_000, interval: 10 });
    // Not held any more: asked of the database.
    const asked = await counting(() => get(a, pro.key));
    expect(asked.queries.some((q) => q.includes('api_keys'))).toBe(true);
    // Back: connected again, knowing nothing from before.
    await vi.waitFor(() => expect(liveA.fresh()).toBe(true), { timeout: 15_000, interval: 20 });
    expect(liveA.key((await import('../../src/auth/api-key.js')).hashApiKey(pro.key))).toBeUndefined();
    await revokeApiKey(t.db, pro.id, new Date());
    expect(await get(a, pro.key)).toHaveStatus(401);
  });
});

// Stop 45, an outside probe: a proxy that stopped forwarding on the listener's open connection
// (a flow dropped by a firewall or NAT) left its heartbeat unanswered for good; the next beats
// were skipped as still running, the connection was never replaced, and the process asked the
// database on every request (4.7 times the transactions) with nothing logged.
describe('a listener connection that stops answering without closing', () => {
  it('is taken for dead within its bound, replaced, and what is held is trusted again', async () => {
    const upstream = new URL(t.url);
    const pairs: [net.Socket, net.Socket][] = [];
    const proxy = net.createServer((client) => {
      const server = net.connect(Number(upstream.port || 5432), upstream.hostname);
      pairs.push([client, server]);
      client.pipe(server).pipe(client);
      const end = () => { client.destroy(); server.destroy(); };
      client.on('error', end);
      server.on('error', end);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const via = new URL(t.url);
    via.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
    const warnings: string[] = [];
    const logger = Object.assign(Object.create(silentLogger), { warn: (o: unknown, m?: string) => warnings.push(m ?? String(o)) });
    const live = new LiveState().start(via.toString(), logger, 100);
    lives.push(live);
    try {
      expect(await live.ready(10_000)).toBe(true);
      await vi.waitFor(() => expect(live.fresh()).toBe(true), { timeout: 10_000, interval: 20 });
      // Frozen: what is open carries nothing either way, and stays open; new connections pass.
      const frozen = pairs.splice(0);
      for (const [c, s] of frozen) {
        c.unpipe();
        s.unpipe();
        c.pause();
        s.pause();
      }
      await vi.waitFor(() => expect(live.fresh()).toBe(false), { timeout: 10_000, interval: 20 });
      // Replaced over a new connection within the bound (3 s) and the back-off.
      await vi.waitFor(() => expect(pairs.length).toBeGreaterThan(0), { timeout: 15_000, interval: 50 });
      await vi.waitFor(() => expect(live.fresh()).toBe(true), { timeout: 15_000, interval: 20 });
      expect(warnings.some((w) => /heartbeat failed; reconnecting/.test(w))).toBe(true);
      const pro = await createKey(t.db, 'pro');
      const app = await buildTestApp(t.db, { live, redis: t.redis, redisPrefix: t.redisPrefix });
      expect(await get(app, pro.key)).toHaveStatus(200);
      await revokeApiKey(t.db, pro.id, new Date());
      await vi.waitFor(async () => expect(await get(app, pro.key)).toHaveStatus(401), { timeout: 2_000, interval: 50 });
      for (const [c, s] of frozen) {
        c.destroy();
        s.destroy();
      }
    } finally {
      await live.close();
      for (const [c, s] of pairs) {
        c.destroy();
        s.destroy();
      }
      proxy.close();
    }
  });
});

// An outside probe: 5,000 requests at once held the event loop up past the heartbeat's 1 s;
// every request then looked its key up in PostgreSQL, and 4,903 of them were 503 (the pool's
// connections all taken) with the database healthy.
describe('an event loop held up longer than the heartbeat bound', () => {
  it('keeps what is held in use (the heartbeat is read as late as the database would be)', async () => {
    const live = new LiveState().start(t.url, silentLogger, 100);
    lives.push(live);
    expect(await live.ready(10_000)).toBe(true);
    await vi.waitFor(() => expect(live.fresh()).toBe(true), { timeout: 10_000, interval: 20 });
    const end = performance.now() + 1500;
    while (performance.now() < end); // a burst of requests, 1.5 s of work on the loop
    // The next turn's timers run before its sockets are read (the heartbeat's answer with them).
    const freshAfter = await new Promise<boolean>((resolve) => setTimeout(() => resolve(live.fresh()), 0));
    expect(freshAfter).toBe(true);
    // A listener that stops answering is still found out: closed, nothing is trusted.
    await live.close();
    expect(live.fresh()).toBe(false);
  });
});
