import { Redis } from 'ioredis';
import request from 'supertest';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/context.js';
import { insertListing } from '../helpers/factory.js';
import { buildWebApp } from './helpers.js';

// Issue 10, item 1: the public pages had no limit at all (800 listing pages in 3.9 s from
// one address). They are limited per client IP, in Redis like /api/v1/stats.
const LIMIT = 5;
const t = useTestContext({
  app: 'web',
  redis: true,
  // X-Forwarded-For from loopback is trusted here, so each test can be its own client IP.
  deps: { config: { PUBLIC_BASE_URL: 'http://127.0.0.1:3000', TRUST_PROXY: ['loopback'], STATS_RATE_LIMIT_PER_MINUTE: 1000, PAGES_RATE_LIMIT_PER_MINUTE: LIMIT } },
});
let listingPath: string;

beforeAll(async () => {
  listingPath = `/listings/${(await insertListing(t.db)).id}`;
});

let ipSeq = 0;
const newIp = () => `192.0.2.${++ipSeq}`;

describe('the per-address limit of the HTML pages', () => {
  it('answers a 429 page with Retry-After past the limit, over listing pages, the market page, the key page and its forms alike', async () => {
    const ip = newIp();
    for (let i = 0; i < LIMIT - 1; i++) expect(await request(t.app).get(listingPath).set('X-Forwarded-For', ip)).toHaveStatus(200);
    expect(await request(t.app).get('/api-keys').set('X-Forwarded-For', ip)).toHaveStatus(200);
    for (const res of [
      await request(t.app).get(listingPath).set('X-Forwarded-For', ip),
      await request(t.app).get('/listings/lst_00000000000000000000').set('X-Forwarded-For', ip),
      await request(t.app).get('/api-keys').set('X-Forwarded-For', ip),
      await request(t.app).get('/market').set('X-Forwarded-For', ip),
      await request(t.app).post('/api-keys/sign-in').set('X-Forwarded-For', ip).type('form').send({ email: 'a@b.lu', password: 'x' }),
    ]) {
      expect(res).toHaveStatus(429);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain('Too many requests');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    }
    // Another address is not affected; the stylesheet, the API and its stats are not limited here.
    expect(await request(t.app).get(listingPath).set('X-Forwarded-For', newIp())).toHaveStatus(200);
    const page = await request(t.app).get('/api-keys').set('X-Forwarded-For', newIp());
    const css = /href="(\/web\/style\.[0-9a-f]+\.css)"/.exec(page.text)![1];
    expect(await request(t.app).get(css).set('X-Forwarded-For', ip)).toHaveStatus(200);
    expect(await request(t.app).get('/api/v1/stats').set('X-Forwarded-For', ip)).toHaveStatus(200);
    // The counters are in Redis.
    expect((await t.redis.keys(`${t.redisPrefix}pages-ip:*`)).length).toBeGreaterThan(0);
  });

  it('does not trust X-Forwarded-For from a client that is not a configured proxy', async () => {
    const direct = await buildWebApp(t.db, {
      redis: t.redis,
      redisPrefix: `${t.redisPrefix}direct:`,
      config: { PUBLIC_BASE_URL: 'http://127.0.0.1:3000', TRUST_PROXY: false, STATS_RATE_LIMIT_PER_MINUTE: 1000, PAGES_RATE_LIMIT_PER_MINUTE: LIMIT },
    });
    // A scraper rotating made-up addresses is still one client.
    const statuses = [];
    for (let i = 0; i < LIMIT + 2; i++) statuses.push((await request(direct).get(listingPath).set('X-Forwarded-For', newIp())).status);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
  });

  it('serves pages without limiting while Redis is unreachable (no 500)', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 200, lazyConnect: true, retryStrategy: () => null });
    dead.on('error', () => undefined);
    try {
      const outage = await buildWebApp(t.db, {
        redis: dead,
        redisPrefix: `${t.redisPrefix}dead:`,
        config: { PUBLIC_BASE_URL: 'http://127.0.0.1:3000', TRUST_PROXY: false, STATS_RATE_LIMIT_PER_MINUTE: 1000, PAGES_RATE_LIMIT_PER_MINUTE: LIMIT },
      });
      for (let i = 0; i < LIMIT + 2; i++) expect(await request(outage).get(listingPath)).toHaveStatus(200);
      expect(outage.locals.storeHealth.errors).toBeGreaterThan(0);
    } finally {
      dead.disconnect();
    }
  });
});
