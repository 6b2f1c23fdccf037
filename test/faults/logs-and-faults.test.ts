import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import request from 'supertest';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { unavailableCause } from '../../src/db/errors.js';
import { mulberry32 } from '../../src/demo/generate.js';
import { holdsKeyBody } from '../../src/http/logged-path.js';
import { createDb } from '../../src/db/knex.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, buildTestApp, createKey, insertListing } from '../helpers/factory.js';

const t = useTestContext();

beforeAll(async () => {
  await insertListing(t.db);
});

function capture() {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) {
        raw.push(l);
        lines.push(JSON.parse(l));
      }
      cb();
    },
  });
  const logger = pino(
    { level: 'info', redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' } },
    stream,
  );
  return { logger, lines, raw };
}

describe('request logs', () => {
  it('one JSON line per request with method, path, status, duration, request id and key id; never the key', async () => {
    const { logger, lines, raw } = capture();
    const app = await buildTestApp(t.db, { logger });
    const k = await createKey(t.db, 'free');
    const res = await request(app).get('/api/v1/listings?commune=Luxembourg').set(bearer(k.key)).set('Cookie', 'session=secret');
    expect(res).toHaveStatus(200);
    await request(app).get('/api/v1/listings').set(bearer('lfk_' + 'z'.repeat(43)));
    const reqLines = lines.filter((l) => l.req);
    expect(reqLines).toHaveLength(2);
    const first = reqLines[0] as { req: { method: string; path: string }; res: { status: number }; responseTime: number; request_id: string; key_id: string };
    expect(first.req).toEqual({ method: 'GET', path: '/api/v1/listings' });
    expect(first.res.status).toBe(200);
    expect(typeof first.responseTime).toBe('number');
    expect(first.request_id).toBe(res.headers['x-request-id']);
    expect(first.key_id).toBe(k.id);
    expect((reqLines[1] as { res: { status: number } }).res.status).toBe(401);
    // Every key once per line (pino writes a child's bindings and the line's own fields side by
    // side): log pipelines such as Elasticsearch refuse or merge duplicate keys.
    for (const line of raw.filter((l) => l.includes('"req":'))) {
      for (const k of ['"req"', '"res"', '"request_id"', '"key_id"', '"responseTime"']) expect(line.split(k + ':').length - 1, `${k} in ${line}`).toBeLessThanOrEqual(1);
    }
    const all = raw.join('\n');
    expect(all).not.toContain(k.key);
    expect(all).not.toContain('z'.repeat(43));
    expect(all).not.toContain('session=secret');
  });
});

// An outside probe of stop 57: a request whose client went away before it was answered was
// logged as a 200 that was never sent.
it('logs a request its client left before the answer with no status, as aborted', async () => {
  const { logger, lines } = capture();
  const app = await buildTestApp(t.db, { logger });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    const sock = net.connect(port, '127.0.0.1');
    await once(sock, 'connect');
    const received = once(server, 'request');
    sock.write(`POST /api-keys/sign-in HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 5000\r\n\r\nemail=a`);
    await received;
    sock.destroy();
    await vi.waitFor(() => expect(lines.filter((l) => l.req)).toHaveLength(1), { timeout: 30_000 });
    const line = lines.find((l) => l.req) as { res: { status: unknown; aborted?: boolean }; msg: string };
    expect(line.res).toEqual({ status: null, aborted: true });
    expect(line.msg).toMatch(/^POST \/api-keys\/sign-in aborted \(no answer sent\) \d+ms$/);
  } finally {
    server.close();
  }
});

// An outside probe of stop 52: a key pasted into the path was logged in full.
it('masks a key written in the path, percent-encoded or not, with or without a valid Authorization', async () => {
  const { logger, raw } = capture();
  const app = await buildTestApp(t.db, { logger });
  const k = await createKey(t.db, 'pro');
  const encoded = `lfk%5F${k.key.slice(4)}`;
  for (const path of [`/api/v1/listings/${k.key}`, `/api/v1/${k.key}/listings`, `/api/v1/listings/${encoded}`, `/${k.key.toUpperCase()}`]) {
    await request(app).get(path);
    await request(app).get(path).set(bearer(k.key));
  }
  const all = raw.join('\n');
  expect(all).not.toContain(k.key.slice(4));
  expect(all).not.toContain(k.key.slice(4).toUpperCase());
  expect(all).toContain('"path":"/api/v1/listings/lfk_[redacted]"');
  expect(all).toContain('"path":"/api/v1/lfk_[redacted]/listings"');
});

// An outside probe of stop 57: after a percent-escape (which ends in a letter or digit) the key was
// taken for the middle of a word, and so was one with a letter of its own escaped; a key sent as
// the request id was logged and echoed.
it('masks a key after a percent-escape or with its letters escaped, and never keeps a key as the request id', async () => {
  const { logger, raw } = capture();
  const app = await buildTestApp(t.db, { logger });
  const k = await createKey(t.db, 'pro');
  const body = k.key.slice(4);
  const paths = [`Bearer%20${k.key}`, `%20${k.key}`, `%22${k.key}%22`, `key%3D${k.key}`, `%6C${k.key.slice(1)}`, `%256Cfk%5F${body}`, `lfk_${body.slice(0, 3)}%41${body.slice(4)}`];
  for (const p of paths) await request(app).get(`/api/v1/listings/${p}`).set(bearer(k.key));
  // Its re-check: encoded three times, and cut across segments (the rest of the path masked).
  for (const p of [`%25256Cfk_${body}`, `lfk_${body.slice(0, 22)}/${body.slice(22)}`, `lfk_/${body}`]) await request(app).get(`/api/v1/listings/${p}`).set(bearer(k.key));
  await request(app).get(`/api/v1/listings%2F${k.key}`).set(bearer(k.key));
  const echoed = await request(app).get('/api/v1/listings?per_page=1').set(bearer(k.key)).set('X-Request-Id', k.key);
  expect(echoed.headers['x-request-id']).not.toContain(body);
  expect(echoed.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  const all = raw.join('\n');
  expect(all).not.toContain(body.slice(0, 20));
  expect(all).not.toContain(body.slice(5));
  expect(all).not.toContain(body.slice(22));
  expect(all.split('"path":"/api/v1/listings/lfk_[redacted]"').length - 1).toBeGreaterThanOrEqual(paths.length + 3);
  // An escaped path without a key is logged as it came.
  await request(app).get('/api/v1/listings/lst_%41bc').set(bearer(k.key));
  expect(raw.join('\n')).toContain('"path":"/api/v1/listings/lst_%41bc"');
});

// An outside probe of stop 58: a key's characters without their prefix, or behind a mistyped
// one, were logged as sent; its re-check: with one character slipped in, one left out, typed
// fullwidth or in look-alike letters.
it("masks a key's characters without its prefix, mistyped, cut by one character, fullwidth or look-alike; keeps hex ids and UUIDs", async () => {
  const { logger, raw } = capture();
  const app = await buildTestApp(t.db, { logger });
  const k = await createKey(t.db, 'pro');
  const body = k.key.slice(4);
  const [a, b] = [body.slice(0, 21), body.slice(21)];
  const fullwidth = [...k.key].map((c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0)).join('');
  const cyrillic = [...body].map((c) => ({ a: 'а', e: 'е', o: 'о', p: 'р', c: 'с', y: 'у', x: 'х', A: 'А', B: 'В', E: 'Е', K: 'К', M: 'М', H: 'Н', O: 'О', P: 'Р', C: 'С', T: 'Т', X: 'Х' })[c] ?? c).join('');
  const paths = [
    body, `lfk-${body}`, `lfk%5C_${body}`, `lfk%E2%80%8B_${body}`, `%EF%BD%8Cfk_${body}`, `x.${body}.json`,
    `${a}%E2%80%8B${b}`, `${a}%C2%AD${b}`, `${a}%20${b}`, `${a}.${b}`, `${a}%2F${b}`, `${a}%u0041${b}`, `Bearer%20${a}~${b}`,
    body.slice(0, 42), body.slice(1), body.slice(0, 34), encodeURIComponent(fullwidth), encodeURIComponent(cyrillic),
    // Its second re-check: two characters between the parts, three parts, combining marks.
    `${a}..${b}`, `${a}%0D%0A${b}`, `${a}%FF%FF${b}`, `${body.slice(0, 14)},%20${body.slice(14, 28)};;${body.slice(28)}`,
    encodeURIComponent([...body].map((c) => c + '\u0308').join('')),
  ];
  for (const p of paths) await request(app).get(`/api/v1/listings/${p}`).set(bearer(k.key));
  for (const id of [body, body.slice(0, 42), `${a}.${b}`, `${a}:${b}`, `trace:${body}`, `${a}..${b}`, `${a}.:${b}`]) {
    const res = await request(app).get('/api/v1/listings?per_page=1').set(bearer(k.key)).set('X-Request-Id', id);
    expect(res.headers['x-request-id'], id).toMatch(/^[0-9a-f-]{36}$/);
  }
  const all = raw.join('\n');
  // No 16 characters of the key in a row, as written or once decoded.
  for (let i = 0; i + 16 <= body.length; i++) expect(all, `the key's characters ${i}..${i + 16}`).not.toContain(body.slice(i, i + 16));
  expect(all.split('"path":"/api/v1/listings/[redacted]"').length - 1).toBe(paths.length);
  // Cut by a `/`: every part (its third re-check: `//`, `/./`, a letter between, four parts), and
  // escaped nine times.
  // (Four pieces of a fixed key-shaped text, each with a capital, as a random key's pieces of 11
  // characters are 99.7 % of the time.)
  const shaped = 'DlIoUMCjB49laNA_AyqvwLh34jKfm95jBwA8lz6KDsQ';
  const pieces = [shaped.slice(0, 11), shaped.slice(11, 22), shaped.slice(22, 33), shaped.slice(33)];
  for (const p of [`${a}/${b}`, `${a}//${b}`, `${a}/./${b}`, `${a}/x/${b}`, pieces.join('/')]) await request(app).get(`/api/v1/listings/${p}`).set(bearer(k.key));
  let nine = [...k.key].map((c) => '%' + c.charCodeAt(0).toString(16)).join('');
  for (let i = 0; i < 8; i++) nine = nine.replace(/%/g, '%25');
  await request(app).get(`/api/v1/listings/${nine}`).set(bearer(k.key));
  const logged = raw.join('\n');
  for (const expected of ['[redacted]/[redacted]"', '[redacted]//[redacted]"', '[redacted]/./[redacted]"', '[redacted]/[redacted]/[redacted]"', '[redacted]/[redacted]/[redacted]/[redacted]"']) {
    expect(logged).toContain(`"path":"/api/v1/listings/${expected}`);
  }
  for (let i = 0; i + 16 <= body.length; i++) expect(logged, `the key's characters ${i}..${i + 16}`).not.toContain(body.slice(i, i + 16));
  expect(logged).not.toContain(nine.slice(0, 60));
  // What cannot be a key is logged, and a client's id kept, as sent: 64 hex digits, a UUID, a
  // trace parent, a ULID.
  const hex = 'ab'.repeat(32);
  const kept = await request(app).get(`/api/v1/listings/${hex}`).set(bearer(k.key)).set('X-Request-Id', hex.toUpperCase());
  expect(kept.headers['x-request-id']).toBe(hex.toUpperCase());
  for (const id of ['123e4567-e89b-12d3-a456-426614174000', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', '01ARZ3NDEKTSV4RRFFQ69G5FAV', 'MyService-7f3a9c2e-4b1d-4e8f-9a6c-0d2e5f7a8b9c', 'Checkout-Service-Request-000123', '4BF92F3577B34DA6A3CE929D0E0E4736ABCDEF12', 'MyService-01JDQ4K7ZC3M9X2VYB8T6N5RWA']) {
    expect((await request(app).get('/api/v1/listings?per_page=1').set(bearer(k.key)).set('X-Request-Id', id)).headers['x-request-id']).toBe(id);
  }
  for (const path of [`/api/v1/listings/${hex}`, '/api/v1/listings/lst_0123456789abcdef0123', '/docs/assets/swagger-ui-standalone-preset.js', '/api-keys/keys/key_0123456789abcdef/revoke', '/listings/lst_0123456789abcdef0123']) {
    await request(app).get(path).set(bearer(k.key));
    expect(raw.join('\n')).toContain(`"path":"${path}"`);
  }
});

// Its re-check of stop 59: keys with a piece of theirs that runs of capitals and digits (taken for a
// ULID) or hex left out of the count, logged in the clear without their prefix, behind `lfk-`, or a
// few characters short (the four secrets are the re-check's own); a key spelt in overlong UTF-8
// escapes; and 16 KB paths, each costly to mask.
it('masks keys whose pieces look like ids, keys in overlong escapes, and logs a long path cut', async () => {
  const { logger, raw } = capture();
  const app = await buildTestApp(t.db, { logger });
  const k = await createKey(t.db, 'pro');
  const s1 = '9dFU7zxYxOJod8vUxoWFOgOw8EyVj4f_-WNYQH2H8PM';
  const s2 = 'wLiN_IPKVIRQU8XMOGU8_968Am7-ChLA4Sl7F_6T1bY';
  const s3 = 'RxYbYjGO8vemG-znXcSbi-DA6VFYNF8T9FIR5ACQW-E';
  const s4 = 'DY66XLD8N4YMHC_VKOJ9A8HMHbalfGE_YGPpkZija8M';
  const overlong = [...k.key.slice(4)].map((c) => `%${(0xc0 | (c.charCodeAt(0) >> 6)).toString(16)}%${(0x80 | (c.charCodeAt(0) & 0x3f)).toString(16)}`).join('');
  const paths = [`/api/v1/listings/${s1.slice(4)}`, `/api/v1/listings/${s2}`, `/api/v1/listings/lfk-${s2}`, `/api/v1/${s3}/x`, `/api/v1/listings/${s4}`, `/api/v1/market/${overlong}`];
  for (const p of paths) await request(app).get(p).set(bearer(k.key));
  for (const id of [s1.slice(6), s2, `svc-${s2}`]) {
    expect((await request(app).get('/healthz').set('X-Request-Id', id)).headers['x-request-id'], id).toMatch(/^[0-9a-f-]{36}$/);
  }
  const all = raw.join('\n');
  for (const secret of [s1, s2, s3, s4, k.key.slice(4)]) for (let i = 0; i + 16 <= 43; i++) expect(all, `${secret} ${i}`).not.toContain(secret.slice(i, i + 16));
  expect(all).not.toContain(overlong.slice(0, 60));
  // 12 KB: the segments within its first 512 characters, masked as any path, and how many more
  // characters there were.
  const long = `/api/v1/listings/${'%25'.repeat(4000)}/${k.key}`;
  await request(app).get(long).set(bearer(k.key));
  const line = raw.at(-1)!;
  expect(line).toContain(`"path":"/api/v1/listings/...[${long.length - 17} more characters not logged]"`);
  expect(line.length).toBeLessThan(1500);
  expect(line).not.toContain(k.key.slice(4, 20));
});

// The same at scale, on the function the log uses: random keys (a seeded generator) without their
// prefix, behind `lfk-`, two characters short. Before stop 59's re-check, 9, 1 and 47 of 200,000
// were not recognised (bench/key-masking.ts); keys 8 characters short still are about 1 in
// 4,000 (hex runs of theirs left out), past what the docs promise ("a few characters short").
it('recognises every one of 60,000 random keys without their prefix, behind lfk-, or two characters short', () => {
  const rng = mulberry32(59);
  const missed: string[] = [];
  for (let n = 0; n < 60_000; n++) {
    const secret = Buffer.from(Array.from({ length: 32 }, () => Math.floor(rng() * 256))).toString('base64url');
    for (const form of [secret, `lfk-${secret}`, secret.slice(2)]) if (!holdsKeyBody(form)) missed.push(form);
  }
  expect(missed).toEqual([]);
});

describe('database faults', () => {
  it('answers 503 unavailable when PostgreSQL cannot be reached, failing at once on the refused connection; never a 500 or a hang', async () => {
    const dead = createDb('postgres://postgres@127.0.0.1:1/none', { poolMax: 2 });
    try {
      const { logger, lines } = capture();
      const app = await buildTestApp(t.db, { db: dead, logger });
      for (const path of ['/api/v1/stats', '/api/v1/listings']) {
        const res = await request(app).get(path).set(bearer('lfk_' + 'y'.repeat(43))).timeout(30_000);
        expect(res).toHaveStatus(503);
        expect(res.body.code).toBe('unavailable');
        expect(res.headers['retry-after']).toBe('5');
        expect(JSON.stringify(res.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|postgres/);
      }
      // Classified by its cause: the refused connection itself (knex passes the pool's create
      // error on to the waiting query), not a wait for a connection that never came free
      // (pool_timeout, after acquireConnectionTimeout).
      const unavailable = lines.filter((l) => l.msg === 'dependency unavailable');
      expect(unavailable.map((l) => l.cause)).toEqual(['unreachable', 'unreachable']);
      expect(unavailable.map((l) => (l.err as { code?: string }).code)).toEqual(['ECONNREFUSED', 'ECONNREFUSED']);
      // One stack per cause every few seconds, not one per request: an outage answers every
      // request with a 503. No request line carries pino-http's made-up error.
      expect(unavailable.map((l) => Boolean((l.err as { stack?: string }).stack))).toEqual([true, false]);
      expect(lines.filter((l) => String(l.msg).includes(' 503')).every((l) => l.err === undefined)).toBe(true);
    } finally {
      await dead.destroy();
    }
  });
});

describe("knex's own warnings", () => {
  it('go to the logger as JSON lines, each kind once every few seconds (an outage fails every connection)', async () => {
    const { logger, lines } = capture();
    const dead = createDb('postgres://postgres@127.0.0.1:1/none', { poolMax: 2, logger });
    try {
      for (let i = 0; i < 6; i++) await expect(dead.raw('SELECT 1')).rejects.toThrow();
    } finally {
      await dead.destroy();
    }
    const warnings = lines.filter((l) => l.component === 'knex');
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0].msg)).toMatch(/^Acquire connection error: Error: connect ECONNREFUSED/);
  });

  // Ctrl-C during the demo's first load: the pool is destroyed while a statement waits for a
  // connection; knex warned "Acquire connection error: Error: aborted" with a stack (stop 45's
  // note). That is the stop working, not a fault: no warning.
  it('leave out the connection requests the pool aborts as it is destroyed', async () => {
    const { logger, lines } = capture();
    const db = createDb(t.url, { poolMax: 1, logger });
    const trx = await db.transaction();
    // (A knex query starts when it is awaited: then() sends it now.)
    const waiting = db.raw('SELECT 1').then(
      () => 'served',
      (err: Error) => err.message,
    );
    await new Promise((r) => setTimeout(r, 50));
    const destroyed = db.destroy();
    await trx.commit();
    await destroyed;
    expect(await waiting).toMatch(/aborted/);
    expect(lines.filter((l) => (l.level as number) >= 40)).toEqual([]);
  });
});

describe('a statement timeout', () => {
  it('is a 503 with Retry-After on the HTML pages as on the API (one classifier, src/db/errors.ts), never a 500', async () => {
    const listing = await insertListing(t.db);
    const key = await createKey(t.db, 'pro');
    // The service's connections give up on a statement after 200 ms; another session holds
    // the listings table meanwhile, so every read of it runs into that timeout (57014).
    const slow = createDb(t.url, { poolMax: 2, statementTimeoutMs: 200 });
    const { logger, lines } = capture();
    const app = await buildTestApp(t.db, { db: slow, logger });
    const lock = await t.db.transaction();
    try {
      await lock.raw('LOCK TABLE listings IN ACCESS EXCLUSIVE MODE');
      const page = await request(app).get(`/listings/${listing.id}`).timeout(30_000);
      expect(page).toHaveStatus(503);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.headers['retry-after']).toBe('5');
      expect(page.text).toContain('Temporarily unavailable');
      const api = await request(app).get('/api/v1/listings').set(bearer(key.key)).timeout(30_000);
      expect(api).toHaveStatus(503);
      expect(api.body.code).toBe('unavailable');
      expect(api.headers['retry-after']).toBe('5');
    } finally {
      await lock.rollback();
      await slow.destroy();
    }
    expect(lines.filter((l) => l.msg === 'web page: dependency unavailable').map((l) => l.cause)).toEqual(['statement_timeout']);
    expect(lines.filter((l) => l.msg === 'dependency unavailable').map((l) => l.cause)).toEqual(['statement_timeout']);
  });
});

describe('the cause of a 503, as both error handlers log it', () => {
  it('names why the database could not serve, from the error code, and nothing else is a 503', () => {
    const cases: [unknown, string | null][] = [
      [{ code: 'ECONNREFUSED' }, 'unreachable'],
      [{ code: '08006' }, 'unreachable'],
      [{ code: '57P01' }, 'connection_lost'],
      [new Error('Connection terminated unexpectedly'), 'connection_lost'],
      [Object.assign(new Error('Knex: Timeout acquiring a connection'), { name: 'KnexTimeoutError' }), 'pool_timeout'],
      // knex adds the statement's SQL to a timeout waiting for a connection, too.
      [Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), { name: 'KnexTimeoutError', sql: 'select 1' }), 'pool_timeout'],
      [Object.assign(new Error('Defined query timeout of 12000ms exceeded when running query.'), { name: 'KnexTimeoutError', sql: 'select 1' }), 'no_answer'],
      [{ code: '57014' }, 'statement_timeout'],
      [{ code: '53300' }, 'resources'],
      [{ code: '22021' }, null],
      [{ code: '23505' }, null],
      [new Error('something else'), null],
      [null, null],
    ];
    for (const [err, cause] of cases) expect(unavailableCause(err), JSON.stringify(err)).toBe(cause);
  });
});
