import { randomUUID } from 'node:crypto';
import type { RequestListener } from 'node:http';
import type { Duplex } from 'node:stream';

// The answers the HTTP server writes without the Express app (src/server.ts): while the app is
// not ready yet, and for requests Node's own parser refuses. Each carries the headers every
// answer of the app carries (src/app.ts): a problem body, X-Request-Id (a fresh one: the
// request's own headers are not read), and X-Content-Type-Options: nosniff so that a browser
// never reads one as another type.

const NOSNIFF = 'nosniff';

function problem(status: number, title: string, detail: string, requestId: string): string {
  return JSON.stringify({ type: 'about:blank', title, status, code: status === 503 ? 'unavailable' : 'invalid_parameter', detail, request_id: requestId });
}

// Until the app is ready (the embedded database and the demo data can take seconds), the
// port is held and answers 503 rather than letting connections hang.
export const startingListener: RequestListener = (_req, res) => {
  const id = randomUUID();
  const body = problem(503, 'Service unavailable', 'The service is starting; retry in a moment', id);
  res.writeHead(503, {
    'X-Request-Id': id,
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(body),
    'Retry-After': '1',
    'X-Content-Type-Options': NOSNIFF,
  });
  res.end(body);
};

// Requests Node's HTTP parser refuses (raw non-ASCII in the URL, oversized headers) never
// reach Express: for the server's 'clientError' event, a problem body too rather than an
// empty 400.
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const big = err.code === 'HPE_HEADER_OVERFLOW';
  const status = big ? 431 : 400;
  const id = randomUUID();
  const body = big
    ? problem(431, 'Request header fields too large', 'The request line or headers are too large', id)
    : problem(400, 'Bad request', `The request could not be parsed: ${PARSE_ERRORS[err.code ?? ''] ?? PARSE_ERRORS.HPE_INVALID_URL}`, id);
  socket.end(
    `HTTP/1.1 ${status} ${big ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
      `Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${id}\r\nX-Content-Type-Options: ${NOSNIFF}\r\nConnection: close\r\n\r\n${body}`,
  );
}

// What Node's parser refused, by its error code (llhttp's); anything else is told as a URL
// that is not one, the commonest case.
const PARSE_ERRORS: Record<string, string> = {
  HPE_INVALID_URL: 'characters outside the URL syntax must be percent-encoded',
  HPE_INVALID_METHOD: 'the request method is not one HTTP defines',
  HPE_INVALID_HEADER_TOKEN: 'a request header holds characters that headers may not contain',
  HPE_INVALID_VERSION: 'the HTTP version is not one this server speaks',
};
