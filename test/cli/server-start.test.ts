import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import os, { availableParallelism } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { projectRoot } from '../../src/lib/paths.js';
import { useTestContext } from '../helpers/context.js';
import { TEST_REDIS_URL } from '../helpers/factory.js';
import { startRedisServer } from '../helpers/redis-server.js';

// Issue 10, item 10: a taken PORT stops the start with one line and exit code 1 (it used to
// print the demo keys while requests went to the other process); a taken METRICS_PORT is one
// warning line and the API serves. The real server is spawned, as `npm start` runs it.

const t = useTestContext();
let root: string;
const holders: net.Server[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'server-start-test-'));
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await Promise.all(holders.map((h) => new Promise((r) => h.close(r))));
  await rm(root, { recursive: true, force: true });
});

// A port held by "another process": a plain TCP listener on an ephemeral port.
async function holdPort(): Promise<number> {
  const holder = net.createServer((socket) => socket.end('HTTP/1.1 418 I am the other process\r\nContent-Length: 0\r\n\r\n'));
  holder.listen(0, '127.0.0.1');
  await once(holder, 'listening');
  holders.push(holder);
  return (holder.address() as AddressInfo).port;
}

function startServer(env: Record<string, string>, command: [string, string[]] = [process.execPath, ['--import', 'tsx', 'src/server.ts']]) {
  const child = spawn(command[0], command[1], {
    cwd: projectRoot,
    env: { ...process.env, REDIS_URL: '', HOST: '127.0.0.1', LOG_LEVEL: 'info', LOG_PRETTY: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d) => (out.stdout += d));
  child.stderr!.on('data', (d) => (out.stderr += d));
  const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
  return { child, out, exited };
}

const jsonLines = (s: string) =>
  s
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string; port?: number });

// The "listening" line, which gives the port the OS chose.
function listeningLine(child: ChildProcess, out: { stdout: string }) {
  return vi.waitFor(
    () => {
      if (child.exitCode !== null) throw new Error(`the server exited: ${JSON.stringify(out)}`);
      const line = jsonLines(out.stdout).find((l) => /^listening on/.test(l.msg));
      if (!line) throw new Error('not listening yet');
      return line;
    },
    { timeout: 90_000, interval: 100 },
  );
}

describe('a taken PORT', () => {
  it('exits 1 with the one line "port N is in use; set PORT", before any demo key or "listening" line', async () => {
    const port = await holdPort();
    const { out, exited } = startServer({ DATABASE_URL: t.url, PORT: String(port), METRICS_PORT: '-1' });
    const [code] = await exited;
    expect(code, JSON.stringify(out)).toBe(1);
    expect(out.stderr).toBe(`port ${port} is in use; set PORT\n`);
    expect(out.stdout).not.toMatch(/listening|Demo API keys|lfk_/);
  }, 300_000);

  it('in embedded mode too, and before the embedded database or the demo data are touched', async () => {
    const port = await holdPort();
    const dir = path.join(root, 'never-created');
    const { out, exited } = startServer({ DATABASE_URL: '', EMBEDDED_PG_DIR: dir, EMBEDDED_PG_PORT: String(await holdPort()), PORT: String(port), METRICS_PORT: '-1' });
    const [code] = await exited;
    expect(code, JSON.stringify(out)).toBe(1);
    expect(out.stderr).toBe(`port ${port} is in use; set PORT\n`);
    expect(out.stdout).toBe('');
    expect(existsSync(dir)).toBe(false);
  }, 300_000);

  // An outside probe of stop 44: WEB_CONCURRENCY=2 without DATABASE_URL ran one process without a word.
  it('says that WEB_CONCURRENCY is not used on the embedded PostgreSQL', async () => {
    const port = await holdPort();
    const { out, exited } = startServer({ DATABASE_URL: '', WEB_CONCURRENCY: '2', EMBEDDED_PG_DIR: path.join(root, 'never-created-2'), EMBEDDED_PG_PORT: String(await holdPort()), PORT: String(port), METRICS_PORT: '-1' });
    const [code] = await exited;
    expect(code, JSON.stringify(out)).toBe(1);
    expect(jsonLines(out.stdout).map((l) => [l.level, l.msg])).toEqual([[40, 'WEB_CONCURRENCY=2 is not used on the embedded PostgreSQL: one process serves (set DATABASE_URL for more)']]);
    // NODE_ENV=production, whose default is a process per core (the regression probe of stop 44).
    const prod = startServer({ DATABASE_URL: '', NODE_ENV: 'production', EMBEDDED_PG_DIR: path.join(root, 'never-created-3'), EMBEDDED_PG_PORT: String(await holdPort()), PORT: String(port), METRICS_PORT: '-1' });
    expect((await prod.exited)[0], JSON.stringify(prod.out)).toBe(1);
    const cores = availableParallelism();
    expect(jsonLines(prod.out.stdout).map((l) => [l.level, l.msg])).toEqual(
      cores > 1 ? [[40, `NODE_ENV=production (a process per core, ${cores}) is not used on the embedded PostgreSQL: one process serves (set DATABASE_URL for more)`]] : [],
    );
  }, 300_000);
});

describe('a HOST that is not this machine\'s', () => {
  it('exits 1 with one line naming HOST', async () => {
    const { out, exited } = startServer({ DATABASE_URL: t.url, HOST: '192.0.2.1', PORT: '0', METRICS_PORT: '-1' }); // TEST-NET-1
    const [code] = await exited;
    expect(code, JSON.stringify(out)).toBe(1);
    expect(out.stderr).toBe('cannot listen on 192.0.2.1: not an address of this machine; set HOST\n');
  }, 300_000);
});

// An outside probe: REDIS_URL=redis://host/99 on a Redis of 16 databases served with every
// quota counted on database 0 (ioredis reports the failed SELECT as an error and goes on).
describe('a REDIS_URL naming a database the Redis does not have', () => {
  it('exits 1 with one line naming REDIS_URL', async () => {
    const url = new URL(TEST_REDIS_URL);
    url.pathname = '/9999';
    const { out, exited } = startServer({ DATABASE_URL: t.url, REDIS_URL: url.toString(), PORT: '0', METRICS_PORT: '-1', WEB_CONCURRENCY: '1' });
    const [code] = await exited;
    expect(code, JSON.stringify(out)).toBe(1);
    expect(out.stderr).toBe('REDIS_URL asks for Redis database 9999, which this Redis does not have (it answered on database 0); set REDIS_URL\n');
    // That one line: no "redis error" nor "redis ready" before it.
    expect(jsonLines(out.stdout).filter((l) => /redis/.test(l.msg))).toEqual([]);
  }, 300_000);
});

// An outside probe of stop 63: against a Redis asking for a password, a REDIS_URL with none or a
// wrong one logged "not reachable" and served every request without quotas for as long as it ran.
describe('a REDIS_URL whose credentials the Redis refuses', () => {
  it('exits 1 with one line naming REDIS_URL, for no password and for a wrong one', async () => {
    const srv = await startRedisServer();
    const admin = new Redis(srv.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await admin.connect();
      await admin.config('SET', 'requirepass', 'right-password');
      const cases: Array<[string, RegExp]> = [
        [srv.url, /^Redis refused the credentials of REDIS_URL \(NOAUTH [^)]*\); set REDIS_URL\n$/],
        [`redis://:wrong-password@127.0.0.1:${srv.port}`, /^Redis refused the credentials of REDIS_URL \(WRONGPASS [^)]*\); set REDIS_URL\n$/],
      ];
      for (const [redisUrl, line] of cases) {
        const { out, exited } = startServer({ DATABASE_URL: t.url, REDIS_URL: redisUrl, PORT: '0', METRICS_PORT: '-1', WEB_CONCURRENCY: '1' });
        const [code] = await exited;
        expect(code, JSON.stringify(out)).toBe(1);
        expect(out.stderr).toMatch(line);
        expect(out.stderr).not.toContain('wrong-password');
      }
      // The right password is served, quotas counted.
      const { child, out, exited } = startServer({ DATABASE_URL: t.url, REDIS_URL: `redis://:right-password@127.0.0.1:${srv.port}`, PORT: '0', METRICS_PORT: '-1', WEB_CONCURRENCY: '1' });
      await listeningLine(child, out);
      expect(jsonLines(out.stdout).some((l) => l.msg === 'redis ready')).toBe(true);
      child.kill('SIGTERM');
      await exited;
    } finally {
      admin.disconnect();
      await srv.stop();
    }
  }, 300_000);
});

describe('a taken METRICS_PORT', () => {
  it('logs one warning line (no stack, nothing at error level) and the API keeps serving', async () => {
    const metricsPort = await holdPort();
    const { child, out, exited } = startServer({ DATABASE_URL: t.url, PORT: '0', METRICS_PORT: String(metricsPort) });
    // Started: the "listening" line gives the port the OS chose.
    const listening = await listeningLine(child, out);
    const base = `http://127.0.0.1:${listening.port}`;
    await vi.waitFor(() => expect(jsonLines(out.stdout).some((l) => /metrics/.test(l.msg) && l.level === 40)).toBe(true), { timeout: 30_000, interval: 50 });
    expect(await fetch(`${base}/healthz`)).toHaveStatus(200);
    expect(await fetch(`${base}/api/v1/stats`)).toHaveStatus(200);

    child.kill('SIGTERM');
    const [code] = await exited;
    expect(code, JSON.stringify(out)).toBe(0);
    const lines = jsonLines(out.stdout);
    const metricsLines = lines.filter((l) => /metrics/.test(l.msg));
    expect(metricsLines, out.stdout).toEqual([
      expect.objectContaining({ level: 40, msg: `metrics port ${metricsPort} is in use: no /metrics (set METRICS_PORT, or -1 to turn it off)` }),
    ]);
    expect(Object.keys(metricsLines[0]).sort()).toEqual(['level', 'msg', 'time']);
    expect(lines.filter((l) => l.level >= 50), out.stdout).toEqual([]);
    expect(out.stdout + out.stderr).not.toMatch(/\n\s+at /);
  }, 300_000);
});

// Outside probes: SIGTERM to `npm start` (what a process manager sends) stopped npm and its
// shell but left the server itself serving, orphaned; then, with the script exec'ing tsx, tsx
// relayed it but killed a busy server outright (SIGKILL when the server did not confirm within
// 30 ms), cutting the requests in flight. The script now execs node itself (tsx as a loader):
// the signal reaches the server, which finishes what it serves and stops.
describe('SIGTERM to npm start', () => {
  it('stops the server itself, gracefully, even while busy', async () => {
    const { child, out, exited } = startServer({ DATABASE_URL: t.url, PORT: '0', METRICS_PORT: '-1' }, ['npm', ['start', '--silent']]);
    const listening = await listeningLine(child, out);
    const base = `http://127.0.0.1:${listening.port}`;
    expect(await fetch(`${base}/healthz`)).toHaveStatus(200);

    // Busy: requests in flight when the signal comes (each about 50 KB to build and send).
    const inFlight = Array.from({ length: 60 }, () =>
      fetch(`${base}/api/v1/openapi.json`).then(
        async (r) => (r.status === 200 && (await r.text()).length > 10_000 ? 'served' : `status ${r.status}`),
        (e: Error) => `failed: ${(e.cause as Error | undefined)?.message ?? e.message}`,
      ),
    );
    await new Promise((resolve) => setImmediate(resolve));
    child.kill('SIGTERM');
    const [code] = await exited;
    expect(code, out.stdout + out.stderr).toBe(0);
    // Each one either served whole or never taken (the port closed first): none cut.
    for (const r of await Promise.all(inFlight)) expect(r).toMatch(/^served$|^failed: .*(ECONNREFUSED|ECONNRESET|other side closed)/);
    await vi.waitFor(() => expect(jsonLines(out.stdout).map((l) => l.msg)).toContain('stopped'), { timeout: 30_000, interval: 50 });
    await vi.waitFor(async () => expect(await fetch(`${base}/healthz`).then(() => 'served', () => 'refused')).toBe('refused'), { timeout: 30_000, interval: 100 });
  }, 300_000);
});

// An outside probe (stop 38): answers sent while the server was shutting down still said
// `Connection: keep-alive`, then the socket closed; keep-alive clients sent their next request
// into it and lost it. An answer begun after the signal now says `Connection: close`.
// The real server on the test database, a Pro key, and the listings locked by another
// transaction: an export then waits on the lock, in flight, nothing sent yet.
async function serverWithListingsLocked() {
  const { createKey } = await import('../helpers/factory.js');
  const pro = await createKey(t.db, 'pro');
  const server = startServer({ DATABASE_URL: t.url, PORT: '0', METRICS_PORT: '-1' });
  const listening = await listeningLine(server.child, server.out);
  const lock = await t.db.transaction();
  await lock.raw('LOCK TABLE listings IN ACCESS EXCLUSIVE MODE');
  return { ...server, pro, port: listening.port!, lock };
}

describe('SIGTERM with a keep-alive client', () => {
  it('the answer in flight says Connection: close, and the connection closes after it', async () => {
    const { child, out, exited, pro, port, lock } = await serverWithListingsLocked();
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (d) => (received += d));
    const closed = once(socket, 'close');
    socket.write(`GET /api/v1/listings/export HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${pro.key}\r\nConnection: keep-alive\r\n\r\n`);
    await vi.waitFor(
      async () => expect(Number((await t.db.raw(`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).rows[0].n)).toBeGreaterThan(0),
      { timeout: 30_000, interval: 20 },
    );
    child.kill('SIGTERM');
    await vi.waitFor(() => expect(jsonLines(out.stdout).map((l) => l.msg)).toContain('shutting down'), { timeout: 30_000, interval: 20 });
    await lock.rollback();
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    const head = received.slice(0, received.indexOf('\r\n\r\n')).toLowerCase();
    expect(head).toContain('connection: close');
    expect(head).not.toContain('keep-alive');
    const [code] = await exited;
    expect(code, out.stdout + out.stderr).toBe(0);
  }, 300_000);
});

// Stop 45, an outside probe: at SIGTERM the idle keep-alive connections were destroyed at once
// (http.Server#close), and a request a client had just sent on one was reset, unanswered (11 of
// 30 keep-alive clients under load). Now they are kept while the process drains: a request on
// one is answered, `Connection: close`.
describe('SIGTERM with an idle keep-alive connection', () => {
  it('a request sent on it after the signal is answered, Connection: close, and the connection closes after it', async () => {
    const { child, out, exited, pro, port, lock } = await serverWithListingsLocked();
    try {
      // The idle connection: one request answered, kept alive.
      const idle = net.connect(port, '127.0.0.1');
      let received = '';
      idle.on('data', (d) => (received += d));
      const closed = once(idle, 'close');
      idle.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      await vi.waitFor(() => expect(received).toMatch(/^HTTP\/1\.1 200 [\s\S]*\r\n\r\n/), { timeout: 30_000, interval: 20 });
      expect(received.toLowerCase()).toContain('connection: keep-alive');
      received = '';
      // Another request in flight (an export waiting on the lock), so the process drains.
      const busy = net.connect(port, '127.0.0.1');
      busy.on('data', () => undefined);
      busy.write(`GET /api/v1/listings/export HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${pro.key}\r\n\r\n`);
      await vi.waitFor(
        async () => expect(Number((await t.db.raw(`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).rows[0].n)).toBeGreaterThan(0),
        { timeout: 30_000, interval: 20 },
      );
      child.kill('SIGTERM');
      await vi.waitFor(() => expect(jsonLines(out.stdout).map((l) => l.msg)).toContain('shutting down'), { timeout: 30_000, interval: 20 });
      idle.write(`GET /api/v1/communes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${pro.key}\r\n\r\n`);
      await closed;
      expect(received).toMatch(/^HTTP\/1\.1 200 /);
      expect(received.slice(0, received.indexOf('\r\n\r\n')).toLowerCase()).toContain('connection: close');
      // New connections are refused meanwhile.
      expect(await fetch(`http://127.0.0.1:${port}/healthz`).then(() => 'served', () => 'refused')).toBe('refused');
      busy.destroy();
    } finally {
      await lock.rollback();
    }
    const [code] = await exited;
    expect(code, out.stdout + out.stderr).toBe(0);
  }, 300_000);
});

describe('SIGTERM with a request still waiting on the database after the 10 s drain', () => {
  // An outside probe: such a request's client got an empty reply (the connection cut), and the
  // access log said 200.
  it('is answered 503 with Retry-After, logged so, and the process ends', async () => {
    const { createKey } = await import('../helpers/factory.js');
    const pro = await createKey(t.db, 'pro');
    // The statement bound past the drain: the request is still waiting when the drain ends.
    const server = startServer({ DATABASE_URL: t.url, PORT: '0', METRICS_PORT: '-1', DB_STATEMENT_TIMEOUT_MS: '60000', LOG_LEVEL: 'info' });
    const { child, out, exited } = server;
    const { port } = await listeningLine(child, out);
    const lock = await t.db.transaction();
    try {
      await lock.raw('LOCK TABLE listings IN ACCESS EXCLUSIVE MODE');
      const socket = net.connect(port!, '127.0.0.1');
      let received = '';
      socket.on('data', (d) => (received += d));
      const closed = once(socket, 'close');
      socket.write(`GET /api/v1/listings/export HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${pro.key}\r\n\r\n`);
      await vi.waitFor(
        async () => expect(Number((await t.db.raw(`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).rows[0].n)).toBeGreaterThan(0),
        { timeout: 30_000, interval: 20 },
      );
      child.kill('SIGTERM');
      await closed;
      expect(received).toMatch(/^HTTP\/1\.1 503 /);
      expect(received).toMatch(/\r\nRetry-After: 1\r\n/i);
      expect(received).toContain('This server process is stopping');
    } finally {
      await lock.rollback();
    }
    const [code] = await exited;
    expect(code, out.stdout + out.stderr).toBe(0);
    const lines = jsonLines(out.stdout);
    expect(lines.find((l) => /still running after 10 s/.test(String(l.msg)))).toMatchObject({ answered_503: 1 });
    const logged = lines as unknown as { req?: { url?: string }; res?: { statusCode?: number } }[];
    expect(logged.filter((l) => /\/listings\/export/.test(String(l.req?.url))).map((l) => l.res?.statusCode)).not.toContain(200);
  }, 300_000);
});

describe('SIGTERM after a client that pipelined and went away', () => {
  // An outside probe: answers queued behind one still being written (pipelining) never emit
  // 'close' when the client leaves; they stayed "in flight" (and held in memory) for ever, and
  // every shutdown waited its full 10 s.
  it('the answers queued on its connection are not in flight any more: the shutdown does not wait for them', async () => {
    const { child, out, exited, pro, port, lock } = await serverWithListingsLocked();
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    const get = (p: string) => `GET ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${pro.key}\r\n\r\n`;
    // The export waits on the lock; the two after it are answered at once, into the queue.
    socket.write(get('/api/v1/listings/export') + get('/healthz') + get('/healthz'));
    await vi.waitFor(
      async () => expect(Number((await t.db.raw(`SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).rows[0].n)).toBeGreaterThan(0),
      { timeout: 30_000, interval: 20 },
    );
    socket.destroy();
    await lock.rollback();
    // The export's handler sees its client gone and ends.
    await vi.waitFor(
      async () => expect(Number((await t.db.raw(`SELECT count(*) AS n FROM pg_stat_activity WHERE state = 'active' AND datname = current_database() AND pid <> pg_backend_pid()`)).rows[0].n)).toBe(0),
      { timeout: 30_000, interval: 50 },
    );
    child.kill('SIGTERM');
    const [code] = await exited;
    expect(code, out.stdout + out.stderr).toBe(0);
    const msgs = jsonLines(out.stdout).map((l) => l.msg);
    expect(msgs).toContain('stopped');
    expect(msgs.filter((m) => /still running/.test(m))).toEqual([]);
  }, 300_000);
});
