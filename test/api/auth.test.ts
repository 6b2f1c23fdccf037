import { createHash } from 'node:crypto';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../src/auth/api-key.js';
import { revokeApiKey } from '../../src/repositories/api-keys.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, createKey, insertListing } from '../helpers/factory.js';

const t = useTestContext({ app: 'api', keys: ['free'] });
let revokedKey: string;
let listingId: string;

beforeAll(async () => {
  const revoked = await createKey(t.db, 'pro');
  await revokeApiKey(t.db, revoked.id, new Date());
  revokedKey = revoked.key;
  listingId = (await insertListing(t.db)).id;
});

const keyedRoutes = () => ['/api/v1/listings', `/api/v1/listings/${listingId}`, '/api/v1/market/prices', '/api/v1/communes'];

function expectProblem(res: request.Response, status: number, code: string) {
  expect(res).toHaveStatus(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: 'about:blank', status, code });
  expect(typeof res.body.title).toBe('string');
  expect(typeof res.body.detail).toBe('string');
  expect(res.body.request_id).toBe(res.headers['x-request-id']);
}

describe('auth matrix on every keyed route', () => {
  const cases: { name: string; headers: () => Record<string, string>; code: string; challenge: string }[] = [
    { name: 'no Authorization header', headers: () => ({}), code: 'unauthorized', challenge: 'Bearer realm="api"' },
    { name: 'empty Authorization header', headers: () => ({ Authorization: '' }), code: 'unauthorized', challenge: 'Bearer realm="api"' },
    { name: 'wrong scheme (Basic)', headers: () => ({ Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }), code: 'unauthorized', challenge: 'Bearer realm="api"' },
    { name: 'key without scheme', headers: () => ({ Authorization: t.keys.free }), code: 'unauthorized', challenge: 'Bearer realm="api"' },
    { name: 'Bearer with no key', headers: () => ({ Authorization: 'Bearer' }), code: 'invalid_key', challenge: 'Bearer realm="api", error="invalid_token"' },
    { name: 'malformed key', headers: () => bearer('not-a-key'), code: 'invalid_key', challenge: 'Bearer realm="api", error="invalid_token"' },
    { name: 'key with a character changed', headers: () => bearer(t.keys.free.slice(0, -1) + (t.keys.free.endsWith('A') ? 'B' : 'A')), code: 'invalid_key', challenge: 'Bearer realm="api", error="invalid_token"' },
    { name: 'unknown well-formed key', headers: () => bearer('lfk_' + 'x'.repeat(43)), code: 'invalid_key', challenge: 'Bearer realm="api", error="invalid_token"' },
    { name: 'revoked key', headers: () => bearer(revokedKey), code: 'invalid_key', challenge: 'Bearer realm="api", error="invalid_token"' },
    { name: 'SQL in the key', headers: () => bearer("lfk_' OR '1'='1"), code: 'invalid_key', challenge: 'Bearer realm="api", error="invalid_token"' },
  ];
  for (const c of cases) {
    it(`${c.name}: 401 ${c.code} with WWW-Authenticate`, async () => {
      for (const route of keyedRoutes()) {
        const res = await request(t.app).get(route).set(c.headers());
        expectProblem(res, 401, c.code);
        expect(res.headers['www-authenticate'], route).toBe(c.challenge);
        expect(JSON.stringify(res.body)).not.toContain('lfk_');
      }
    });
  }

  it('a valid key passes on every route; the scheme name is case-insensitive', async () => {
    for (const route of keyedRoutes()) {
      for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
        const res = await request(t.app).get(route).set('Authorization', `${scheme} ${t.keys.free}`);
        expect(res, `${scheme} ${route}`).toHaveStatus(200);
      }
    }
  });

  it('a key revoked after use stops working at once', async () => {
    const k = await createKey(t.db, 'starter');
    expect(await request(t.app).get('/api/v1/listings').set(bearer(k.key))).toHaveStatus(200);
    await revokeApiKey(t.db, k.id, new Date());
    expectProblem(await request(t.app).get('/api/v1/listings').set(bearer(k.key)), 401, 'invalid_key');
  });

  it('GET /api/v1/stats needs no key', async () => {
    const res = await request(t.app).get('/api/v1/stats');
    expect(res).toHaveStatus(200);
    expect(res.body.total_active).toBe(1);
  });

  it('unknown routes are 404 problems; other methods 405', async () => {
    expectProblem(await request(t.app).get('/api/v1/nope').set(bearer(t.keys.free)), 404, 'not_found');
    expectProblem(await request(t.app).get('/nope'), 404, 'not_found');
    const res = await request(t.app).post('/api/v1/listings').set(bearer(t.keys.free)).send({ title: 'x' });
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('GET, HEAD');
  });

  it('keeps a sane X-Request-Id from the client and replaces an unsafe one', async () => {
    const kept = await request(t.app).get('/api/v1/stats').set('X-Request-Id', 'abc-123.x');
    expect(kept.headers['x-request-id']).toBe('abc-123.x');
    const replaced = await request(t.app).get('/api/v1/stats').set('X-Request-Id', 'bad id\twith spaces');
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('stores only a hash of the key', async () => {
    const k = await createKey(t.db, 'free');
    const row = await t.db('api_keys').where({ id: k.id }).first();
    expect(JSON.stringify(row)).not.toContain(k.key);
    expect(JSON.stringify(row)).not.toContain(k.key.slice(8, 40));
    expect(k.key).toMatch(/^lfk_[A-Za-z0-9_-]{43}$/);
  });
});

describe('the stored digest of a key', () => {
  // hashApiKey takes crypto.hash where Node has it: keys stored by either way must match.
  it('is the hex SHA-256 of the key as createHash writes it', () => {
    for (const key of [generateApiKey(), generateApiKey(), 'lfk_' + 'A'.repeat(43), 'lfk_é€😀', '']) {
      expect(hashApiKey(key), key).toBe(createHash('sha256').update(key, 'utf8').digest('hex'));
    }
  });
});
