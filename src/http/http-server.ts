import { createServer, type RequestListener, type Server } from 'node:http';
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
export function createHttpServer(listener: RequestListener): Server {
  const server = createServer({ requireHostHeader: false, headersTimeout: 60_000, requestTimeout: 60_000, connectionsCheckingInterval: 2_000 }, listener);
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // Requests Node's HTTP parser refuses never reach Express (src/http/raw-responses.ts).
  server.on('clientError', answerClientError);
  server.on('connect', answerConnect);
  server.on('checkExpectation', answerExpectation);
  return server;
}
