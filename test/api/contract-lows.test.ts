import { createServer } from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { LiveState } from '../../src/cache/live-state.js';
import { SORTS } from '../../src/domain/search.js';
import { useConditionalGet } from '../../src/http/conditional.js';
import { buildOpenApiDocument } from '../../src/http/openapi.js';
import type { AnswerReplay } from '../../src/http/replay.js';
import { startingListener } from '../../src/http/raw-responses.js';
import { takeMarketSnapshot } from '../../src/repositories/market-snapshots.js';
import { STYLE_PATH } from '../../src/web/assets.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, buildTestApp, createKey, insertListing, silentLogger } from '../helpers/factory.js';

// Low-severity differences an outside contract probe found between the OpenAPI document, the
// operations guide and what the server sends:
// 1. /healthz (and /readyz) answer 503 `unavailable` with Retry-After while the service starts;
//    the document did not say so.
// 2. Error answers carried an ETag computed over a body that names the request (request_id):
//    a validator that differs on every answer. No answer but a 2xx (and its 304) has one.
// 3. A 304 carried Content-Type (RFC 9110 §15.4.5: no content metadata on a 304).
// 4. ListingsPage.meta.sort was any string in the document; it is one of the sort values.

const t = useTestContext({ redis: true });
const lives: LiveState[] = [];
let app: App;
let port: number;
let listingId: string;
const doc = buildOpenApiDocument({ serverUrl: 'https://api.example.test' });
type Responses = Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }>;
const responsesOf = (path: string) => (doc.paths as unknown as Record<string, { get: { responses: Responses } }>)[path].get.responses;

beforeAll(async () => {
  for (let i = 0; i < 30; i++) {
    const l = await insertListing(t.db, { commune: 'Mamer', title: `Flat ${i} in Mamer with a title long enough to make a page over a kilobyte` });
    listingId ??= l.id;
  }
  await takeMarketSnapshot(t.db, { day: '2026-11-19', takenAt: new Date('2026-11-19T03:00:00.000Z') });
  // With the keys and data version held in memory, so that repeated answers are sent again
  // without Express (src/http/replay.ts), as in production.
  const live = new LiveState().start(t.url, silentLogger, 100);
  lives.push(live);
  expect(await live.ready(10_000)).toBe(true);
  app = await buildTestApp(t.db, { live, redis: t.redis, redisPrefix: `${t.redisPrefix}app:` });
  port = (await t.listen(app)).port;
});

afterAll(async () => {
  await Promise.all(lives.map((l) => l.close()));
});

// One exchange over a plain socket: the status and the header lines exactly as sent (names as
// written, repeated ones kept), not as a client library rebuilds them.
interface RawAnswer {
  status: number;
  headers: [string, string][];
  body: string;
}
function rawGet(path: string, headers: Record<string, string> = {}, method = 'GET', to = port): Promise<RawAnswer> {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: api.example.test', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), 'Connection: close', '', ''];
  return new Promise((resolve, reject) => {
    const sock = net.connect(to, '127.0.0.1', () => sock.write(lines.join('\r\n')));
    let all = '';
    sock.setEncoding('latin1');
    sock.on('data', (d) => (all += d));
    sock.on('error', reject);
    sock.on('end', () => {
      const end = all.indexOf('\r\n\r\n');
      const [statusLine, ...headerLines] = all.slice(0, end).split('\r\n');
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]),
        headers: headerLines.map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
        body: all.slice(end + 4),
      });
    });
  });
}
const header = (a: RawAnswer, name: string) => a.headers.find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
const names = (a: RawAnswer) => a.headers.map(([k]) => k.toLowerCase());

describe('1. the 503 of a starting service in the OpenAPI document', () => {
  it('/healthz, /readyz and /api/v1/openapi.json list the 503 problem+json with Retry-After', () => {
    for (const path of ['/healthz', '/readyz', '/api/v1/openapi.json']) {
      const r503 = responsesOf(path)['503'];
      expect(r503, path).toBeDefined();
      expect(Object.keys(r503.headers ?? {}), path).toContain('Retry-After');
      expect(r503.content?.['application/problem+json']?.schema, path).toEqual({ $ref: '#/components/schemas/Problem' });
    }
    // /readyz: its own 503 (a dependency down) keeps its checks body.
    expect(responsesOf('/readyz')['503'].content?.['application/json']?.schema).toEqual({ $ref: '#/components/schemas/Readiness' });
    expect(Object.keys(responsesOf('/readyz')['200'].content ?? {})).toEqual(['application/json']);
  });

  it('is what the starting listener sends on those paths', async () => {
    const starting = createServer(startingListener).listen(0, '127.0.0.1');
    await new Promise((resolve) => starting.once('listening', resolve));
    try {
      for (const path of ['/healthz', '/readyz', '/api/v1/openapi.json']) {
        const a = await rawGet(path, {}, 'GET', (starting.address() as AddressInfo).port);
        expect(a.status, path).toBe(503);
        expect(header(a, 'Retry-After'), path).toBe('1');
        expect(header(a, 'Content-Type'), path).toBe('application/problem+json');
        expect(Object.keys(responsesOf(path)[String(a.status)].content ?? {}), path).toContain('application/problem+json');
        expect(JSON.parse(a.body).code, path).toBe('unavailable');
      }
    } finally {
      starting.closeAllConnections();
      await new Promise((resolve) => starting.close(resolve));
    }
  });

  it('health answers are documented without an ETag (they carry none)', () => {
    for (const path of ['/healthz', '/readyz']) {
      for (const [status, r] of Object.entries(responsesOf(path))) expect(Object.keys(r.headers ?? {}), `${path} ${status}`).not.toContain('ETag');
    }
  });
});

describe('2. no ETag on answers that are not 2xx', () => {
  it('problem answers of the API, the docs and the pages carry none, GET or HEAD; 2xx answers keep theirs', async () => {
    const pro = await createKey(t.db, 'pro');
    const free = await createKey(t.db, 'free');
    const day = new Date().toISOString().slice(0, 10);
    await t.redis.set(`${t.redisPrefix}app:quota:${free.id}:${day}`, '100', 'PX', 86_400_000);
    const errors: [string, RawAnswer][] = [];
    for (const method of ['GET', 'HEAD']) {
      errors.push(
        [`${method} 400`, await rawGet('/api/v1/listings?per_page=0', bearer(pro.key), method)],
        [`${method} 400 unknown parameter`, await rawGet('/api/v1/communes?x=1', bearer(pro.key), method)],
        [`${method} 401`, await rawGet('/api/v1/listings', {}, method)],
        [`${method} 404 listing`, await rawGet('/api/v1/listings/lst_00000000000000000000', bearer(pro.key), method)],
        [`${method} 404 route`, await rawGet('/api/v1/nothing', bearer(pro.key), method)],
        [`${method} 404 outside the API`, await rawGet('/nothing-here', {}, method)],
        [`${method} 416 docs asset`, await rawGet('/docs/assets/swagger-ui.css', { Range: 'bytes=99999999-' }, method)],
        [`${method} 404 page`, await rawGet('/listings/lst_00000000000000000000', {}, method)],
      );
    }
    errors.push(['GET 429 quota', await rawGet('/api/v1/communes', bearer(free.key))]);
    // A refusal sent again without Express (src/http/replay.ts) carries none either.
    const served = (app.locals.replay as AnswerReplay).served;
    errors.push(['GET 429 quota, replayed', await rawGet('/api/v1/communes', bearer(free.key))]);
    expect((app.locals.replay as AnswerReplay).served).toBe(served + 1);
    errors.push(['HEAD 429 quota', await rawGet('/api/v1/communes', bearer(free.key), 'HEAD')]);
    errors.push(['POST 405', await rawGet('/api/v1/listings', bearer(pro.key), 'POST')]);
    for (const [name, a] of errors) {
      expect(a.status, name).toBeGreaterThanOrEqual(400);
      expect(header(a, 'ETag'), name).toBeUndefined();
    }
    expect(errors.find(([n]) => n === 'GET 416 docs asset')![1].status).toBe(416);
    expect(errors.find(([n]) => n === 'GET 429 quota')![1].status).toBe(429);

    for (const path of ['/api/v1/listings', '/api/v1/communes', '/api/v1/stats', '/api/v1/openapi.json', '/docs/', '/docs/assets/swagger-ui.css', STYLE_PATH]) {
      const ok = await rawGet(path, bearer(pro.key));
      expect(ok.status, path).toBe(200);
      expect(header(ok, 'ETag'), path).toMatch(/^(W\/)?"/);
    }
  });
});

describe('3. a 304 carries no Content-Type, Content-Length or Content-Encoding', () => {
  it('on every path that answers 304, after full and replayed answers, whatever the encoding, GET and HEAD', async () => {
    const pro = await createKey(t.db, 'pro');
    const free = await createKey(t.db, 'free');
    const paths: [string, Record<string, string>][] = [
      ['/api/v1/listings?commune=Mamer&per_page=25', bearer(pro.key)],
      ['/api/v1/listings?commune=Mamer&per_page=25&sort=price', bearer(free.key)],
      [`/api/v1/listings/${listingId}`, bearer(pro.key)],
      ['/api/v1/market/prices?commune=Mamer', bearer(pro.key)],
      ['/api/v1/market/history?commune=Mamer', bearer(pro.key)],
      ['/api/v1/communes', bearer(pro.key)],
      ['/api/v1/communes', bearer(free.key)],
      ['/api/v1/stats', {}],
      ['/api/v1/openapi.json', {}],
      ['/docs/', {}],
      ['/docs/init.js', {}],
      ['/docs/assets/swagger-ui.css', {}],
      [STYLE_PATH, {}],
    ];
    const replay = app.locals.replay as AnswerReplay;
    let replayed = 0;
    for (const encoding of ['gzip', 'br', 'identity']) {
      for (const [path, auth] of paths) {
        const headers = { ...auth, 'Accept-Encoding': encoding };
        const first = await rawGet(path, headers);
        expect(first.status, path).toBe(200);
        const before = replay.served;
        const again = await rawGet(path, headers);
        expect(again.status, path).toBe(200);
        replayed += replay.served - before;
        const etag = header(again, 'ETag')!;
        expect(etag, path).toBeDefined();
        for (const method of ['GET', 'HEAD']) {
          for (const conditional of [{ 'If-None-Match': etag }, { 'If-None-Match': etag, 'Cache-Control': 'no-cache' }] as Record<string, string>[]) {
            const a = await rawGet(path, { ...headers, ...conditional }, method);
            const name = `${method} ${path} (${encoding})`;
            expect(a.status, name).toBe(304);
            expect(a.body, name).toBe('');
            for (const h of ['content-type', 'content-length', 'content-encoding', 'transfer-encoding']) expect(names(a), `${name}: ${h}`).not.toContain(h);
            expect(header(a, 'ETag'), name).toBe(etag);
            expect(header(a, 'X-Request-Id'), name).toBeDefined();
            expect(header(a, 'Vary') ?? '', name).toMatch(/Accept-Encoding/);
          }
        }
      }
    }
    // The second identical requests were answered by the replay (keyed and open answers alike).
    expect(replayed).toBeGreaterThan(0);
  });
});

describe('3. whatever a handler set, its 304 has no content metadata and its error no ETag', () => {
  it('holds for answers sent by res.send with headers of their own (useConditionalGet)', async () => {
    const bare = express();
    useConditionalGet(bare);
    const zipped = gzipSync('{"a":1}');
    bare.get('/zipped', (_req, res) => {
      res.setHeader('Content-Encoding', 'gzip');
      res.type('application/json').send(zipped);
    });
    bare.get('/failed', (_req, res) => {
      res.status(500).type('application/problem+json').send(JSON.stringify({ request_id: Math.random() }));
    });
    const server = createServer(bare).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const to = (server.address() as AddressInfo).port;
    try {
      const full = await rawGet('/zipped', {}, 'GET', to);
      expect(full.status).toBe(200);
      expect(header(full, 'Content-Encoding')).toBe('gzip');
      const etag = header(full, 'ETag')!;
      const notModified = await rawGet('/zipped', { 'If-None-Match': etag }, 'GET', to);
      expect(notModified.status).toBe(304);
      expect(header(notModified, 'ETag')).toBe(etag);
      for (const h of ['content-type', 'content-length', 'content-encoding']) expect(names(notModified)).not.toContain(h);
      const failed = await rawGet('/failed', {}, 'GET', to);
      expect(failed.status).toBe(500);
      expect(header(failed, 'ETag')).toBeUndefined();
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('4. ListingsPage.meta.sort', () => {
  it('is the sort parameter’s enum in the document, and the answers keep to it', async () => {
    const page = doc.components.schemas.ListingsPage as { properties: { meta: { properties: { sort: { type?: string; enum?: string[] } } } } };
    const param = doc.paths['/api/v1/listings'].get.parameters.find((p) => p.name === 'sort')!;
    expect(page.properties.meta.properties.sort.enum).toEqual([...SORTS]);
    expect(page.properties.meta.properties.sort.enum).toEqual((param.schema as { enum: string[] }).enum);
    const pro = await createKey(t.db, 'pro');
    for (const query of ['', '?sort=-price', '?lat=49.6&lng=6.05&radius_km=20']) {
      const res = await request(app).get(`/api/v1/listings${query}`).set(bearer(pro.key));
      expect(res, query).toHaveStatus(200);
      expect(SORTS, query).toContain(res.body.meta.sort);
    }
  });
});

describe('5. the health checks take any query parameter', () => {
  it('answer 200 to a cache-busting parameter (load balancers add them), unlike the API paths', async () => {
    for (const path of ['/healthz?_=1700000000', '/readyz?nocache=x']) expect(await request(app).get(path), path).toHaveStatus(200);
    expect(await request(app).get('/api/v1/stats?_=1')).toHaveStatus(400);
  });
});
