import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, createKey, insertListing } from '../helpers/factory.js';
import { createTestDb, type TestDb } from '../helpers/pg.js';

let t: TestDb;
let app: Awaited<ReturnType<typeof buildTestApp>>;
let key: string;
let listingId: string;

beforeAll(async () => {
  t = await createTestDb();
  app = await buildTestApp(t.db, { config: { PUBLIC_BASE_URL: 'https://api.example.test', TRUST_PROXY: false, STATS_RATE_LIMIT_PER_MINUTE: 2 } });
  key = (await createKey(t.db, 'pro')).key;
  listingId = (await insertListing(t.db)).id;
});
afterAll(async () => t?.drop());

// Issue 10, item 12: a browser must never sniff an API answer into another type (an error
// body that echoes input, read as HTML, would be script).
describe('X-Content-Type-Options: nosniff on every API response', () => {
  it('is on answers, errors, 304s, preflights and the operational endpoints', async () => {
    const list = await request(app).get('/api/v1/listings').set(bearer(key));
    expect(list.status).toBe(200);
    const responses: [string, request.Response][] = [
      ['200 list', list],
      ['200 one', await request(app).get(`/api/v1/listings/${listingId}`).set(bearer(key))],
      ['304', await request(app).get('/api/v1/listings').set(bearer(key)).set('If-None-Match', list.headers.etag)],
      ['400', await request(app).get('/api/v1/listings?per_page=0').set(bearer(key))],
      ['401', await request(app).get('/api/v1/listings')],
      ['404 listing', await request(app).get('/api/v1/listings/lst_00000000000000000000').set(bearer(key))],
      ['404 route', await request(app).get('/api/v1/nothing').set(bearer(key))],
      ['404 outside the API', await request(app).get('/nothing-here')],
      ['405', await request(app).post('/api/v1/listings').set(bearer(key))],
      ['preflight', await request(app).options('/api/v1/listings').set('Origin', 'https://x.example').set('Access-Control-Request-Method', 'GET')],
      ['openapi', await request(app).get('/api/v1/openapi.json')],
      ['healthz', await request(app).get('/healthz')],
      ['stats', await request(app).get('/api/v1/stats')],
    ];
    await request(app).get('/api/v1/stats');
    responses.push(['429', await request(app).get('/api/v1/stats')]);
    expect(responses.find(([name]) => name === '304')![1].status).toBe(304);
    expect(responses.find(([name]) => name === '429')![1].status).toBe(429);
    for (const [name, res] of responses) expect(res.headers['x-content-type-options'], name).toBe('nosniff');
  });
});
