import type { Redis } from 'ioredis';
import pino from 'pino';
import request, { type Response } from 'supertest';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { LiveState } from '../../src/cache/live-state.js';
import type { AnswerReplay } from '../../src/http/replay.js';
import type { StoreHealth } from '../../src/rate-limit/store.js';
import { createRedis, waitForRedis } from '../../src/redis.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, buildTestApp, createKey, silentLogger } from '../helpers/factory.js';
import { freePort, startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { buildWebApp, pageToken, PASSWORD, signUp, uniqueEmail } from '../web/helpers.js';

// docs/spec/contract.md section 6: "If Redis is unreachable, requests are still served (quota not
// enforced, an error logged and counted); Redis trouble never turns into a 5xx or a hung
// request." Run against a throwaway redis-server that this file starts, kills, pauses
// (SIGSTOP) and restarts on a free port; the app's client comes from createRedis() with
// the production fast-fail settings (timeoutMs 300).
//
// What is asserted is the mechanism, never a duration (the machine running the suite may be
// busy): the stores' health counters (src/rate-limit/store.ts) say how many operations were
// tried, how many failed open (the request served without limiting) and how many of those
// timed out rather than failing at once. A Redis that is down fails every operation at once
// (no timeout); against a hung one each operation times out, ended at the latest by the
// store's one deadline, the client's command timeout plus 50 ms (not the two or three command
// timeouts rate-limit-redis's EVALSHA, SCRIPT LOAD, EVALSHA retry would add up to). "Never
// hung" is an outer bound of 30 s on each request, far above anything the mechanism allows.

const TIMEOUT_MS = 300;
const DEADLINE_MS = TIMEOUT_MS + 50;
const HANG_BOUND_MS = 30_000;
const WAIT = { timeout: 30_000, interval: 50 };
const t = useTestContext();
const servers: RedisServer[] = [];
const clients: Redis[] = [];

// Store errors are counted and logged (throttled) through the service's logger; nothing
// may be written to the console once per request (express-rate-limit's default logger).
let consoleLines: string[] = [];
beforeEach(() => {
  consoleLines = [];
  for (const m of ['error', 'warn'] as const) {
    vi.spyOn(console, m).mockImplementation((...args: unknown[]) => void consoleLines.push(args.map(String).join(' ')));
  }
});
afterEach(() => {
  vi.restoreAllMocks();
  // Whatever happened, no redis-server stays paused.
  for (const s of servers) s.resume();
});
function expectQuietConsole(): void {
  expect(consoleLines.filter((l) => /rate-limit|redis/i.test(l))).toEqual([]);
}

afterAll(async () => {
  for (const c of clients) c.disconnect();
  for (const s of servers) {
    s.resume();
    await s.stop();
  }
});

async function startRedis(port?: number): Promise<RedisServer> {
  const s = await startRedisServer(port);
  servers.push(s);
  return s;
}

// A pino logger whose lines the test can read.
function captureLogger() {
  const lines: { level: number; msg: string; err?: { message?: string }; [k: string]: unknown }[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { logger, lines };
}

async function setup(url: string, opts: { waitReady: boolean; live?: LiveState }) {
  const { logger, lines } = captureLogger();
  const redis = createRedis(url, { timeoutMs: TIMEOUT_MS, logger });
  clients.push(redis);
  if (opts.waitReady) await vi.waitFor(async () => expect(await waitForRedis(redis, 1000)).toBe(true), WAIT);
  const app = (await buildTestApp(t.db, { redis, logger, live: opts.live })) as App;
  const { server } = await t.listen(app);
  const agent = request(server);
  const free = await createKey(t.db, 'free');
  // A Pro key is never counted: its requests make no store operation.
  const pro = await createKey(t.db, 'pro');
  const get = (key = free.key, path = '/api/v1/communes') => agent.get(path).set(bearer(key)).timeout(HANG_BOUND_MS);
  const health: StoreHealth = app.locals.storeHealth;
  // What the counters did since a snapshot.
  const since = (before: StoreHealth) => ({
    operations: health.operations - before.operations,
    errors: health.errors - before.errors,
    timeouts: health.timeouts - before.timeouts,
  });
  // Polls until a Free request is counted again (the store answered), however long the
  // client's reconnection takes on a busy machine.
  const untilCounted = async (): Promise<Response> =>
    vi.waitFor(async () => {
      const res = await get();
      expect(res).toHaveStatus(200);
      expect(res.headers['ratelimit-remaining'], 'quota enforcement resumed').toBeDefined();
      return res;
    }, WAIT);
  return { app, redis, lines, get, health, since, untilCounted, free, pro };
}

function expectServedUnlimited(res: Response, label?: string): void {
  expect(res, label).toHaveStatus(200);
  // Quota not enforced while the store is unavailable: no quota headers, no 429.
  expect(res.headers['ratelimit-remaining'], label).toBeUndefined();
}

describe('Redis trouble never turns into a 5xx or a hung request', () => {
  it('Redis stopped while the app runs: keyed requests stay 200, each failing open at once (no timeout), logged and counted; limiting resumes when Redis is back', async () => {
    const srv = await startRedis();
    const { app, redis, lines, get, health, since, untilCounted, pro } = await setup(srv.url, { waitReady: true });

    // Healthy: counted and limited, one store operation a request, none failing.
    for (let i = 1; i <= 3; i++) {
      const res = await get();
      expect(res).toHaveStatus(200);
      expect(res.headers['ratelimit-remaining']).toBe(String(100 - i));
    }
    expect(health).toMatchObject({ operations: 3, errors: 0, timeouts: 0 });

    await srv.stop();
    // The very first request may race the socket's close (the client may still send its
    // command into the dying connection): served either way.
    expect(await get(), 'first request after the kill').toHaveStatus(200);
    const afterFirst = { ...health };
    for (let i = 0; i < 30; i++) {
      expectServedUnlimited(await get(), `request ${i} after the kill`);
      expect(await get(pro.key), `Pro request ${i}`).toHaveStatus(200);
    }
    // Each Free request tried the store once and failed open; none waited for the deadline:
    // with the client disconnected and no offline queue, a command fails at once. The Pro
    // requests made no store operation at all.
    expect(since(afterFirst)).toEqual({ operations: 30, errors: 30, timeouts: 0 });
    expect(health.lastError).toBeInstanceOf(Date);

    // The no-key route, limited per address by its own store: still served, and counted.
    const beforeStats = { ...health };
    expect(await request(app).get('/api/v1/stats').timeout(HANG_BOUND_MS)).toHaveStatus(200);
    expect(since(beforeStats)).toEqual({ operations: 1, errors: 1, timeouts: 0 });

    expect(lines.some((l) => l.level >= 50 && /rate-limit store unavailable/.test(l.msg))).toBe(true);
    // The client logs its own connection errors too (on its first reconnection attempt).
    await vi.waitFor(() => expect(lines.some((l) => l.level >= 50 && /redis error/.test(l.msg))).toBe(true), WAIT);
    // Logged, not flooded: the store error is logged at most once per 10 s (a very slow
    // machine may cross one 10 s boundary during the 31 requests).
    expect(lines.filter((l) => /rate-limit store unavailable/.test(l.msg)).length).toBeLessThanOrEqual(3);
    expect(lines.some((l) => l.level >= 50 && /unhandled error/.test(l.msg))).toBe(false);
    expectQuietConsole();

    // Redis back on the same port (an empty server: scripts must be loaded again).
    const again = await startRedis(srv.port);
    expect(again.port).toBe(srv.port);
    const resumed = await untilCounted();
    expect(redis.status).toBe('ready');
    // The new server starts from zero for this key.
    expect(resumed.headers['ratelimit-remaining']).toBe('99');
  });

  // A Redis out of memory under `noeviction` answers PING but refuses every write: the quota
  // counters cannot count, so quotas go unenforced as with Redis down, and /readyz says so (an
  // outside probe found it "ok" meanwhile, since it only sent PING).
  it('Redis refusing writes (out of memory): requests are served unlimited, /readyz is 503 with redis "refuses_writes"; both recover when it accepts writes again', async () => {
    const srv = await startRedis();
    const { app, redis, get, health, since, untilCounted } = await setup(srv.url, { waitReady: true });
    const ready = () => request(app).get('/readyz').timeout(HANG_BOUND_MS);
    expect(await get()).toHaveStatus(200);
    const healthy = await ready();
    expect(healthy).toHaveStatus(200);
    expect(healthy.body.checks).toEqual({ database: 'ok', redis: 'ok' });

    await redis.config('SET', 'maxmemory-policy', 'noeviction');
    await redis.config('SET', 'maxmemory', '1');
    expect(await redis.ping()).toBe('PONG');
    const before = { ...health };
    for (let i = 0; i < 5; i++) expectServedUnlimited(await get(), `request ${i} while Redis refuses writes`);
    expect(since(before)).toEqual({ operations: 5, errors: 5, timeouts: 0 });
    const refusing = await ready();
    expect(refusing).toHaveStatus(503);
    expect(refusing.body).toMatchObject({ status: 'unavailable', checks: { database: 'ok', redis: 'refuses_writes' } });

    await redis.config('SET', 'maxmemory', '0');
    await untilCounted();
    const back = await ready();
    expect(back).toHaveStatus(200);
    expect(back.body.checks.redis).toBe('ok');
  });

  it('Redis hung (SIGSTOP): requests stay 200, each store operation timing out, the first one by the store\'s deadline; limiting continues after SIGCONT', async () => {
    const srv = await startRedis();
    const { lines, get, health, since, untilCounted, free, pro } = await setup(srv.url, { waitReady: true });
    const first = await get();
    expect(first).toHaveStatus(200);
    expect(first.headers['ratelimit-remaining']).toBe('99');
    expect(health).toMatchObject({ operations: 1, errors: 0, timeouts: 0 });

    srv.pause();
    try {
      const before = { ...health };
      for (let i = 0; i < 5; i++) expectServedUnlimited(await get(), `sequential request ${i} while Redis is hung`);
      // Each operation failed open by a timeout: the Redis connection is up but nothing answers.
      expect(since(before)).toEqual({ operations: 5, errors: 5, timeouts: 5 });
      // The first one (its EVALSHA timed out, rate-limit-redis then sent SCRIPT LOAD) was ended
      // by the store's deadline, about one command timeout: a single wait, however
      // rate-limit-redis retries underneath. (Later ones may fail by the client's own timeout
      // first: rate-limit-redis keeps the failed SCRIPT LOAD and retries it at once.)
      const storeErrors = lines.filter((l) => /rate-limit store unavailable/.test(l.msg));
      expect(storeErrors.length).toBeGreaterThan(0);
      expect(storeErrors[0].err?.message).toBe(`rate-limit store did not answer within ${DEADLINE_MS} ms`);

      // Concurrent requests while hung, beside as many Pro requests: each Free one times out;
      // the Pro ones make no store operation.
      const concurrent = { ...health };
      const [frees, pros] = await Promise.all([
        Promise.all(Array.from({ length: 10 }, () => get(free.key))),
        Promise.all(Array.from({ length: 10 }, () => get(pro.key))),
      ]);
      frees.forEach((res, i) => expectServedUnlimited(res, `concurrent request ${i} while Redis is hung`));
      for (const res of pros) expect(res).toHaveStatus(200);
      expect(since(concurrent)).toEqual({ operations: 10, errors: 10, timeouts: 10 });
      expectQuietConsole();
    } finally {
      srv.resume();
    }

    // Back to normal: counted again. Every increment of a request served without limiting
    // that Redis applied when it resumed (the client's timeout or the store's deadline passed
    // first) is taken back once Redis answers: wait for those to settle. Then the key's count
    // is exactly its requests that were limited: the first, and the one that finds it counted
    // again (an outside probe: 10 of 30 served while hung stayed charged).
    await vi.waitFor(() => expect(health.late).toBe(0), WAIT);
    const back = await untilCounted();
    const remaining = Number(back.headers['ratelimit-remaining']);
    expect(remaining).toBe(98);
    const healthy = { ...health };
    for (let i = 1; i <= 5; i++) {
      const res = await get();
      expect(res).toHaveStatus(200);
      expect(res.headers['ratelimit-remaining']).toBe(String(remaining - i));
    }
    expect(since(healthy)).toEqual({ operations: 5, errors: 0, timeouts: 0 });
  });

  // An outside probe (stop 42): after a 10 s hang a key's count read -35 and answers said
  // RateLimit-Remaining 195 of 100. An increment past the store's deadline was taken back there,
  // and again when the client's own timeout (3 s) ended it.
  it('a hang longer than the client\'s command timeout: each increment served unlimited is taken back once, and the count is exact after', async () => {
    const srv = await startRedis();
    const { redis, get, health, untilCounted, free } = await setup(srv.url, { waitReady: true });
    expect((await get()).headers['ratelimit-remaining']).toBe('99');
    const backstop = redis.options.commandTimeout!;
    srv.pause();
    try {
      const hung = await Promise.all(Array.from({ length: 5 }, () => get()));
      hung.forEach((res, i) => expectServedUnlimited(res, `request ${i} while Redis is hung`));
      // Past the client's timeout of the first increments and of rate-limit-redis's retries.
      await new Promise((r) => setTimeout(r, 4 * backstop));
    } finally {
      srv.resume();
    }
    await vi.waitFor(() => expect(health.late).toBe(0), WAIT);
    const back = await untilCounted();
    expect(back.headers['ratelimit-remaining']).toBe('98');
    const counted = await redis.keys(`*quota*${free.id}*`);
    expect(counted).toHaveLength(1);
    expect(await redis.get(counted[0])).toBe('2');
  });

  // An outside probe (stop 63): a Free key with 85 of 100 used, 20 connections of requests through
  // a 3 s pause of Redis. When Redis resumed it applied the hang's increments, and the take-back
  // DECR of each (sent at the increment's deadline, behind the increments sent meanwhile) after
  // them: the first increments answered after the resume counted the hang's requests still
  // unreturned, read 100 and over, and their requests were refused 429 until midnight (2,300
  // answers in a second) while 15 of the key's 100 were left, and served after.
  it('a key near its limit through a hang: no request is refused while the key has quota left, and the count is exact after', async () => {
    const srv = await startRedis();
    const { get, health, free, redis } = await setup(srv.url, { waitReady: true });
    for (let i = 0; i < 8; i++) await Promise.all(Array.from({ length: 10 }, () => get()));
    expect((await get()).headers['ratelimit-remaining']).toBe('19');
    expect((await get()).headers['ratelimit-remaining']).toBe('18');
    // Every answer in the order it came: 200s counted (with RateLimit-Remaining) or not, 429s.
    const answers: { status: number; remaining?: string; started: number; ended: number }[] = [];
    let stop = false;
    let resumedAt = Infinity;
    // Each connection its own phase, as clients have: the hang's requests are served at their
    // deadlines one after another, not all at once.
    const connection = async (phase: number) => {
      await new Promise((r) => setTimeout(r, phase));
      while (!stop) {
        const started = performance.now();
        const res = await get();
        answers.push({ status: res.status, remaining: res.headers['ratelimit-remaining'], started, ended: performance.now() });
        // Once refused after the resume, the quota is used up: this connection is done.
        if (res.status === 429 && started > resumedAt) return;
      }
    };
    srv.pause();
    let running: Promise<void>[] = [];
    try {
      running = Array.from({ length: 20 }, (_, i) => connection((i * DEADLINE_MS) / 20));
      await new Promise((r) => setTimeout(r, 3 * DEADLINE_MS + 500));
    } finally {
      srv.resume();
      resumedAt = performance.now();
    }
    // Until every connection has been refused after the resume (the key's quota used up), or a
    // bound far above what that takes.
    const bound = setTimeout(() => void (stop = true), HANG_BOUND_MS);
    await Promise.all(running);
    clearTimeout(bound);
    for (const a of answers) expect([200, 429]).toContain(a.status);
    // No request is refused while a request started after that refusal's answer is counted.
    const refusals = answers.filter((a) => a.status === 429);
    expect(refusals.length).toBeGreaterThan(0);
    const firstRefusal = Math.min(...refusals.map((a) => a.ended));
    const countedAfter = answers.filter((a) => a.status === 200 && a.remaining !== undefined && a.started > firstRefusal);
    expect(countedAfter, 'requests counted after a refusal').toEqual([]);
    // Counted requests say what remains, down to 0: the key's 100, 18 left when the run began.
    const counted = answers.filter((a) => a.status === 200 && a.remaining !== undefined).map((a) => Number(a.remaining));
    expect(Math.min(...counted)).toBe(0);
    // Settled: the count is exactly the requests that were limited (counted), the hang's taken back.
    await vi.waitFor(() => expect(health.late).toBe(0), WAIT);
    const keys = await redis.keys(`*quota*${free.id}*`);
    expect(keys).toHaveLength(1);
    await vi.waitFor(async () => expect(Number(await redis.get(keys[0]))).toBe(100), WAIT);
    expect(counted).toHaveLength(18);
  });

  it('Redis down at start-up: requests are served failing open at once; once redis-server starts, enforcement resumes by itself and the 101st counted request is 429', async () => {
    const port = await freePort();
    const { get, health, since, untilCounted, redis } = await setup(`redis://127.0.0.1:${port}`, { waitReady: false });

    for (let i = 0; i < 10; i++) expectServedUnlimited(await get(), `request ${i} with Redis down`);
    // Connection refused: every operation fails at once, none waits for the deadline.
    expect(since({ operations: 0, errors: 0, timeouts: 0, lastError: null, late: 0 })).toEqual({ operations: 10, errors: 10, timeouts: 0 });

    // Let the client's back-off grow a little, as it would in production.
    await new Promise((r) => setTimeout(r, 1000));
    await startRedis(port);
    const firstCounted = await untilCounted();
    expect(redis.status).toBe('ready');
    expect(firstCounted.headers['ratelimit-limit']).toBe('100');
    expect(firstCounted.headers['ratelimit-remaining']).toBe('99');

    const counting = { ...health };
    for (let counted = 2; counted <= 100; counted++) {
      const res = await get();
      expect(res, `counted request ${counted}`).toHaveStatus(200);
      expect(res.headers['ratelimit-remaining'], `counted request ${counted}`).toBe(String(100 - counted));
    }
    const over = await get();
    expect(over).toHaveStatus(429);
    expect(JSON.parse(over.text).code).toBe('quota_exceeded');
    expect(over.headers['retry-after']).toMatch(/^\d+$/);
    // The 429 is counted on arrival and taken back (429s do not count): two operations.
    expect(since(counting)).toEqual({ operations: 101, errors: 0, timeouts: 0 });
    expectQuietConsole();
  });
  it('the answers sent again without Express (src/http/replay.ts) behave alike: with Redis stopped or hung, /stats is served without RateLimit fields and the store error counted; a Free key is served unlimited', async () => {
    const srv = await startRedis();
    const live = new LiveState().start(t.url, silentLogger, 100);
    try {
      expect(await live.ready(10_000)).toBe(true);
      const { app, get, health, since } = await setup(srv.url, { waitReady: true, live });
      const replay = app.locals.replay as AnswerReplay;
      const stats = () => request(app).get('/api/v1/stats').timeout(HANG_BOUND_MS);
      expect((await stats()).headers['ratelimit-remaining']).toBeDefined();
      const served = replay.served;
      expect((await stats()).headers['ratelimit-remaining']).toBeDefined();
      expect(replay.served).toBe(served + 1);

      srv.pause();
      let before = { ...health };
      expectServedUnlimited(await stats(), '/stats while Redis is hung');
      expect(since(before)).toEqual({ operations: 1, errors: 1, timeouts: 1 });
      srv.resume();
      await srv.stop();
      await stats(); // may race the socket's close
      before = { ...health };
      expectServedUnlimited(await stats(), '/stats with Redis stopped');
      expect(since(before)).toEqual({ operations: 1, errors: 1, timeouts: 0 });
      expect(replay.served).toBe(served + 4);
      // A Free key with Redis gone: never refused (nothing holds it), served unlimited.
      expectServedUnlimited(await get());
      expectQuietConsole();
    } finally {
      await live.close();
    }
  });
});

describe('a busy server with Redis healthy', () => {
  // An outside probe: on a loaded server a Free key was served up to 143 times in a day, each
  // extra one "served without limiting", Redis answering in 61 us. After a turn of the event
  // loop longer than the deadline, the deadline's timer ran before the socket holding Redis's
  // answer was read, and the answer was taken for none (and the increment taken back).
  it('a turn of the event loop longer than the deadline: the answer waiting in the socket counts, the request is limited and counted', async () => {
    const srv = await startRedis();
    const { redis, get, health, since, free } = await setup(srv.url, { waitReady: true });
    // The client as createRedis makes it writes each command as it is sent: auto-pipelining wrote
    // them from a setImmediate of its own, after a loop held up as below, and Redis had nothing
    // to answer when the deadline came (an outside probe, stop 42: a Starter key served unlimited
    // for 1-2 % of its requests at a load average of 10-13, Redis answering in 14 ms at most).
    expect((await get()).headers['ratelimit-remaining']).toBe('99');
    const before = { ...health };
    const pending = get().then((r) => r);
    // Once the request's increment is sent (the store's operation begun, the command flushed
    // before the loop's check phase), hold the event loop for three deadlines: Redis answers
    // meanwhile, and the deadline's timer is due before that answer is read.
    while (health.operations === before.operations) await new Promise((r) => setImmediate(r));
    const end = Date.now() + 3 * DEADLINE_MS;
    while (Date.now() < end); // the loaded server's long turn
    const res = await pending;
    expect(res).toHaveStatus(200);
    expect(res.headers['ratelimit-remaining']).toBe('98');
    expect(since(before)).toEqual({ operations: 1, errors: 0, timeouts: 0 });
    await vi.waitFor(() => expect(health.late).toBe(0), WAIT);
    const counted = await redis.keys(`*quota*${free.id}*`);
    expect(counted).toHaveLength(1);
    expect(await redis.get(counted[0])).toBe('2');
  });
});

describe('a busy server with Redis healthy: the increment written at once', () => {
  // The same, with the loop held up right as the increment is sent: written at once, Redis
  // answers during the long turn; written from the client's own setImmediate (auto-pipelining),
  // it left only after the turn, and the deadline looked before its answer came.
  it('a long turn right after the increment is sent: the request is still limited and counted', async () => {
    const srv = await startRedis();
    // Redis's answers reach the server 20 ms after they leave it (a loaded machine's Redis), through
    // a proxy in a process of its own (this one's loop is held up below).
    const proxy = spawn(process.execPath, ['-e', `
      const net = require('node:net');
      const server = net.createServer((client) => {
        const upstream = net.connect(${srv.port}, '127.0.0.1');
        client.pipe(upstream);
        upstream.on('data', (d) => setTimeout(() => client.writable && client.write(d), 20));
        for (const [a, b] of [[client, upstream], [upstream, client]]) { a.on('error', () => b.destroy()); a.on('close', () => b.destroy()); }
      });
      server.listen(0, '127.0.0.1', () => console.log(server.address().port));`], { stdio: ['ignore', 'pipe', 'inherit'] });
    onTestFinished(() => void proxy.kill('SIGKILL'));
    const [line] = (await once(proxy.stdout!, 'data')) as [Buffer];
    const { redis, get, health, since, free } = await setup(`redis://127.0.0.1:${Number(line.toString().trim())}`, { waitReady: true });
    expect((await get()).headers['ratelimit-remaining']).toBe('99');
    const call = redis.call.bind(redis) as (...a: string[]) => Promise<unknown>;
    let hold = true;
    (redis as unknown as { call: (...a: string[]) => Promise<unknown> }).call = (...a: string[]) => {
      const sent = call(...a);
      if (hold && a[0] === 'EVALSHA') {
        hold = false;
        const end = Date.now() + 3 * DEADLINE_MS;
        while (Date.now() < end); // the loaded server's long turn, begun as the increment is sent
      }
      return sent;
    };
    const before = { ...health };
    const res = await get();
    expect(res).toHaveStatus(200);
    expect(res.headers['ratelimit-remaining']).toBe('98');
    expect(since(before)).toEqual({ operations: 1, errors: 0, timeouts: 0 });
    const counted = await redis.keys(`*quota*${free.id}*`);
    expect(await redis.get(counted[0])).toBe('2');
  });
});

// An outside probe of stop 47: a connection that went silent without closing (a flow a NAT or a
// firewall dropped) was kept, quotas unenforced and /readyz 503, while Redis served every other
// client; it would have lasted until the kernel gave up on it (about 15 minutes).
describe('a Redis connection that goes silent without closing', () => {
  it('is replaced: the client connects again and limiting resumes, while Redis itself never stopped', { timeout: 120_000 }, async () => {
    const srv = await startRedis();
    // A proxy in a process of its own that, told "drop", forwards nothing more on the connections
    // open then, closing none of them; connections made after it forward as usual.
    const proxy = spawn(process.execPath, ['-e', `
      const net = require('node:net');
      const open = new Set();
      const server = net.createServer((client) => {
        const upstream = net.connect(${srv.port}, '127.0.0.1');
        const c = { dropped: false };
        open.add(c);
        client.on('data', (d) => !c.dropped && upstream.write(d));
        upstream.on('data', (d) => !c.dropped && client.write(d));
        for (const [a, b] of [[client, upstream], [upstream, client]]) { a.on('error', () => b.destroy()); a.on('close', () => { open.delete(c); b.destroy(); }); }
      });
      process.stdin.on('data', () => { for (const c of open) c.dropped = true; console.log('dropped'); });
      server.listen(0, '127.0.0.1', () => console.log(server.address().port));`], { stdio: ['pipe', 'pipe', 'inherit'] });
    onTestFinished(() => void proxy.kill('SIGKILL'));
    const [line] = (await once(proxy.stdout!, 'data')) as [Buffer];
    const { redis, lines, get } = await setup(`redis://127.0.0.1:${Number(line.toString().trim())}`, { waitReady: true });
    expect((await get()).headers['ratelimit-remaining']).toBe('99');

    proxy.stdin!.write('drop\n');
    await once(proxy.stdout!, 'data');
    // Served meanwhile (unlimited), then counted again once the client has connected anew
    // (after 15 s of silence; the bound here leaves room for a busy machine).
    expectServedUnlimited(await get(), 'the first request after the connection went silent');
    const resumed = await vi.waitFor(async () => {
      const res = await get();
      expect(res).toHaveStatus(200);
      expect(res.headers['ratelimit-remaining'], 'quota enforcement resumed').toBeDefined();
      return res;
    }, { timeout: 90_000, interval: 200 });
    expect(Number(resumed.headers['ratelimit-remaining'])).toBeLessThan(99);
    expect(redis.status).toBe('ready');
    expect(lines.filter((l) => /redis ready/.test(l.msg)).length).toBeGreaterThanOrEqual(2);
  });
});

describe('sign-ins while Redis hangs', () => {
  it('correct sign-ins made while Redis is hung (their counts applied late, when it resumes) pause nobody afterwards', async () => {
    const srv = await startRedis();
    const { logger } = captureLogger();
    const redis = createRedis(srv.url, { timeoutMs: TIMEOUT_MS, logger });
    clients.push(redis);
    await vi.waitFor(async () => expect(await waitForRedis(redis, 1000)).toBe(true), WAIT);
    const app = await buildWebApp(t.db, { redis, logger, redisPrefix: 'lf-test-hung-sign-in:', web: { failuresPerEmail: 3, attemptsPerIp: 1000 } });
    const email = uniqueEmail('hung');
    expect(await signUp(request.agent(app), email)).toHaveStatus(303);
    const signIn = async () => {
      const agent = request.agent(app);
      const _csrf = await pageToken(agent);
      return agent.post('/api-keys/sign-in').type('form').send({ _csrf, email, password: PASSWORD }).timeout(HANG_BOUND_MS);
    };
    // Three times: a sign-in while Redis is hung (its count, sent before the store gave up
    // and let it pass, is applied when Redis resumes), then Redis back.
    for (let i = 0; i < 3; i++) {
      expect(await signIn(), `sign-in ${i} with Redis answering`).toHaveStatus(303);
      srv.pause();
      try {
        expect(await signIn(), `sign-in ${i} while Redis is hung`).toHaveStatus(303);
      } finally {
        srv.resume();
      }
      await vi.waitFor(async () => expect(await redis.ping()).toBe('PONG'), WAIT);
    }
    // Those late counts pause nobody: every sign-in cleared its address's count.
    expect(await signIn(), 'a sign-in after Redis came back').toHaveStatus(303);
  });
});
