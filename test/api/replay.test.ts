import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { KeyUsageTracker } from '../../src/auth/key-usage.js';
import { LiveState } from '../../src/cache/live-state.js';
import type { AnswerReplay } from '../../src/http/replay.js';
import { revokeApiKey, setApiKeyTier } from '../../src/repositories/api-keys.js';
import { takeMarketSnapshot } from '../../src/repositories/market-snapshots.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, buildTestApp, createKey, insertListing, silentLogger } from '../helpers/factory.js';

// Repeated answers sent again without Express (src/http/replay.ts): the same bytes and
// headers as the full path, and never once what they depend on has changed.

const t = useTestContext({ redis: true });
const lives: LiveState[] = [];
let now = new Date('2026-11-20T12:00:00.000Z');
let app: App;
let usage: KeyUsageTracker;

async function liveApp(overrides: Parameters<typeof buildTestApp>[1] = {}): Promise<App> {
  const live = new LiveState().start(t.url, silentLogger, 100);
  lives.push(live);
  expect(await live.ready(10_000)).toBe(true);
  return buildTestApp(t.db, { live, redis: t.redis, redisPrefix: t.redisPrefix, clock: () => now, ...overrides });
}

const replayOf = (a: App) => a.locals.replay as AnswerReplay;

beforeAll(async () => {
  for (let i = 0; i < 30; i++) await insertListing(t.db, { commune: 'Mamer', title: `Flat ${i} in Mamer with a long enough title to pass a kilobyte` });
  await takeMarketSnapshot(t.db, { day: '2026-11-19', takenAt: new Date('2026-11-19T03:00:00.000Z') });
  usage = new KeyUsageTracker(t.db, silentLogger, 60_000);
  app = await liveApp({ keyUsage: usage, metrics: true });
});

afterAll(async () => {
  await Promise.all(lives.map((l) => l.close()));
});

// Everything but the headers that differ per response anyway.
function comparable(res: request.Response) {
  const { date, 'x-request-id': _id, ...headers } = res.headers;
  return { status: res.status, headers, text: res.text };
}

const get = (a: App, key: string, path: string, headers: Record<string, string> = {}) => request(a).get(path).set(bearer(key)).set(headers);

describe('a repeated request of an unlimited key', () => {
  const paths = ['/api/v1/listings?commune=Mamer&per_page=25', '/api/v1/market/prices?commune=Mamer', '/api/v1/market/history?commune=Mamer'];

  for (const encoding of ['gzip', 'br', 'identity']) {
    it(`gets the bytes and headers the full path sent (${encoding})`, async () => {
      const pro = await createKey(t.db, 'pro');
      const page = await get(app, pro.key, paths[0]);
      const byId = `/api/v1/listings/${page.body.data[0].id}`;
      for (const path of [...paths, byId]) {
        const first = await get(app, pro.key, path, { 'Accept-Encoding': encoding });
        expect(first).toHaveStatus(200);
        const served = replayOf(app).served;
        const again = await get(app, pro.key, path, { 'Accept-Encoding': encoding });
        expect(replayOf(app).served, path).toBe(served + 1);
        expect(comparable(again)).toEqual(comparable(first));
        if (encoding !== 'identity' && Number(first.headers['content-length']) >= 1024) expect(again.headers['content-encoding']).toBe(encoding);
      }
    });
  }

  it("has its own X-Request-Id: the client's when sane, else a new one", async () => {
    const pro = await createKey(t.db, 'pro');
    const path = paths[1];
    await get(app, pro.key, path);
    const served = replayOf(app).served;
    const echoed = await get(app, pro.key, path, { 'X-Request-Id': 'client-req-42' });
    const fresh1 = await get(app, pro.key, path, { 'X-Request-Id': 'not sane\u00e9' });
    const fresh2 = await get(app, pro.key, path);
    expect(replayOf(app).served).toBe(served + 3);
    expect(echoed.headers['x-request-id']).toBe('client-req-42');
    expect(fresh1.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(fresh2.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(fresh1.headers['x-request-id']).not.toBe(fresh2.headers['x-request-id']);
  });

  it("records the key's use, as the full path does", async () => {
    const pro = await createKey(t.db, 'pro');
    await get(app, pro.key, paths[1]);
    await usage.flush();
    await t.db('api_keys').where({ id: pro.id }).update({ last_used_at: null });
    now = new Date('2026-11-20T12:30:00.000Z');
    const served = replayOf(app).served;
    await get(app, pro.key, paths[1]);
    expect(replayOf(app).served).toBe(served + 1);
    await usage.flush();
    const row = await t.db('api_keys').where({ id: pro.id }).first('last_used_at');
    expect(new Date(row.last_used_at).toISOString()).toBe('2026-11-20T12:30:00.000Z');
    now = new Date('2026-11-20T12:00:00.000Z');
  });

  it('is counted in the request metrics under the route the full path matched', async () => {
    const pro = await createKey(t.db, 'pro');
    const count = async () => {
      const text = await app.locals.metrics.registry.metrics();
      const line = text.split('\n').find((l) => l.startsWith('http_requests_total{') && l.includes('route="/api/v1/market/prices"') && l.includes('status="200"'));
      return Number(line?.split(' ').pop() ?? 0);
    };
    await get(app, pro.key, paths[1]);
    const before = await count();
    const served = replayOf(app).served;
    for (let i = 0; i < 3; i++) await get(app, pro.key, paths[1]);
    expect(replayOf(app).served).toBe(served + 3);
    expect(await count()).toBe(before + 3);
  });
});

describe('a key over its daily quota', () => {
  const path = '/api/v1/market/prices?commune=Mamer';
  // A Free key whose 100 requests of the day are used (its counter, as the API keeps it).
  async function exhausted() {
    const free = await createKey(t.db, 'free');
    await t.redis.set(`${t.redisPrefix}quota:${free.id}:${now.toISOString().slice(0, 10)}`, '100', 'PX', 86_400_000);
    return free;
  }
  const rejections = async () => {
    const text = await app.locals.metrics.registry.metrics();
    return Number(text.split('\n').find((l) => l.startsWith('quota_rejections_total{') && l.includes('daily_quota'))?.split(' ').pop() ?? 0);
  };

  it('gets the refusal the full path sent, with the seconds to 00:00 UTC of its own time, and is counted as a rejection', async () => {
    now = new Date('2026-11-20T12:00:00.500Z');
    const free = await exhausted();
    const id = { 'X-Request-Id': 'same-request-id' };
    const first = await get(app, free.key, path, id);
    expect(first).toHaveStatus(429);
    expect(first.body).toMatchObject({ code: 'quota_exceeded', request_id: 'same-request-id' });
    const served = replayOf(app).served;
    const before = await rejections();
    const again = await get(app, free.key, path, id);
    expect(replayOf(app).served).toBe(served + 1);
    expect(comparable(again)).toEqual(comparable(first));
    expect(await rejections()).toBe(before + 1);
    now = new Date('2026-11-20T12:00:01.100Z');
    const later = await get(app, free.key, path);
    expect(replayOf(app).served).toBe(served + 2);
    expect(later.headers['retry-after']).toBe('43199');
    expect(later.headers['ratelimit-reset']).toBe('43199');
    expect(later.body.request_id).toBe(later.headers['x-request-id']);
    // No ETag on a refusal, sent by either path (its body names the request: src/http/conditional.ts).
    for (const res of [first, again, later]) expect(res.headers.etag).toBeUndefined();
    now = new Date('2026-11-20T12:00:00.000Z');
  });

  it('goes to the full path once the hold is over, and is let through when the key is upgraded or refused when revoked', async () => {
    const free = await exhausted();
    expect(await get(app, free.key, path)).toHaveStatus(429);
    now = new Date(now.getTime() + 1_000);
    const served = replayOf(app).served;
    expect(await get(app, free.key, path)).toHaveStatus(429);
    expect(replayOf(app).served).toBe(served);
    now = new Date('2026-11-20T12:00:00.000Z');

    const up = await exhausted();
    expect(await get(app, up.key, path)).toHaveStatus(429);
    await setApiKeyTier(t.db, up.id, 'pro');
    await vi.waitFor(async () => expect(await get(app, up.key, path)).toHaveStatus(200), { timeout: 1_000, interval: 10 });

    const gone = await exhausted();
    expect(await get(app, gone.key, path)).toHaveStatus(429);
    await revokeApiKey(t.db, gone.id, new Date());
    await vi.waitFor(async () => expect(await get(app, gone.key, path)).toHaveStatus(401), { timeout: 1_000, interval: 10 });
  });
});

describe('GET /api/v1/stats (no key), under the per-IP limit', () => {
  // Its own app: 3 requests a minute per client, clients told apart by X-Forwarded-For from loopback.
  async function statsApp() {
    const prefix = `${t.redisPrefix}stats-${Math.random().toString(36).slice(2)}:`;
    const a = await liveApp({ redisPrefix: prefix, config: { PUBLIC_BASE_URL: 'https://api.example.test', TRUST_PROXY: ['loopback'], STATS_RATE_LIMIT_PER_MINUTE: 3, PAGES_RATE_LIMIT_PER_MINUTE: 100_000 } });
    return { a, count: async (ip: string) => Number(await t.redis.get(`${prefix}stats-ip:${ip}`)) };
  }
  const stats = (a: App, ip: string, headers: Record<string, string> = {}) => request(a).get('/api/v1/stats').set({ 'X-Forwarded-For': ip, ...headers });

  it('gets the answer the full path sent, each request counted once per client, the 4th refused', async () => {
    const { a, count } = await statsApp();
    const first = await stats(a, '203.0.113.5');
    expect(first).toHaveStatus(200);
    expect(first.headers['ratelimit-remaining']).toBe('2');
    const served = replayOf(a).served;
    const second = await stats(a, '203.0.113.5');
    const third = await stats(a, '203.0.113.5', { Authorization: 'Bearer whatever' });
    expect(replayOf(a).served).toBe(served + 2);
    const { 'ratelimit-remaining': r1, 'ratelimit-reset': _r1, ...same1 } = comparable(first).headers;
    const { 'ratelimit-remaining': r2, 'ratelimit-reset': _r2, ...same2 } = comparable(second).headers;
    expect(same2).toEqual(same1);
    expect(second.text).toBe(first.text);
    expect([r1, r2, third.headers['ratelimit-remaining']]).toEqual(['2', '1', '0']);
    expect(Number(second.headers['ratelimit-reset'])).toBeGreaterThan(0);
    expect(Number(second.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
    expect(await count('203.0.113.5')).toBe(3);
    const fourth = await stats(a, '203.0.113.5');
    expect(fourth).toHaveStatus(429);
    expect(fourth.body.code).toBe('rate_limited');
    expect(await count('203.0.113.5')).toBe(4);
    // Another client has its own count.
    const other = await stats(a, '198.51.100.9');
    expect(other).toHaveStatus(200);
    expect(other.headers['ratelimit-remaining']).toBe('2');
    expect(replayOf(a).served).toBe(served + 3);
  });
});

describe('what goes through the full path', () => {
  it('a conditional request (304) and a HEAD', async () => {
    const pro = await createKey(t.db, 'pro');
    const path = '/api/v1/market/prices?commune=Mamer';
    const first = await get(app, pro.key, path);
    const served = replayOf(app).served;
    expect(await get(app, pro.key, path, { 'If-None-Match': first.headers.etag })).toHaveStatus(304);
    expect(await request(app).head(path).set(bearer(pro.key))).toHaveStatus(200);
    expect(replayOf(app).served).toBe(served);
  });

  it('a Free key: every request counted against its quota', async () => {
    const free = await createKey(t.db, 'free');
    const path = '/api/v1/market/prices?commune=Mamer';
    const served = replayOf(app).served;
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) remaining.push((await get(app, free.key, path)).headers['ratelimit-remaining']);
    expect(remaining).toEqual(['99', '98', '97']);
    expect(replayOf(app).served).toBe(served);
  });

  it('a revoked key: refused from the next request on', async () => {
    const pro = await createKey(t.db, 'pro');
    const path = '/api/v1/market/prices?commune=Mamer';
    await get(app, pro.key, path);
    expect(await get(app, pro.key, path)).toHaveStatus(200);
    await revokeApiKey(t.db, pro.id, new Date());
    await vi.waitFor(async () => expect(await get(app, pro.key, path)).toHaveStatus(401), { timeout: 1_000, interval: 10 });
  });

  it('a new data version: the answer is computed again', async () => {
    const pro = await createKey(t.db, 'pro');
    const path = '/api/v1/listings?commune=Mamer&per_page=1';
    const before = (await get(app, pro.key, path)).body.meta.total;
    expect((await get(app, pro.key, path)).body.meta.total).toBe(before);
    await insertListing(t.db, { commune: 'Mamer' });
    await vi.waitFor(async () => expect((await get(app, pro.key, path)).body.meta.total).toBe(before + 1), { timeout: 10_000, interval: 20 });
  });

  it("the market history after midnight UTC (its default range ends today), and after a new snapshot", async () => {
    const pro = await createKey(t.db, 'pro');
    const path = '/api/v1/market/history?commune=Mamer&interval=week';
    now = new Date('2026-11-20T23:59:59.000Z');
    const first = await get(app, pro.key, path);
    expect(first.body.meta.to).toBe('2026-11-20');
    const served = replayOf(app).served;
    expect((await get(app, pro.key, path)).body.meta.to).toBe('2026-11-20');
    expect(replayOf(app).served).toBe(served + 1);
    now = new Date('2026-11-21T00:00:00.000Z');
    expect((await get(app, pro.key, path)).body.meta.to).toBe('2026-11-21');
    expect(replayOf(app).served).toBe(served + 1);
    const lastSnapshot = async () => (await get(app, pro.key, path)).body.data.at(-1).snapshot_date;
    expect(await lastSnapshot()).toBe('2026-11-19');
    await takeMarketSnapshot(t.db, { day: '2026-11-21', takenAt: now });
    await vi.waitFor(async () => expect(await lastSnapshot()).toBe('2026-11-21'), { timeout: 10_000, interval: 20 });
    now = new Date('2026-11-20T12:00:00.000Z');
  });
});

describe('when it is off, and with request logs', () => {
  it('is off without the keys held in memory', async () => {
    expect((await buildTestApp(t.db, { redis: t.redis, redisPrefix: t.redisPrefix })).locals.replay).toBeUndefined();
  });

  it('writes the log line of each answer it sends, with the fields and message of the full path', async () => {
    const pro = await createKey(t.db, 'pro');
    const live = new LiveState().start(t.url, silentLogger, 100);
    lives.push(live);
    expect(await live.ready(10_000)).toBe(true);
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({ write: (c, _e, done) => (lines.push(...String(c).split('\n').filter(Boolean).map((l) => JSON.parse(l))), done()) });
    const logging = await buildTestApp(t.db, { live, redis: t.redis, redisPrefix: t.redisPrefix, logger: pino({ level: 'info' }, sink) });
    const path = '/api/v1/market/prices?commune=Mamer';
    const full = await get(logging, pro.key, path);
    const served = replayOf(logging).served;
    const replayed = await get(logging, pro.key, path);
    expect(replayOf(logging).served).toBe(served + 1);
    await vi.waitFor(() => expect(lines.filter((l) => l.req)).toHaveLength(2));
    const [a, b] = lines.filter((l) => l.req).map(({ time: _t, responseTime, msg, ...rest }) => ({ ...rest, responseTime: typeof responseTime, msg: String(msg).replace(/ \d+ms$/, '') }));
    expect(a).toMatchObject({ req: { method: 'GET', path: '/api/v1/market/prices' }, res: { status: 200 }, key_id: pro.id, request_id: full.headers['x-request-id'], msg: 'GET /api/v1/market/prices 200' });
    expect(b).toEqual({ ...a, request_id: replayed.headers['x-request-id'] });
  });
});

describe('two Authorization headers', () => {
  it('are refused with 401, on the replayed path as on the full one, never answered for one of the keys', async () => {
    const pro = await createKey(t.db, 'pro');
    const free = await createKey(t.db, 'free');
    const path = '/api/v1/listings?commune=Mamer&per_page=3';
    // Answered twice: the answer is now one the replay sends again.
    for (let i = 0; i < 2; i++) expect(await get(app, pro.key, path)).toHaveStatus(200);
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      for (const keys of [[pro.key, free.key], [free.key, pro.key], [pro.key, pro.key]]) {
        const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = httpRequest({ host: '127.0.0.1', port, path, headers: ['Host', '127.0.0.1', ...keys.flatMap((k) => ['Authorization', `Bearer ${k}`])] }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (text += c));
            res.on('end', () => resolve({ status: res.statusCode!, body: text }));
          });
          req.on('error', reject);
          req.end();
        });
        expect(status).toBe(401);
        expect(JSON.parse(body)).toMatchObject({ code: 'unauthorized', detail: 'Send one Authorization header, not several' });
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
