import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/context.js';
import { insertListing } from '../helpers/factory.js';
import { rawExchange, rawStatuses } from '../helpers/raw-http.js';

// An outside probe: a client that closed its sending side once its request was sent (`nc -N`,
// `socat`, a script's shutdown(SHUT_WR)) got no answer to 8-9 requests of 10 on /listings and
// none on /market/prices or /stats, each still charged to its key and logged 200. RFC 9112
// (section 9.6): a half-closed connection does not say the client lost interest in the answer.

const t = useTestContext({ app: 'api', keys: ['starter'], redis: true });

const sendAndHalfClose = (port: number, requests: string) => rawExchange(port, requests, { halfClose: true });
const get = (path: string, key: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n\r\n`;
const statuses = rawStatuses;

describe('a client that half-closes its connection after its request', () => {
  it('gets every answer, the ones that wait on PostgreSQL and Redis included, and then the connection closes', async () => {
    await insertListing(t.db, { commune: 'Luxembourg', price_eur: 1800 });
    const { port } = await t.listen();
    // Each asked once (a repeated answer is written in the request's own turn, and always left).
    const paths = ['/api/v1/listings?commune=Luxembourg', '/api/v1/listings?per_page=3', '/api/v1/listings?per_page=4', '/api/v1/market/prices', '/api/v1/market/prices?listing_type=SALE', '/api/v1/communes', '/api/v1/stats'];
    for (const p of paths) {
      const raw = await sendAndHalfClose(port, get(p, t.keys.starter));
      expect(statuses(raw), `${p}: ${raw.slice(0, 200)}`).toEqual(['200']);
      expect(raw).toMatch(/\r\n\r\n[[{]/);
    }
    // Two pipelined, then the half-close: both answers, in order.
    const raw = await sendAndHalfClose(port, get('/api/v1/market/prices?rooms=2', t.keys.starter) + get('/api/v1/listings?per_page=5', t.keys.starter));
    expect(statuses(raw)).toEqual(['200', '200']);
  });
});
