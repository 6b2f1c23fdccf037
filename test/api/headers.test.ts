import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
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
