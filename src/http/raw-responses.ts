import { randomUUID } from 'node:crypto';
import type { RequestListener, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { oneAnswerAtATime } from './one-answer-at-a-time.js';
import { headerCount } from './raw-headers.js';

// The answers the HTTP server writes without the Express app (src/server.ts): while the app is
// not ready yet, and for requests Node's own parser refuses. Each carries the headers every
// answer of the app carries (src/app.ts): a problem body, X-Request-Id (a fresh one: the
// request's own headers are not read), X-Content-Type-Options: nosniff so that a browser
// never reads one as another type, and the API's CORS headers.

const NOSNIFF = 'nosniff';
// The API answers any origin (src/app.ts): so do these, so that a page calling it while the
// service starts reads the 503 and its Retry-After instead of a CORS failure.
const CORS = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': 'Retry-After,X-Request-Id' };
const CORS_LINES = Object.entries(CORS).map(([k, v]) => `${k}: ${v}\r\n`).join('');

function problem(status: number, title: string, detail: string, requestId: string, code = status === 503 ? 'unavailable' : 'invalid_parameter'): string {
  return JSON.stringify({ type: 'about:blank', title, status, code, detail, request_id: requestId });
}

// Answers a request with a problem body and the headers every answer carries.
function answerProblem(res: ServerResponse, status: number, title: string, detail: string, headers: Record<string, string>): void {
  const id = randomUUID();
  const body = problem(status, title, detail, id);
  res.writeHead(status, {
    'X-Request-Id': id,
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(body),
    'X-Content-Type-Options': NOSNIFF,
    ...CORS,
    ...headers,
  });
  res.end(body);
}

// Until the app is ready (the embedded database and the demo data can take seconds), the
// port is held and answers 503 rather than letting connections hang.
export const startingListener: RequestListener = (_req, res) => {
  answerProblem(res, 503, 'Service unavailable', 'The service is starting; retry in a moment', { 'Retry-After': '1' });
};

// A cluster's worker that drains before it stops (src/server.ts) answers what still reaches it
// at once: another process or instance will serve it.
export const stoppingListener: RequestListener = (_req, res) => {
  answerProblem(res, 503, 'Service unavailable', 'This server process is stopping; retry in a moment', { 'Retry-After': '1', Connection: 'close' });
};

// A request target in the absolute form: its path and query (requireHost).
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*(.*)$/i;

// An HTTP/1.1 request without Host is 400 (RFC 9112 §3.2). Node answers it itself with an
// empty 400 unless the server is created with `requireHostHeader: false` (src/http/http-server.ts): then
// this wrapper answers it with a problem body like every other refusal.
// Node's parser also lets through what RFC 9112 says a server must refuse (an outside probe):
// two Host headers (§3.2), and a body framed by a transfer coding whose last is not chunked
// (§6.3: its length cannot be known); both are 400 here, and the connection is closed.
const serverOptions: RequestListener = (_req, res) => {
  res.writeHead(204, { Allow: 'GET, HEAD, OPTIONS', 'X-Request-Id': randomUUID(), 'X-Content-Type-Options': NOSNIFF, ...CORS });
  res.end();
};
const gatedServerOptions = oneAnswerAtATime(serverOptions);

export function requireHost(listener: RequestListener): RequestListener {
  const gated = oneAnswerAtATime(listener);
  return (req, res) => {
    (req.socket as Tracked)[LAST_REQUEST] = req;
    const bad = (detail: string) => answerProblem(res, 400, 'Bad request', `The request could not be parsed: ${detail}`, { Connection: 'close' });
    if (headerCount(req.rawHeaders, 'host') > 1) return bad('a request must carry one Host header');
    // A request line ending in another version Node's parser lets through (HTTP/2.0, HTTP/0.9)
    // was served as HTTP/1.1 (HTTP/1.2 and HTTP/3.0 it refuses itself: 400).
    if (req.httpVersionMajor !== 1 || req.httpVersionMinor > 1) {
      return answerProblem(res, 505, 'HTTP version not supported', `The request line must end in HTTP/1.1 (or HTTP/1.0), not HTTP/${req.httpVersion}`, { Connection: 'close' });
    }
    const te = req.headers['transfer-encoding'];
    // Chunked alone: a coding before it (`gzip, chunked`) is one this server does not undo, and
    // the body was read as if it were not there (an outside probe: a plain form sent so signed in).
    if (te !== undefined && te.trim().toLowerCase() !== 'chunked') return bad('a request body may be framed by Transfer-Encoding: chunked alone, with no other coding');
    // The absolute form of a request target (`GET http://host/path`, which proxies send and a
    // server must accept, RFC 9112 section 3.2.2) is made the origin form the app reads
    // (`/path`): the key page's redirect was built from it as `/api-keyshttp://host` and its forms
    // were not found (an outside probe). Its authority is not used: the API's own addresses come
    // from PUBLIC_BASE_URL.
    if (req.url !== undefined && req.url.charCodeAt(0) !== 0x2f) {
      const origin = ABSOLUTE_FORM.exec(req.url);
      if (origin !== null) req.url = origin[1].startsWith('/') ? origin[1] : `/${origin[1]}`;
      else if (req.url !== '*') return bad('a request target must be a path, an absolute URL or *');
      // `*` asks about the server itself, and only OPTIONS may (RFC 9110, sections 7.1 and
      // 9.3.7): the methods it serves, as an API path's preflight says them (it was 404).
      else if (req.method !== 'OPTIONS') return bad('the request target * is for OPTIONS only');
      else return gatedServerOptions(req, res);
    }
    // Every request, whatever its route and before the answers sent again without Express
    // (src/http/replay.ts), waits for the answer before it on its connection to leave
    // (src/http/one-answer-at-a-time.ts): a client pipelining on routes without a key held the
    // server past 1-2 GB (an outside probe) when the bound was on keyed routes only.
    if (req.headers.host !== undefined || req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1) return gated(req, res);
    bad('an HTTP/1.1 request must carry a Host header');
  };
}

// An Expect other than 100-continue goes to the server's 'checkExpectation' event, not to the
// app: Node's own answer was a bare 417 (an outside probe). Answered with a problem body.
export const answerExpectation: RequestListener = (req, res) => {
  answerProblem(res, 417, 'Expectation failed', `The server cannot meet Expect: ${String(req.headers.expect).slice(0, 40)} (only 100-continue)`, {});
};

// Requests Node's HTTP parser refuses (raw non-ASCII in the URL, oversized headers, a body
// framed two ways) and requests too slow to arrive never reach Express: for the server's
// 'clientError' event, a problem body too rather than an empty 400.
export function answerClientError(err: NodeJS.ErrnoException & { reason?: string }, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // Answers still owed on this connection come first (outside probes):
  // - a request answered already, its body refused only after (a POST with
  //   `Transfer-Encoding: gzip`: its 405 sent, then the parser's error): one answer a request,
  //   so the connection is closed once the answers owed have gone, without a 400;
  // - a malformed request pipelined after valid ones whose answers are not written yet: they
  //   are sent, in order, and then the 400 (it came first, and they were lost).
  const current = (socket as Tracked)._httpMessage;
  // Its answer written and gone, the last request's body refused only after (a GET with a
  // chunked body, then a chunk of no valid size): one answer a request, so no 400 (an outside
  // probe got 200, then a 400 it had not asked for).
  if (!current && (socket as Tracked)[LAST_REQUEST]?.complete === false) return void socket.end();
  // A request whose body did not arrive (in time, or as HTTP frames a body) is the one whose
  // answer is owed: nothing will come to answer it (its handler waits for the body), so it gets
  // the 408 or the 400 now (outside probes: a form POST with a body cut short was held open for
  // good; one with a chunk of no valid size waited 60 s for a 408, stop 56). The parser reads a
  // request's body before the next request, so its error is this request's.
  const bodyRefused = current && !current.headersSent && current.req?.complete === false;
  if (current && !bodyRefused) {
    // Answered already: the request whose body the parser refused (it has not all arrived). A
    // complete request answered at once (the replay writes its answer in the same turn) is an
    // earlier one; the refused request still gets its 400.
    const answeredAlready = current.headersSent === true && current.req?.complete !== true;
    whenAnswered(socket as Tracked, () => {
      if (!socket.writable) return void socket.destroy();
      if (answeredAlready) return void socket.end();
      answerClientError(err, socket);
    });
    return;
  }
  // llhttp gives one code for two faults: Content-Length not a number, or beside a
  // Transfer-Encoding (its reason says which; an outside probe was told "must be a number").
  const code = /Content-Length/i.test(err.reason ?? '') && /Transfer-Encoding/i.test(err.reason ?? '') ? 'BOTH_FRAMINGS' : (err.code ?? '');
  const [status, reason, title, detail] = NOT_PARSE_ERRORS[code] ?? [400, 'Bad Request', 'Bad request', `The request could not be parsed: ${PARSE_ERRORS[code] ?? (code === '' ? PARSE_ERRORS.HPE_INVALID_URL : 'it is not well-formed HTTP/1.1')}`];
  const id = randomUUID();
  endWithProblem(socket, `${status} ${reason}`, '', id, problem(status, title, detail, id));
}

const LAST_REQUEST = Symbol('last request');
type Tracked = Duplex & { [LAST_REQUEST]?: { complete: boolean }; _httpMessage?: (NodeJS.EventEmitter & { headersSent?: boolean; writableFinished?: boolean; req?: { complete: boolean } }) | null };

// Runs `then` once every answer Node holds for this connection has been written (Node's
// http server makes each pipelined answer the socket's _httpMessage in turn).
function whenAnswered(socket: Tracked, then: () => void): void {
  const m = socket._httpMessage;
  if (!m) return then();
  // A request whose body has not all come, its answer not begun: the one whose body the parser
  // refused, after the answers before it. Nothing will answer it (its handler may wait for the
  // body): its turn is now (the re-check of stop 56: a form POST pipelined after a request being
  // answered waited 60 s for a 408).
  if (!m.headersSent && m.req?.complete === false) return then();
  let moved = false;
  const next = () => {
    if (moved) return;
    moved = true;
    setImmediate(() => whenAnswered(socket, then));
  };
  if (m.writableFinished) return next();
  m.once('finish', next);
  m.once('close', next);
}

// Writes a whole answer on the socket and closes it.
function endWithProblem(socket: Duplex, statusLine: string, headers: string, id: string, body: string): void {
  socket.end(
    `HTTP/1.1 ${statusLine}\r\n${headers}` +
      `Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${id}\r\nX-Content-Type-Options: ${NOSNIFF}\r\n${CORS_LINES}Connection: close\r\n\r\n${body}`,
  );
}

// CONNECT (a proxy's tunnel) goes to the server's 'connect' event, not to the app: answered as
// the API answers every method it does not serve, 405 naming the ones it does.
export function answerConnect(_req: unknown, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const id = randomUUID();
  endWithProblem(socket, '405 Method Not Allowed', 'Allow: GET, HEAD\r\n', id, problem(405, 'Method not allowed', 'CONNECT is not supported: the API is read-only', id, 'method_not_allowed'));
}

// Refusals that are not a 400: status, reason phrase, title, detail.
const NOT_PARSE_ERRORS: Record<string, [number, string, string, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request header fields too large', 'The request line or headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'Request timeout', 'The request did not arrive in time'],
};

// What Node's parser refused, by its error code (llhttp's); other codes are told as HTTP that
// is not well-formed.
const PARSE_ERRORS: Record<string, string> = {
  HPE_INVALID_URL: 'the request target must be a path beginning with / (or an absolute URL), with characters outside the URL syntax percent-encoded',
  HPE_INVALID_METHOD: 'the request method is not one HTTP defines',
  HPE_INVALID_HEADER_TOKEN: 'a request header holds characters that headers may not contain',
  HPE_INVALID_VERSION: 'the request line must end in HTTP/1.1 (or HTTP/1.0) and CRLF',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Content-Length may be sent once only',
  HPE_INVALID_CONTENT_LENGTH: 'Content-Length must be a number of bytes, digits only, that the server can count (at most 2^53 - 1)',
  HPE_INVALID_TRANSFER_ENCODING: 'Transfer-Encoding must name chunked once, and last',
  BOTH_FRAMINGS: 'a body may be framed by Content-Length or by Transfer-Encoding, not both',
  HPE_INVALID_CHUNK_SIZE: 'a chunk of the body has no valid size',
};
