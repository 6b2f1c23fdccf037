import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { projectRoot } from '../../src/lib/paths.js';
import { waitForRedis } from '../../src/redis.js';
import { revokeApiKey } from '../../src/repositories/api-keys.js';
import { useTestContext } from '../helpers/context.js';
import { createKey, insertListing, TEST_REDIS_URL, testRedis } from '../helpers/factory.js';
import { freePort } from '../helpers/redis-server.js';

// More than one instance: two server processes (as `npm start` runs them, on ephemeral ports)
// on the same PostgreSQL and Redis behave as one (quotas counted in Redis, keys and the data
// version invalidated through PostgreSQL's notifications); and WEB_CONCURRENCY runs workers.
// Propagation times are printed for the record; the assertions poll with generous deadlines.

const t = useTestContext();
const children: ChildProcess[] = [];

interface Instance {
  child: ChildProcess;
  base: string;
  port: number;
  out: { stdout: string; stderr: string };
  exited: Promise<[number | null, string | null]>;
}

function start(env: Record<string, string>, port: number): Instance {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: projectRoot,
    env: {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: t.url,
      REDIS_URL: TEST_REDIS_URL,
      HOST: '127.0.0.1',
      PORT: String(port),
      METRICS_PORT: '-1',
      LOG_LEVEL: 'warn',
      LOG_PRETTY: 'false',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d) => (out.stdout += d));
  child.stderr!.on('data', (d) => (out.stderr += d));
  const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
  return { child, base: `http://127.0.0.1:${port}`, port, out, exited };
}

async function serving(i: Instance): Promise<void> {
  await vi.waitFor(
    async () => {
      if (i.child.exitCode !== null) throw new Error(`exited: ${JSON.stringify(i.out)}`);
      const res = await fetch(`${i.base}/readyz`).catch(() => null);
      expect(res?.status).toBe(200);
    },
    { timeout: 90_000, interval: 100 },
  );
}

const get = (i: Instance, key: string, path = '/api/v1/listings?per_page=1') => fetch(i.base + path, { headers: { authorization: `Bearer ${key}` } });

// The worker processes of a cluster's primary (its other children, such as tsx's esbuild
// service, left out).
function workersOf(i: Instance): string[] {
  return execFileSync('ps', ['--ppid', String(i.child.pid), '-o', 'pid=,args='])
    .toString()
    .split('\n')
    .filter((l) => l.includes('src/server.ts'))
    .map((l) => l.trim().split(/\s+/)[0]);
}

// One request on a new connection: the status line of its answer, 'closed without an answer',
// 'refused' (ECONNREFUSED), another error's code, or 'no answer within N s'.
function statusLine(port: number, request: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.write(request));
    let got = '';
    sock.setEncoding('latin1');
    sock.on('data', (d) => (got += d));
    sock.on('close', () => resolve(got.split('\r\n')[0] || 'closed without an answer'));
    sock.on('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED' ? 'refused' : (e.code ?? 'error')));
    sock.setTimeout(timeoutMs, () => resolve(`no answer within ${timeoutMs / 1000} s`));
  });
}

// Polls `probe` on the instance until it holds; the time from `since` to that moment.
async function seenAfter(since: number, probe: () => Promise<boolean>): Promise<number> {
  await vi.waitFor(async () => expect(await probe()).toBe(true), { timeout: 20_000, interval: 5 });
  return performance.now() - since;
}

// The test database's PostgreSQL behind a proxy on a port of its own, which can be taken away
// (connections refused, open ones cut) and brought back.
async function pgProxy(): Promise<{ url: string; open(): Promise<void>; close(): Promise<void> }> {
  const target = new URL(t.url);
  const pgPort = Number(target.port || 5432);
  const port = await freePort();
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  const url = new URL(t.url);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    async open() {
      server = net.createServer((client) => {
        const upstream = net.connect(pgPort, target.hostname);
        for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
          sockets.add(a);
          a.pipe(b);
          a.on('error', () => b.destroy());
          a.on('close', () => (sockets.delete(a), b.destroy()));
        }
      });
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    },
    async close() {
      const s = server;
      server = null;
      if (!s) return;
      const closed = new Promise((resolve) => s.close(resolve));
      for (const c of sockets) c.destroy();
      await closed;
    },
  };
}

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

describe('two instances on one database and one Redis', () => {
  let a: Instance;
  let b: Instance;
  const quotaKeys: string[] = [];

  beforeAll(async () => {
    await insertListing(t.db, { commune: 'Bertrange' });
    // The page rows' own pool on (DB_ROWS_POOL_MAX, off by default): both instances read them there.
    a = start({ DB_ROWS_POOL_MAX: '2' }, await freePort());
    b = start({ DB_ROWS_POOL_MAX: '2' }, await freePort());
    await Promise.all([serving(a), serving(b)]);
  }, 300_000);

  afterAll(async () => {
    for (const i of [a, b]) i?.child.kill('SIGTERM');
    const redis = testRedis();
    try {
      await waitForRedis(redis, 5000);
      for (const id of quotaKeys) {
        const found = await redis.keys(`lf:quota:*${id}*`);
        if (found.length) await redis.del(...found);
      }
    } finally {
      redis.disconnect();
    }
  });

  it('share the daily quota exactly: of 110 Free requests over both, 100 are served and 10 refused', async () => {
    const free = await createKey(t.db, 'free');
    quotaKeys.push(free.id);
    // In waves of 10 at once, alternating instances.
    const statuses: number[] = [];
    for (let wave = 0; wave < 11; wave++) {
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => get(i % 2 ? a : b, free.key).then((r) => r.status)));
      statuses.push(...answers);
    }
    expect(statuses.filter((s) => s === 200).length).toBe(100);
    expect(statuses.filter((s) => s === 429).length).toBe(10);
    for (const i of [a, b]) expect((await get(i, free.key)).status).toBe(429);
  });

  it('see a revocation and a data change on both, each within a second (times printed)', async () => {
    const pro = await createKey(t.db, 'pro');
    for (const i of [a, b]) for (let n = 0; n < 3; n++) expect((await get(i, pro.key)).status).toBe(200);

    const revokedAt = performance.now();
    await revokeApiKey(t.db, pro.id, new Date());
    const committed = performance.now();
    const revocation = await Promise.all([a, b].map((i) => seenAfter(committed, async () => (await get(i, pro.key)).status === 401)));

    const other = await createKey(t.db, 'pro');
    const total = async (i: Instance) => ((await (await get(i, other.key, '/api/v1/listings?commune=Kehlen')).json()) as { meta: { total: number } }).meta.total;
    const before = await total(a);
    expect(await total(b)).toBe(before);
    await insertListing(t.db, { commune: 'Kehlen' });
    const inserted = performance.now();
    const change = await Promise.all([a, b].map((i) => seenAfter(inserted, async () => (await total(i)) === before + 1)));

    const ms = (x: number[]) => x.map((v) => `${v.toFixed(0)} ms`).join(' / ');
    console.log(`two instances: revocation seen after ${ms(revocation)} (commit took ${(committed - revokedAt).toFixed(0)} ms); a new listing seen after ${ms(change)}`);
    // Generous: the machine running the suite may be loaded. The mechanism is what is tested.
    for (const v of [...revocation, ...change]) expect(v).toBeLessThan(20_000);
  });

  // src/server.ts: with DB_ROWS_POOL_MAX (2 here), page rows are read on a small pool of its own
  // per process, its connections named apart from the main pool's.
  it('each reads page rows on a pool of its own, at most DB_ROWS_POOL_MAX connections', async () => {
    const pro = await createKey(t.db, 'pro');
    const pages = await Promise.all(
      Array.from({ length: 40 }, (_, n) => get(n % 2 ? a : b, pro.key, `/api/v1/listings?per_page=5&max_price=${100_000 + n}`).then((r) => r.json())),
    );
    for (const page of pages as { data: { commune: string }[] }[]) expect(page.data.map((l) => l.commune)).toContain('Bertrange');
    const { rows } = await t.db.raw(`SELECT application_name, count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() GROUP BY 1`);
    const byName = new Map((rows as { application_name: string; n: number }[]).map((r) => [r.application_name, r.n]));
    expect(byName.get('lux-listings-feed rows')).toBeGreaterThanOrEqual(1);
    expect(byName.get('lux-listings-feed rows')).toBeLessThanOrEqual(2 * 2);
  });
});

describe('WEB_CONCURRENCY', () => {
  it('runs that many workers on one port, and SIGTERM stops them all (exit 0)', async () => {
    const metricsPort = await freePort();
    const i = start({ WEB_CONCURRENCY: '2', METRICS_PORT: String(metricsPort) }, await freePort());
    await serving(i);
    const workers = workersOf(i);
    expect(workers.length).toBe(2);
    const key = await createKey(t.db, 'pro');
    const answers = await Promise.all(Array.from({ length: 20 }, () => get(i, key.key).then((r) => r.status)));
    expect(answers.every((s) => s === 200)).toBe(true);
    // One /metrics for the cluster: the workers' counts added up.
    await vi.waitFor(
      async () => {
        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        const counted = text
          .split('\n')
          .filter((l) => l.startsWith('http_requests_total{') && l.includes('route="/api/v1/listings/"') && l.includes('status="200"'))
          .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
        expect(counted, text.slice(0, 2000)).toBe(20);
      },
      { timeout: 30_000, interval: 500 },
    );
    i.child.kill('SIGTERM');
    const [code] = await i.exited;
    expect(code, JSON.stringify(i.out)).toBe(0);
    for (const pid of workers) expect(() => process.kill(Number(pid), 0)).toThrow();
  }, 300_000);

  // An outside probe: a connection the primary handed to a worker as it stopped listening was
  // passed on to no one, and waited unanswered until the drain ended (10 s), then was reset.
  it('while its workers drain after SIGTERM, every new connection is answered at once (503, Retry-After), none hangs', async () => {
    const i = start({ WEB_CONCURRENCY: '2', LOG_LEVEL: 'info' }, await freePort());
    await serving(i);
    await vi.waitFor(() => expect(i.out.stdout).toContain('2 workers serving'), { timeout: 60_000, interval: 100 });
    const pro = await createKey(t.db, 'pro');
    // An export waiting on a lock keeps its worker draining.
    const lock = await t.db.transaction();
    try {
      await lock.raw('LOCK TABLE listings IN ACCESS EXCLUSIVE MODE');
      const exporting = fetch(`${i.base}/api/v1/listings/export`, { headers: { authorization: `Bearer ${pro.key}` } }).then((r) => r.text(), () => 'cut');
      await vi.waitFor(
        async () => expect(Number((await t.db.raw(`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).rows[0].n)).toBeGreaterThan(0),
        { timeout: 30_000, interval: 20 },
      );
      i.child.kill('SIGTERM');
      // Both workers (the primary passes the signal on; on a busy machine the second may take a
      // moment, and a connection it took meanwhile was served 200: stop 46's suite).
      await vi.waitFor(() => expect(i.out.stdout.split('shutting down').length).toBeGreaterThanOrEqual(3), { timeout: 30_000, interval: 20 });
      // New connections, one request each, while the export holds the drain. (A connection left
      // unanswered waits until the primary exits, which the lock holds off: the bound only tells
      // such a hang from an answer; the primary hands the worker the 12 connections one at a time,
      // each after the one before is taken, which took more than 5 s once, in CI beside an
      // outside probe's load.)
      const answer = () => statusLine(i.port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n', 30_000);
      const seen = await Promise.all(Array.from({ length: 12 }, answer));
      expect(seen.every((s) => s === 'HTTP/1.1 503 Service Unavailable'), seen.join(', ')).toBe(true);
      // Each logged, as any request is (an outside probe: a drain's 503s had no line).
      await vi.waitFor(() => expect(i.out.stdout.match(/"msg":"GET \/healthz 503 0ms \(this process is stopping\)"/g) ?? []).toHaveLength(12), { timeout: 30_000, interval: 50 });
      await lock.rollback();
      await exporting;
    } finally {
      await lock.rollback().catch(() => undefined);
    }
    const [code] = await i.exited;
    expect(code, JSON.stringify(i.out).slice(-2000)).toBe(0);
  }, 300_000);

  // An outside probe (stop 42): 600 requests at once, SIGTERM a second later: 539 reset. The
  // primary hands each worker one connection at a time; those still waiting in it when the last
  // worker stopped listening were closed unanswered.
  it('SIGTERM during a burst of new connections: each is answered (200 or 503) or refused, none reset or left hanging', async () => {
    const i = start({ WEB_CONCURRENCY: '2', LOG_LEVEL: 'info' }, await freePort());
    await serving(i);
    await vi.waitFor(() => expect(i.out.stdout).toContain('2 workers serving'), { timeout: 60_000, interval: 100 });
    const pro = await createKey(t.db, 'pro');
    const answer = () =>
      statusLine(i.port, `GET /api/v1/listings?per_page=100&sort=price HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${pro.key}\r\nConnection: close\r\n\r\n`, 60_000);
    const burst = Array.from({ length: 800 }, answer);
    await new Promise((r) => setTimeout(r, 50));
    i.child.kill('SIGTERM');
    const seen = await Promise.all(burst);
    const counts: Record<string, number> = {};
    for (const s of seen) counts[s] = (counts[s] ?? 0) + 1;
    const ok = (s: string) => s === 'HTTP/1.1 200 OK' || s === 'HTTP/1.1 503 Service Unavailable' || s === 'refused';
    expect(seen.every(ok), JSON.stringify(counts)).toBe(true);
    const [code] = await i.exited;
    expect(code, JSON.stringify(i.out).slice(-2000)).toBe(0);
  }, 300_000);

  // A regression probe (stop 42): with every worker at its bound of connections (80 % of its
  // open files), a new connection went round between the primary and the workers for ever,
  // unanswered, 1.3 cores busy (Node's server.maxConnections in a cluster).
  it('every worker at its bound of connections: a new one is closed at once, not passed round', async () => {
    const port = await freePort();
    // (MAX_CONNECTIONS rather than a small limit of open files, which the primary shares: a busy
    // machine's primary, holding connections until a worker takes them, ran out of them first.)
    const i = start({ WEB_CONCURRENCY: '2', LOG_LEVEL: 'info', MAX_CONNECTIONS: '150' }, port);
    await serving(i);
    await vi.waitFor(() => expect(i.out.stdout).toContain('2 workers serving'), { timeout: 60_000, interval: 100 });
    // 350 idle connections from three addresses (each far within its own bound): both workers full (2 x 150).
    const held: net.Socket[] = [];
    try {
      for (let k = 0; k < 350; k++) {
        const s = net.connect({ port, host: '127.0.0.1', localAddress: `127.0.0.${11 + (k % 3)}` });
        s.on('error', () => undefined);
        held.push(s);
        await once(s, 'connect');
      }
      const attempt = () =>
        new Promise<string>((resolve) => {
          const s = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' }, () => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
          let got = '';
          s.setEncoding('latin1');
          s.on('data', (d) => (got += d));
          s.on('close', () => resolve(got.split('\r\n')[0] || 'closed'));
          s.on('error', () => undefined);
          s.setTimeout(10_000, () => (resolve('no answer within 10 s'), s.destroy()));
        });
      // Once the workers have taken the held connections (on a busy machine the primary may still
      // be handing them over: a new one is then served, stop 46's suite), a new one is closed at
      // once; never left unanswered, the defect.
      const fates: string[] = [];
      const until = Date.now() + 60_000;
      while (fates.at(-1) !== 'closed' && Date.now() < until) {
        fates.push(await attempt());
        expect(fates.at(-1)).not.toBe('no answer within 10 s');
        if (fates.at(-1) !== 'closed') await new Promise((r) => setTimeout(r, 200));
      }
      expect(fates.at(-1), fates.join(', ')).toBe('closed');
    } finally {
      for (const s of held) s.destroy();
      i.child.kill('SIGTERM');
      await i.exited;
    }
  }, 300_000);

  it('a worker that dies while PostgreSQL is down is replaced once it is back; the primary never gives up', async () => {
    const pg = await pgProxy();
    await pg.open();
    const i = start({ WEB_CONCURRENCY: '2', DATABASE_URL: pg.url, LOG_LEVEL: 'info' }, await freePort());
    const workers = () => workersOf(i);
    try {
      await serving(i);
      // Both workers started (before that, a worker that dies fails the start).
      await vi.waitFor(() => expect(i.out.stdout).toContain('2 workers serving'), { timeout: 60_000, interval: 100 });
      expect(workers()).toHaveLength(2);
      // PostgreSQL goes away, then a worker dies: its replacement waits for PostgreSQL.
      await pg.close();
      const [victim] = workers();
      process.kill(Number(victim), 'SIGKILL');
      await vi.waitFor(() => expect(i.out.stdout).toContain('PostgreSQL is not reachable'), { timeout: 60_000, interval: 200 });
      expect(i.child.exitCode, JSON.stringify(i.out)).toBeNull();
      // Back: the next attempt serves, and the cluster has its two workers again.
      await pg.open();
      await vi.waitFor(
        async () => {
          expect(i.child.exitCode).toBeNull();
          expect(workers()).toHaveLength(2);
          expect(i.out.stdout).toContain('2 workers serving');
          expect(i.out.stdout.split('2 workers serving').length, i.out.stdout.slice(-3000)).toBe(3); // at the start, and again
        },
        { timeout: 60_000, interval: 200 },
      );
      const key = await createKey(t.db, 'pro');
      const answers = await Promise.all(Array.from({ length: 10 }, () => get(i, key.key).then((r) => r.status)));
      expect(answers.every((s) => s === 200)).toBe(true);
    } finally {
      i.child.kill('SIGTERM');
      await i.exited;
      await pg.close();
    }
  }, 300_000);

  it('a server started before PostgreSQL answers waits for it (503 meanwhile), then serves', async () => {
    const pg = await pgProxy();
    const i = start({ DATABASE_URL: pg.url, LOG_LEVEL: 'info' }, await freePort());
    try {
      await vi.waitFor(() => expect(i.out.stdout).toMatch(/PostgreSQL is not reachable at 127\.0\.0\.1:\d+ \(unreachable\): trying again/), { timeout: 60_000, interval: 200 });
      const meanwhile = await fetch(`${i.base}/api/v1/listings`);
      expect(meanwhile.status).toBe(503);
      expect(meanwhile.headers.get('retry-after')).toBe('1');
      expect(i.child.exitCode, JSON.stringify(i.out)).toBeNull();
      await pg.open();
      await serving(i);
      const key = await createKey(t.db, 'pro');
      expect((await get(i, key.key)).status).toBe(200);
    } finally {
      i.child.kill('SIGTERM');
      await i.exited;
      await pg.close();
    }
  }, 300_000);

  it('a database that does not exist stops the start at once, in one line (waiting cannot mend it)', async () => {
    const url = new URL(t.url);
    url.pathname = '/no_such_database_here';
    const i = start({ DATABASE_URL: url.toString() }, await freePort());
    const [code] = await i.exited;
    expect(code, JSON.stringify(i.out)).toBe(1);
    expect(i.out.stderr.trim().split('\n'), i.out.stderr).toHaveLength(1);
    expect(i.out.stderr).toMatch(/no_such_database_here/);
    expect(i.out.stdout).not.toMatch(/component.*knex|Acquire connection/);
  }, 300_000);

  it('a taken port stops the start with one line and exit code 1', async () => {
    const holder = start({}, await freePort());
    await serving(holder);
    const i = start({ WEB_CONCURRENCY: '2' }, holder.port);
    const [code] = await i.exited;
    expect(code, JSON.stringify(i.out)).toBe(1);
    expect(i.out.stderr).toBe(`port ${holder.port} is in use; set PORT\n`);
    holder.child.kill('SIGTERM');
    await holder.exited;
  }, 300_000);
});
