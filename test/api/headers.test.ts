import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { inflateSync } from 'node:zlib';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { answerClientError, answerConnect, answerExpectation, requireHost, startingListener } from '../../src/http/raw-responses.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, insertListing } from '../helpers/factory.js';

const t = useTestContext({
  app: 'api',
  deps: { config: { PUBLIC_BASE_URL: 'https://api.example.test', TRUST_PROXY: false, STATS_RATE_LIMIT_PER_MINUTE: 2 } },
  keys: ['pro'],
});
let listingId: string;

beforeAll(async () => {
  listingId = (await insertListing(t.db)).id;
});

// Issue 10, item 12: a browser must never sniff an API answer into another type (an error
// body that echoes input, read as HTML, would be script).
describe('X-Content-Type-Options: nosniff on every API response', () => {
  it('is on answers, errors, 304s, preflights and the operational endpoints', async () => {
    const list = await request(t.app).get('/api/v1/listings').set(bearer(t.keys.pro));
    expect(list).toHaveStatus(200);
    const responses: [string, request.Response][] = [
      ['200 list', list],
      ['200 one', await request(t.app).get(`/api/v1/listings/${listingId}`).set(bearer(t.keys.pro))],
      ['304', await request(t.app).get('/api/v1/listings').set(bearer(t.keys.pro)).set('If-None-Match', list.headers.etag)],
      ['400', await request(t.app).get('/api/v1/listings?per_page=0').set(bearer(t.keys.pro))],
      ['401', await request(t.app).get('/api/v1/listings')],
      ['404 listing', await request(t.app).get('/api/v1/listings/lst_00000000000000000000').set(bearer(t.keys.pro))],
      ['404 route', await request(t.app).get('/api/v1/nothing').set(bearer(t.keys.pro))],
      ['404 outside the API', await request(t.app).get('/nothing-here')],
      ['405', await request(t.app).post('/api/v1/listings').set(bearer(t.keys.pro))],
      ['preflight', await request(t.app).options('/api/v1/listings').set('Origin', 'https://x.example').set('Access-Control-Request-Method', 'GET')],
      ['openapi', await request(t.app).get('/api/v1/openapi.json')],
      ['healthz', await request(t.app).get('/healthz')],
      ['stats', await request(t.app).get('/api/v1/stats')],
    ];
    await request(t.app).get('/api/v1/stats');
    responses.push(['429', await request(t.app).get('/api/v1/stats')]);
    expect(responses.find(([name]) => name === '304')![1]).toHaveStatus(304);
    expect(responses.find(([name]) => name === '429')![1]).toHaveStatus(429);
    for (const [name, res] of responses) expect(res.headers['x-content-type-options'], name).toBe('nosniff');
  });
});

// A server of a test on an ephemeral port, and its end.
async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function closed(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

// What the server answers without the app (src/http/raw-responses.ts, wired in src/server.ts):
// requests Node's HTTP parser refuses, and any request while the service is starting.
describe('X-Content-Type-Options: nosniff on the answers written without the app', () => {
  // One raw exchange: what is written, and everything the server sends back until it closes.
  async function exchange(port: number, text: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    const raw = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1', () => sock.write(text, 'latin1'));
      let got = '';
      sock.setEncoding('latin1');
      sock.on('data', (d) => (got += d));
      sock.on('end', () => resolve(got));
      sock.on('error', reject);
    });
    const [head, body = ''] = raw.split('\r\n\r\n');
    const [statusLine, ...lines] = head.split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]), headers, body };
  }

  it('a malformed request gets 400 with a problem body; oversized headers 431; a request while starting 503', async () => {
    const server = createServer({ requireHostHeader: false }, requireHost(startingListener));
    server.on('clientError', answerClientError);
    const port = await listening(server);
    try {
      // A raw non-ASCII byte in the request line: Node's parser refuses it before any listener.
      const bad = await exchange(port, 'GET /api/v1/stats?commune=L\u00ebtzebuerg HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(bad.status).toBe(400);
      expect(bad.headers['x-content-type-options']).toBe('nosniff');
      expect(bad.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(bad.body)).toMatchObject({ status: 400, code: 'invalid_parameter' });
      // Every answer carries a request id, in the header and the body alike (docs/spec/contract.md, section 1).
      expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(JSON.parse(bad.body).request_id).toBe(bad.headers['x-request-id']);

      // A control character in a header, and a method HTTP does not define: said as such.
      const ctl = await exchange(port, 'GET /api/v1/listings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer lfk_\u0001abc\r\n\r\n');
      expect(ctl.status).toBe(400);
      expect(JSON.parse(ctl.body).detail).toMatch(/header/);
      expect(ctl.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      // Another version in the request line: 505 (it was served as HTTP/1.1).
      for (const v of ['2.0']) {
        const other = await exchange(port, `GET /api/v1/listings HTTP/${v}\r\nHost: x\r\n\r\n`);
        expect(other.status, v).toBe(505);
        expect(JSON.parse(other.body).detail).toBe(`The request line must end in HTTP/1.1 (or HTTP/1.0), not HTTP/${v}`);
      }
      // `*` is for OPTIONS only (RFC 9110, section 9.3.7): the server's methods (it was 404).
      const star = await exchange(port, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(star.status).toBe(204);
      expect(star.headers.allow).toBe('GET, HEAD, OPTIONS');
      expect(star.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(star.body).toBe('');
      const getStar = await exchange(port, 'GET * HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(getStar.status).toBe(400);
      expect(JSON.parse(getStar.body).detail).toMatch(/\* is for OPTIONS only/);
      const foo = await exchange(port, 'FOO /api/v1/listings HTTP/1.1\r\nHost: x\r\n\r\n');
      expect(foo.status).toBe(400);
      expect(JSON.parse(foo.body).detail).toMatch(/method/);

      const big = await exchange(port, `GET /api/v1/listings HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      expect(big.status).toBe(431);
      expect(big.headers['x-content-type-options']).toBe('nosniff');
      expect(big.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);

      // A body framed two ways (request smuggling's tool).
      for (const [framing, said] of [
        // Either order (a probe of stop 44: Transfer-Encoding first was told "must be a number").
        ['Content-Length: 3\r\nTransfer-Encoding: chunked', /framed by Content-Length or by Transfer-Encoding, not both/],
        ['Transfer-Encoding: chunked\r\nContent-Length: 3', /framed by Content-Length or by Transfer-Encoding, not both/],
        ['Content-Length: 3x', /Content-Length must be a number/],
        // A number too large to count (an outside probe of stop 51 was told it was no number).
        ['Content-Length: 99999999999999999999', /Content-Length must be a number of bytes, digits only, that the server can count/],
        ['Content-Length: 3\r\nContent-Length: 4', /Content-Length may be sent once/],
      ] as const) {
        const res = await exchange(port, `POST /api/v1/listings HTTP/1.1\r\nHost: x\r\n${framing}\r\n\r\nabc`);
        expect(res.status, framing).toBe(400);
        expect(JSON.parse(res.body), framing).toMatchObject({ status: 400, detail: expect.stringMatching(said) });
        expect(res.headers['x-request-id'], framing).toMatch(/^[0-9a-f-]{36}$/);
      }

      // A body framed by a transfer coding other than chunked: the request is answered (here the
      // 400 that says why), and that is the only answer.
      const teGzip = await new Promise<string>((resolve, reject) => {
        const sock = net.connect(port, '127.0.0.1', () => sock.write('POST /api/v1/stats HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n'));
        let got = '';
        sock.setEncoding('latin1');
        sock.on('data', (d) => (got += d));
        sock.on('end', () => resolve(got));
        sock.on('error', reject);
      });
      expect(teGzip.match(/HTTP\/1\.1 \d{3} /g), teGzip).toHaveLength(1);
      // ... and that answer is a 400 that says why; two Host headers too (RFC 9112 §3.2, §6.3;
      // an outside probe: a GET with Transfer-Encoding: gzip and two Hosts were answered 200).
      expect(teGzip).toMatch(/^HTTP\/1\.1 400 /);
      for (const [request, said] of [
        ['GET /api/v1/communes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n', /Transfer-Encoding: chunked alone/],
        // A coding before chunked was not undone: the body read as if it were not there (an
        // outside probe of stop 46: a plain form sent so signed in).
        ['GET /api/v1/communes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n', /Transfer-Encoding: chunked alone, with no other coding/],
        ['GET /api/v1/communes HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n', /one Host header/],
      ] as const) {
        const res = await exchange(port, request);
        expect(res.status, request).toBe(400);
        expect(JSON.parse(res.body).detail, request).toMatch(said);
      }
      for (const te of ['chunked', 'Chunked', ' chunked ']) {
        expect((await exchange(port, `GET /api/v1/communes HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding:${te}\r\n\r\n0\r\n\r\n`)).status, te).toBe(503);
      }

      // HTTP/1.1 without Host (RFC 9112 §3.2); HTTP/1.0 needs none.
      const hostless = await exchange(port, 'GET /api/v1/listings HTTP/1.1\r\n\r\n');
      expect(hostless.status).toBe(400);
      expect(JSON.parse(hostless.body)).toMatchObject({ status: 400, detail: expect.stringMatching(/Host/), request_id: hostless.headers['x-request-id'] });
      expect((await exchange(port, 'GET /api/v1/listings HTTP/1.0\r\n\r\n')).status).toBe(503);

      const starting = await exchange(port, 'GET /api/v1/listings HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      expect(starting.status).toBe(503);
      expect(starting.headers['x-content-type-options']).toBe('nosniff');
      // A page of any origin calling while the service starts reads the 503 and its Retry-After.
      expect(starting.headers['access-control-allow-origin']).toBe('*');
      expect(starting.headers['access-control-expose-headers']).toMatch(/Retry-After/);
      expect(bad.headers['access-control-allow-origin']).toBe('*');
      expect(JSON.parse(starting.body)).toMatchObject({ status: 503, code: 'unavailable', request_id: starting.headers['x-request-id'] });
    } finally {
      await closed(server);
    }
  });

  it('CONNECT gets 405 naming the methods served; an unknown Expect 417; a request whose headers do not arrive in time 408', async () => {
    // Node checks for late requests every connectionsCheckingInterval: short ones here.
    const server = createServer({ connectionsCheckingInterval: 50, headersTimeout: 300, requestTimeout: 300 }, startingListener);
    server.on('clientError', answerClientError);
    server.on('connect', answerConnect);
    server.on('checkExpectation', answerExpectation);
    const port = await listening(server);
    try {
      // An Expect Node does not know: a problem body, not its bare 417 (an outside probe).
      const expect417 = await exchange(port, 'GET /api/v1/listings HTTP/1.1\r\nHost: x\r\nExpect: foo\r\nConnection: close\r\n\r\n');
      expect(expect417.status).toBe(417);
      expect(expect417.headers['content-type']).toBe('application/problem+json');
      expect(expect417.headers['access-control-allow-origin']).toBe('*');
      expect(JSON.parse(expect417.body)).toMatchObject({ status: 417, detail: expect.stringMatching(/Expect: foo/), request_id: expect417.headers['x-request-id'] });
      for (const target of ['/api/v1/listings', 'example.com:443']) {
        const res = await exchange(port, `CONNECT ${target} HTTP/1.1\r\nHost: x\r\n\r\n`);
        expect(res.status, target).toBe(405);
        expect(res.headers.allow).toBe('GET, HEAD');
        expect(res.headers['content-type']).toBe('application/problem+json');
        expect(JSON.parse(res.body)).toMatchObject({ status: 405, code: 'method_not_allowed', request_id: res.headers['x-request-id'] });
      }
      // The request line, then nothing: the headers never end.
      const late = await exchange(port, 'GET /api/v1/listings HTTP/1.1\r\nHost: x\r\n');
      expect(late.status).toBe(408);
      expect(JSON.parse(late.body)).toMatchObject({ status: 408, detail: expect.stringMatching(/in time/) });
    } finally {
      await closed(server);
    }
  });

  // An outside probe: a form POST whose body stopped short was never answered (the answer owed
  // was the one still waiting for that body).
  it('a request whose body does not arrive in time gets 408 too', async () => {
    const server = createServer({ connectionsCheckingInterval: 50, headersTimeout: 300, requestTimeout: 300 }, (req, res) => {
      req.on('data', () => undefined);
      req.on('end', () => res.end('read'));
    });
    server.on('clientError', answerClientError);
    const port = await listening(server);
    try {
      const cut = await exchange(port, 'POST /api-keys/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nemail=');
      expect(cut.status).toBe(408);
      expect(JSON.parse(cut.body)).toMatchObject({ status: 408 });
    } finally {
      await closed(server);
    }
  });
});

// Stop 45, an outside probe: Node keeps 2,000 headers of a request by default and drops the rest
// without a word, so a second Authorization or Host header sent after 2,100 others was not seen
// (200 for the first key), and one Authorization header after them was "missing". And JavaScript's
// \s took a non-breaking space for the space between the scheme and the key.
describe('the headers a request carries, however many, and only spaces and tabs around the key', () => {
  async function raw(port: number, text: string): Promise<{ status: number; body: string }> {
    const got = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1', () => sock.write(Buffer.from(text, 'latin1')));
      let all = '';
      sock.setEncoding('latin1');
      sock.on('data', (d) => (all += d));
      sock.on('end', () => resolve(all));
      sock.on('error', reject);
    });
    return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(got)?.[1]), body: got.slice(got.indexOf('\r\n\r\n') + 4) };
  }
  const padding = Array.from({ length: 2100 }, (_, i) => `a${i % 10}: b\r\n`).join('');

  it('a second Authorization or Host header after 2,100 others is seen; one Authorization after them is read', async () => {
    const { port } = await t.listen();
    const path = '/api/v1/communes';
    const twoKeys = await raw(port, `GET ${path} HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${t.keys.pro}\r\n${padding}Authorization: Bearer ${t.keys.pro}x\r\nConnection: close\r\n\r\n`);
    expect(twoKeys.status).toBe(401);
    expect(JSON.parse(twoKeys.body)).toMatchObject({ code: 'unauthorized', detail: 'Send one Authorization header, not several' });
    const twoHosts = await raw(port, `GET /api/v1/stats HTTP/1.1\r\nHost: a\r\n${padding}Host: b\r\nConnection: close\r\n\r\n`);
    expect(twoHosts.status).toBe(400);
    expect(JSON.parse(twoHosts.body).detail).toMatch(/one Host header/);
    expect((await raw(port, `GET ${path} HTTP/1.1\r\nHost: a\r\n${padding}Authorization: Bearer ${t.keys.pro}\r\nConnection: close\r\n\r\n`)).status).toBe(200);
  });

  it('a non-breaking space before, after or instead of the space around the key is refused; spaces and tabs are not', async () => {
    const { port } = await t.listen();
    const key = t.keys.pro;
    for (const value of [`Bearer ${key}\u00a0`, `Bearer\u00a0${key}`, `\u00a0Bearer ${key}`, `Bearer \u00a0${key}`]) {
      const res = await raw(port, `GET /api/v1/communes HTTP/1.1\r\nHost: a\r\nAuthorization: ${value}\r\nConnection: close\r\n\r\n`);
      expect(res.status, JSON.stringify(value)).toBe(401);
    }
    for (const value of [`Bearer ${key}`, `bearer \t ${key} \t`, `\tBEARER  ${key}`]) {
      const res = await raw(port, `GET /api/v1/communes HTTP/1.1\r\nHost: a\r\nAuthorization: ${value}\r\nConnection: close\r\n\r\n`);
      expect(res.status, JSON.stringify(value)).toBe(200);
    }
  });
});

// RFC 9110 §9.3.2: a HEAD carries the headers of the GET it describes. The compression
// middleware leaves HEAD alone, so HEAD said an uncompressed length and no Content-Encoding
// where the GET was gzip (an outside probe; src/http/head-encoding.ts).
// A health answer is no-store: no ETag, never a 304 (an outside probe).
describe('/healthz and /readyz', () => {
  it('carry no ETag and answer a conditional request in full', async () => {
    for (const path of ['/healthz', '/readyz']) {
      const res = await request(t.app).get(path).set('If-None-Match', '*');
      expect(res, path).toHaveStatus(200);
      expect(res.headers.etag, path).toBeUndefined();
      expect(res.headers['cache-control'], path).toBe('no-store');
      expect(res.body.status, path).toBe('ok');
    }
  });

  // openapi.json: 405 with Allow for any other method (an outside probe: 404, and OPTIONS in plain text).
  it('refuse other methods with 405 and Allow, as the OpenAPI document says', async () => {
    for (const path of ['/healthz', '/readyz']) {
      for (const method of ['put', 'post', 'delete', 'patch', 'options'] as const) {
        const res = await request(t.app)[method](path);
        expect(res, `${method} ${path}`).toHaveStatus(405);
        expect(res.headers.allow).toBe('GET, HEAD');
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.body.code).toBe('method_not_allowed');
      }
      expect(await request(t.app).head(path)).toHaveStatus(200);
    }
  });
});

// An outside probe of stop 46: OPTIONS /docs/ was Express's text/plain "GET, HEAD".
describe('OPTIONS on the /docs page', () => {
  it('is 204 with Allow and no body', async () => {
    for (const path of ['/docs', '/docs/', '/docs/init.js']) {
      const res = await request(t.app).options(path);
      expect(res, path).toHaveStatus(204);
      expect(res.headers.allow, path).toBe('GET, HEAD');
      expect(res.text ?? '', path).toBe('');
    }
  });
});

describe('HEAD describes the GET: the same Content-Encoding, Content-Length, Vary, ETag and type', () => {
  it.each(['/api/v1/communes', '/api/v1/openapi.json', '/market', '/api/v1/changes?limit=1', '/api/v1/listings?per_page=3'])('%s', async (path) => {
    for (const accept of ['gzip', 'br, gzip', 'gzip, deflate, br', 'deflate', 'identity', 'gzip;q=0, br;q=0.5', undefined]) {
      const send = (method: 'get' | 'head') => {
        const r = request(t.app)[method](path).set(bearer(t.keys.pro));
        return accept === undefined ? r.set('Accept-Encoding', '') : r.set('Accept-Encoding', accept);
      };
      const get = await send('get');
      const head = await send('head');
      expect(get, `${path} ${accept}`).toHaveStatus(200);
      expect(head, `${path} ${accept}`).toHaveStatus(200);
      const pick = (r: request.Response) => ({
        encoding: r.headers['content-encoding'],
        length: r.headers['content-encoding'] ? undefined : r.headers['content-length'],
        chunked: r.headers['content-encoding'] ? r.headers['content-length'] === undefined : undefined,
        vary: r.headers.vary,
        etag: r.headers.etag,
        type: r.headers['content-type'],
      });
      expect(pick(head), `${path} Accept-Encoding: ${accept}`).toEqual(pick(get));
    }
  });
});

// An outside probe of stop 58: with br and gzip weighed alike, the answers kept ready (the
// listings, market prices) were gzip and those compressed as sent (/changes, the OpenAPI
// document) br.
describe('one choice of encoding for one Accept-Encoding, whichever answer', () => {
  it('brotli before gzip when the client weighs them alike; gzip when it prefers it', async () => {
    // Enough listings for pages and the feed over the 1 KB below which nothing is compressed.
    for (let i = 0; i < 6; i++) await insertListing(t.db);
    const paths = ['/api/v1/listings?per_page=20', '/api/v1/communes', '/api/v1/openapi.json', '/api/v1/changes?limit=50'];
    const cases: [string, string][] = [
      ['gzip;q=1, br;q=1', 'br'],
      ['gzip, br', 'br'],
      ['gzip, deflate, br', 'br'],
      ['br;q=0.5, gzip', 'gzip'],
      ['deflate, gzip', 'gzip'],
      // Its re-check: a client taking only deflate got it on some answers and none on others.
      ['deflate', 'deflate'],
      ['identity;q=0, deflate', 'deflate'],
    ];
    for (const path of paths) {
      for (const [accept, expected] of cases) {
        const res = await request(t.app).get(path).set(bearer(t.keys.pro)).set('Accept-Encoding', accept).buffer(true).parse((r, cb) => {
          r.on('data', () => undefined);
          r.on('end', () => cb(null, null));
        });
        expect(res, path).toHaveStatus(200);
        expect(res.headers['content-encoding'], `${path} Accept-Encoding: ${accept}`).toBe(expected);
      }
      // A deflate body is the answer (asked twice: the second may be a replay of the first).
      const plain = await request(t.app).get(path).set(bearer(t.keys.pro)).set('Accept-Encoding', 'identity');
      for (let i = 0; i < 2; i++) {
        const res = await request(t.app).get(path).set(bearer(t.keys.pro)).set('Accept-Encoding', 'deflate').buffer(true).parse((r, cb) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => cb(null, Buffer.concat(chunks)));
        });
        expect(res.headers['content-encoding'], path).toBe('deflate');
        const body = res.body as Buffer;
        // (supertest may have inflated it already)
        const text = body[0] === 0x78 ? inflateSync(body).toString('utf8') : body.toString('utf8');
        expect(JSON.parse(text), path).toEqual(JSON.parse(plain.text));
      }
    }
  });
});
