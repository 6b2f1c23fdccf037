import { once } from 'node:events';
import { createServer, type RequestListener } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it, vi } from 'vitest';
import { MAX_HELD, MAX_WAITING, oneAnswerAtATime } from '../../src/http/one-answer-at-a-time.js';
import { rawExchange, rawStatuses } from '../helpers/raw-http.js';

// A server whose answers wait for the one before on their connection (oneAnswerAtATime):
// /big/:n larger than the sockets' buffers (it cannot leave while the client reads nothing),
// /hang/:n not begun until the test ends it, /small/:n at once.
async function serve() {
  const started: string[] = [];
  const app = express();
  const big = Buffer.alloc(16 * 1024 * 1024, 'x');
  app.get('/big/:n', (req, res) => {
    started.push(String(req.params.n));
    res.end(big);
  });
  // An answer that has not begun (it waits on something, as a page waits on PostgreSQL): Node
  // then goes on reading the requests behind it.
  const hung: (() => void)[] = [];
  app.get('/hang/:n', (req, res) => {
    started.push(String(req.params.n));
    hung.push(() => res.end('late\n'));
  });
  app.get('/small/:n', (req, res) => {
    started.push(String(req.params.n));
    res.end(`answer ${req.params.n}\n`);
  });
  const server = createServer(oneAnswerAtATime(app));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, started, big, hung, port: (server.address() as AddressInfo).port };
}

// Requests pipelined on one connection are handled one after the other
// (src/http/one-answer-at-a-time.ts): a client that pipelined requests and read nothing held a
// /changes page turn for each, and the key's near-limit turn (outside probes).
describe('requests pipelined on one connection', () => {
  it('each starts once the answer before it on that connection has left; other connections are not held', async () => {
    const { server, started, big, port } = await serve();
    let parsed = 0;
    server.on('request', () => parsed++);
    const sock = net.connect(port, '127.0.0.1');
    try {
      await once(sock, 'connect');
      sock.pause(); // reads nothing
      sock.write('GET /big/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /big/2 HTTP/1.1\r\nHost: x\r\n\r\nGET /big/3 HTTP/1.1\r\nHost: x\r\n\r\n');
      // Node has read all three requests; only the first is being answered.
      await vi.waitFor(() => expect(parsed).toBe(3), { timeout: 30_000, interval: 10 });
      expect(started).toEqual(['1']);
      // Another connection is served meanwhile.
      const other = await fetch(`http://127.0.0.1:${port}/big/other`);
      expect((await other.arrayBuffer()).byteLength).toBe(big.length);
      expect(started).toEqual(['1', 'other']);
      // Reading lets the answers leave, one after the other.
      let got = 0;
      sock.on('data', (d: Buffer) => (got += d.length));
      sock.resume();
      await vi.waitFor(() => expect(started).toEqual(['1', 'other', '2', '3']), { timeout: 30_000, interval: 10 });
      await vi.waitFor(() => expect(got).toBeGreaterThan(3 * big.length), { timeout: 30_000, interval: 10 });
    } finally {
      sock.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

// A second outside probe: hundreds of requests pipelined on each of many connections that read
// nothing were all held, waiting, past 1 GB; the process died out of memory. A third: closing
// such a connection at MAX_WAITING dropped every answer of a client that sent 66 requests in one
// write and was reading them.
describe('a connection with MAX_WAITING requests waiting', () => {
  it('is read no further until one has gone: the server holds a bounded number, and a client that reads gets every answer, in order', async () => {
    const { server, hung, port } = await serve();
    let parsed = 0;
    server.on('request', () => parsed++);
    // Under MAX_HELD in all: what the server has not read arrives in one go once it reads again.
    const total = 1 + 200;
    try {
      const got = new Promise<string>((resolve, reject) => {
        const sock = net.connect(port, '127.0.0.1');
        let text = '';
        sock.setEncoding('latin1');
        sock.on('data', (d) => (text += d));
        sock.on('end', () => resolve(text));
        sock.on('error', reject);
        // The first answer waits; then bursts of 50 small requests (each burst under MAX_HELD).
        sock.on('connect', async () => {
          sock.write('GET /hang/0 HTTP/1.1\r\nHost: x\r\n\r\n');
          for (let i = 1; i < total; i += 50) {
            const burst = Array.from({ length: Math.min(50, total - i) }, (_, j) => `GET /small/${i + j} HTTP/1.1\r\nHost: x\r\n${i + j === total - 1 ? 'Connection: close\r\n' : ''}\r\n`);
            sock.write(burst.join(''));
            await new Promise((r) => setTimeout(r, 5));
          }
        });
      });
      await vi.waitFor(() => expect(hung.length).toBe(1), { timeout: 30_000, interval: 10 });
      // Every burst is sent (into the client's and the kernel's buffers); the server has read
      // up to the mark and perhaps one burst more, not the rest.
      await new Promise((r) => setTimeout(r, 5 * (total / 50) + 300));
      expect(parsed).toBeGreaterThanOrEqual(MAX_WAITING);
      expect(parsed).toBeLessThan(MAX_WAITING + 50 + 1);
      hung[0]();
      const text = await got;
      expect([...text.matchAll(/answer (\d+)/g)].map((m) => Number(m[1]))).toEqual(Array.from({ length: total - 1 }, (_, i) => i + 1));
      expect(text.startsWith('HTTP/1.1 200 OK')).toBe(true);
      expect(parsed).toBe(total);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('answers a client that sends MAX_WAITING + 2 requests in one write and reads', async () => {
    const { server, port } = await serve();
    try {
      const n = MAX_WAITING + 2;
      const got = await rawExchange(port, Array.from({ length: n }, (_, i) => `GET /small/${i} HTTP/1.1\r\nHost: x\r\n${i === n - 1 ? 'Connection: close\r\n' : ''}\r\n`).join(''));
      expect([...got.matchAll(/answer (\d+)/g)].map((m) => Number(m[1]))).toEqual(Array.from({ length: n }, (_, i) => i));
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('is closed past MAX_HELD waiting (one burst read at once), the answer under way not begun again', async () => {
    const { server, started, hung, port } = await serve();
    const sock = net.connect(port, '127.0.0.1');
    try {
      await once(sock, 'connect');
      sock.pause();
      const closed = once(sock, 'close');
      const n = MAX_HELD + 20;
      sock.write(Array.from({ length: n }, (_, i) => `GET /hang/${i} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
      await closed;
      expect(started).toEqual(['0']);
      for (const end of hung) end();
    } finally {
      sock.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

// An outside probe: a malformed request pipelined after valid ones got its 400 written first,
// and the valid ones' answers were lost.
describe('a malformed request pipelined after valid ones', () => {
  // A server answering with `listener` and the raw answers to `requests` sent at once on one
  // connection, up to the server's close.
  async function exchange(listener: RequestListener, requests: string): Promise<string> {
    const { answerClientError } = await import('../../src/http/raw-responses.js');
    const server = createServer(listener);
    server.on('clientError', answerClientError);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      return await rawExchange(port, requests);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }
  const statuses = rawStatuses;

  it('is answered 400 after their answers, in order', async () => {
    const got = await exchange(
      (req, res) => setTimeout(() => res.end(`answer ${req.url}\n`), 100),
      'GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /x HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n',
    );
    expect(statuses(got)).toEqual(['200', '200', '400']);
    expect(got.indexOf('answer /a')).toBeLessThan(got.indexOf('answer /b'));
  });

  // An outside probe: after an answer written at once (as the replay writes a repeated one), the
  // malformed request's 400 was dropped.
  it('is answered 400 after an answer written at once', async () => {
    const got = await exchange((req, res) => res.end(`answer ${req.url}\n`), 'GET /b HTTP/1.1\r\nHost: x\r\n\r\nGET /x HTTP/1.1\r\nHost: x\r\nX-Bad: \u0001\r\n\r\n');
    expect(statuses(got)).toEqual(['200', '400']);
  });

  // An outside probe: a GET with a chunked body got its 200, then, for a chunk of no valid size
  // in that body, a 400 it had not asked for. One answer a request: the connection just closes.
  it('but a request answered already whose own body is then refused gets no second answer', async () => {
    const { answerClientError, requireHost } = await import('../../src/http/raw-responses.js');
    const server = createServer(requireHost((req, res) => res.end(`answer ${req.url}\n`)));
    server.on('clientError', answerClientError);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const got = await new Promise<string>((resolve, reject) => {
        const sock = net.connect(port, '127.0.0.1', () => sock.write('GET /s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n'));
        let text = '';
        sock.setEncoding('latin1');
        // The rest once the answer is in: the bad chunk, and another request.
        sock.once('data', () => setTimeout(() => sock.write('zz\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'), 50));
        sock.on('data', (d) => (text += d));
        sock.on('end', () => resolve(text));
        sock.on('error', reject);
      });
      expect(statuses(got)).toEqual(['200']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  // An outside probe of stop 56: a form POST whose chunked body had a chunk of no valid size
  // waited for the body its handler read until the request timeout, then got a 408 ("did not
  // arrive in time"). It is answered its 400 when the parser refuses the body.
  it('a request whose handler reads its body gets the 400 of a body the parser refuses, not the timeout\'s 408', async () => {
    const { answerClientError, requireHost } = await import('../../src/http/raw-responses.js');
    const server = createServer(
      { requestTimeout: 120_000 },
      requireHost((req, res) => {
        req.resume();
        // A GET is answered after a moment: a request still being answered when the next arrives.
        req.on('end', () => setTimeout(() => res.end('read\n'), req.method === 'GET' ? 200 : 0));
      }),
    );
    server.on('clientError', answerClientError);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      for (const body of ['zz\r\nemail\r\n0\r\n\r\n', '-5\r\nemail\r\n0\r\n\r\n', '5 \r\nemail\r\n0\r\n\r\n']) {
        const got = await rawExchange(
          port,
          `POST /api-keys/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n${body}`,
        );
        expect(statuses(got), body).toEqual(['400']);
        expect(got).toContain('a chunk of the body has no valid size');
      }
      // Its re-check: pipelined after a request still being answered, it waited 60 s for a 408.
      const got = await rawExchange(
        port,
        'GET /api-keys HTTP/1.1\r\nHost: x\r\n\r\n' +
          'POST /api-keys/sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nemail\r\n0\r\n\r\n',
      );
      expect(statuses(got)).toEqual(['200', '400']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
