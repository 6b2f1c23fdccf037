import { readFileSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { answerClientError, answerConnect, answerExpectation } from './raw-responses.js';

// The HTTP server every process serves on, with its settings in one place (the tests serve
// the app on the same).
//
// A request (headers and body) must arrive within 60 s, the headers' own bound, not Node's
// default of 5 minutes: a form cut short is answered 408 then (src/http/raw-responses.ts).
// Node checks those bounds every connectionsCheckingInterval (30 s by default: an outside
// probe got its 408 after 79-85 s); every 2 s, it comes within 62 s.
//
// A client may close its sending side once its request is sent and still read the answer
// (RFC 9112, section 9.6: a half-closed connection does not say the client lost interest).
// Node's default (httpAllowHalfOpen false) dropped every answer not written in the same turn
// as the request: an outside probe got 1-2 answers of 10 from `socat` and `nc -N`, each one
// charged to the key. With it true, the connection closes after the last answer instead.
// (http.Server's own property, read by Node at each connection's end; not in Node's docs.)
//
// Connections are bounded (an outside probe: one client holding 20,000 idle connections took
// the process to its limit of open files, and no one else was answered): one client address may
// hold `perClient` connections to a process (MAX_CONNECTIONS_PER_CLIENT; further ones are closed
// at once; 0: no bound, for a process behind a proxy whose own address every connection bears),
// and the process as a whole `total` (MAX_CONNECTIONS), by default 80 % of its limit of open
// files, the rest left to its database and Redis connections and its files.
export function createHttpServer(listener: RequestListener, limits: { perClient?: number; total?: number } = {}): Server {
  const server = createServer({ requireHostHeader: false, headersTimeout: 60_000, requestTimeout: 60_000, connectionsCheckingInterval: 2_000 }, listener);
  // Counted here, not with Node's server.maxConnections: in a cluster, a worker at that bound
  // hands the connection back to the primary, which hands it to another worker, and when all are
  // at it the connection goes round for ever, unanswered (Node 20; a regression probe: 1.3 cores
  // busy, the client waiting).
  const files = openFilesLimit();
  const total = limits.total ? limits.total : files === null ? Infinity : connectionBound(files);
  const perClient = limits.perClient ?? 0;
  const open = new Map<string, number>();
  let all = 0;
  server.on('connection', (socket: Socket) => {
    const from = socket.remoteAddress ?? '';
    const n = (open.get(from) ?? 0) + 1;
    if (all >= total || (perClient > 0 && n > perClient)) return void socket.destroy();
    open.set(from, n);
    all++;
    socket.once('close', () => {
      all--;
      const left = open.get(from)! - 1;
      if (left > 0) open.set(from, left);
      else open.delete(from);
    });
  });
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // Every header of a request is kept (Node keeps the first 2,000 by default and drops the rest
  // without a word: an outside probe hid a second Authorization or Host header behind 2,100
  // others). Their total size is still bounded, by Node's 16 KB of headers.
  server.maxHeadersCount = 0;
  // Requests Node's HTTP parser refuses never reach Express (src/http/raw-responses.ts).
  server.on('clientError', answerClientError);
  server.on('connect', answerConnect);
  server.on('checkExpectation', answerExpectation);
  return server;
}

// The connections a process takes: 80 % of its limit of open files (64 at least).
export const connectionBound = (files: number): number => Math.max(64, Math.floor(files * 0.8));

// The soft limit of open files of this process (Linux's /proc), or null when unknown or unlimited.
export function openFilesLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}
