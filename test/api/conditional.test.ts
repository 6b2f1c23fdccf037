import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ifNoneMatchHits } from '../../src/http/conditional.js';
import { STYLE_PATH } from '../../src/web/assets.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, buildTestApp, createKey, insertListing } from '../helpers/factory.js';

// Issue 10, item 9: If-None-Match is evaluated whatever Cache-Control the request carries
// (RFC 9110 §13.1.2, §13.2.1). Node's fetch (undici) adds `Cache-Control: no-cache` and
// `Pragma: no-cache` to any request that sets If-None-Match, and Express's req.fresh then
// said "stale": such clients never got a 304. A 304 does not count against the daily quota.

const t = useTestContext({ redis: true });
let listingPath: string;

beforeAll(async () => {
  const l = await insertListing(t.db, { title: 'Flat with a view of the Alzette' });
  listingPath = `/api/v1/listings/${l.id}`;
  for (let i = 0; i < 30; i++) await insertListing(t.db, { price_eur: 1000 + i, title: `Flat ${i} with a title long enough to make a page over a kilobyte` });
});

let prefixSeq = 0;
async function serve(kind: 'redis' | 'memory' = 'memory') {
  const prefix = `${t.redisPrefix}${++prefixSeq}:`;
  const app = await buildTestApp(t.db, { redis: kind === 'redis' ? t.redis : null, redisPrefix: prefix });
  const { server, base } = await t.listen(app);
  return { app, server, base, prefix };
}

describe('If-None-Match parsing (weak comparison)', () => {
  it.each([
    ['W/"abc"', 'W/"abc"', true],
    ['"abc"', 'W/"abc"', true], // weak comparison: the W/ prefix is ignored on either side
    ['W/"abc"', '"abc"', true],
    ['"x", W/"abc"', 'W/"abc"', true],
    ['"x",W/"abc" , "y"', 'W/"abc"', true],
    ['"a,b", "c"', '"a,b"', true], // a comma inside the quotes is part of the tag
    ['"a,b"', '"a"', false],
    ['*', 'W/"abc"', true],
    [' * ', undefined, true],
    ['"abcd"', 'W/"abc"', false],
    ['W/"ab"', 'W/"abc"', false],
    ['"abc"', undefined, false],
    ['', 'W/"abc"', false],
    ['abc', '"abc"', true], // a client that dropped the quotes
    // Empty list elements are skipped (RFC 9110 §5.6.1.2; a 200 until stop 55).
    [', W/"abc"', 'W/"abc"', true],
    [',W/"abc"', 'W/"abc"', true],
    ['"a",,W/"abc"', 'W/"abc"', true],
    ['"a", , W/"abc"', 'W/"abc"', true],
    ['W/"abc",,', 'W/"abc"', true],
    [' , ,', 'W/"abc"', false],
    ['*,', undefined, true], // `*` with empty elements is `*` (the re-check of stop 55)
    [', *', 'W/"abc"', true],
    ['"x", *', 'W/"abc"', false], // `*` is no tag in a list
  ] as const)('%s against %s: %s', (header, etag, hit) => {
    expect(ifNoneMatchHits(header, etag)).toBe(hit);
  });

  it('answers 304 to a tag after an empty header of the same name (Node joins them with a comma), without counting it', async () => {
    const { base } = await serve();
    const k = await createKey(t.db, 'free');
    const { default: http } = await import('node:http');
    // Raw headers (an array) keep the two of one name apart; Node then adds no Host itself.
    const get = (headers: [string, string][]) =>
      new Promise<{ status: number; etag: string; remaining: string }>((resolve, reject) => {
        const req = http.get(`${base}/api/v1/listings?per_page=3`, { headers: [['Host', new URL(base).host], ['Authorization', `Bearer ${k.key}`], ...headers].flat() }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, etag: String(res.headers.etag), remaining: String(res.headers['ratelimit-remaining']) }));
        });
        req.on('error', reject);
      });
    const first = await get([]);
    expect(first.status).toBe(200);
    const again = await get([['If-None-Match', ''], ['If-None-Match', first.etag]]);
    expect(again).toEqual({ status: 304, etag: first.etag, remaining: first.remaining });
  });
});

describe('304 with Node\'s built-in fetch (which adds Cache-Control: no-cache)', () => {
  it('fetch really sends Cache-Control: no-cache with If-None-Match (the reason for this fix)', async () => {
    const { default: http } = await import('node:http');
    const echo = http.createServer((req, res) => res.end(JSON.stringify(req.headers)));
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
    try {
      const res = await fetch(`http://127.0.0.1:${(echo.address() as AddressInfo).port}/`, { headers: { 'If-None-Match': 'W/"x"' } });
      expect(await res.json()).toMatchObject({ 'if-none-match': 'W/"x"', 'cache-control': 'no-cache' });
    } finally {
      echo.close();
    }
  });

  it('every GET that has an ETag answers 304 to fetch with If-None-Match: API, stats, OpenAPI, HTML pages, assets', async () => {
    const { base } = await serve();
    const k = (await createKey(t.db, 'pro')).key;
    const auth = bearer(k);
    const targets: [string, Record<string, string>][] = [
      ['/api/v1/listings?per_page=25', auth],
      ['/api/v1/listings?per_page=2', auth],
      [listingPath, auth],
      ['/api/v1/market/prices', auth],
      ['/api/v1/communes', auth],
      ['/api/v1/changes?limit=20', auth],
      ['/api/v1/stats', {}],
      ['/api/v1/openapi.json', {}],
      [listingPath.replace('/api/v1', ''), {}], // the public HTML page of the listing
      ['/docs', {}],
      ['/docs/assets/swagger-ui.css', {}],
      [STYLE_PATH, {}],
    ];
    for (const [path, headers] of targets) {
      const first = await fetch(base + path, { headers });
      expect(first, path).toHaveStatus(200);
      await first.arrayBuffer();
      const etag = first.headers.get('etag');
      expect(etag, path).toBeTruthy();
      for (const inm of [etag!, `"other", ${etag}`, etag!.replace(/^W\//, ''), '*']) {
        const again = await fetch(base + path, { headers: { ...headers, 'If-None-Match': inm } });
        expect(again, `${path} with If-None-Match: ${inm}`).toHaveStatus(304);
        expect(await again.text(), path).toBe('');
        // The Vary its 200 carries (RFC 9110 §15.4.5).
        expect(again.headers.get('vary'), path).toBe(first.headers.get('vary'));
      }
      const changed = await fetch(base + path, { headers: { ...headers, 'If-None-Match': 'W/"not-this-one"' } });
      expect(changed, path).toHaveStatus(200);
      await changed.arrayBuffer();
    }
  });

  it('HEAD and supertest (no Cache-Control) agree; a 4xx is never turned into 304', async () => {
    const { app } = await serve();
    const k = (await createKey(t.db, 'pro')).key;
    const first = await request(app).get('/api/v1/listings?per_page=3').set(bearer(k));
    const etag = first.headers.etag;
    expect(await request(app).get('/api/v1/listings?per_page=3').set(bearer(k)).set('If-None-Match', etag)).toHaveStatus(304);
    expect(await request(app).get('/api/v1/listings?per_page=3').set(bearer(k)).set('If-None-Match', etag).set('Cache-Control', 'no-cache')).toHaveStatus(304);
    expect(await request(app).head('/api/v1/listings?per_page=3').set(bearer(k)).set('If-None-Match', etag).set('Cache-Control', 'no-cache')).toHaveStatus(304);
    const bad = await request(app).get('/api/v1/listings?per_page=0').set(bearer(k)).set('If-None-Match', '*');
    expect(bad).toHaveStatus(400);
    const unknown = await request(app).get('/api/v1/listings?per_page=3').set(bearer('lfk_' + 'x'.repeat(43))).set('If-None-Match', '*');
    expect(unknown).toHaveStatus(401);
  });
});

describe.each(['redis', 'memory'] as const)('a 304 does not count against the daily quota (%s store)', (kind) => {
  async function counted(prefix: string, keyId: string): Promise<number> {
    const day = new Date().toISOString().slice(0, 10);
    return Number((await t.redis.get(`${prefix}quota:${keyId}:${day}`)) ?? 0);
  }

  it('a revalidation answered 304 leaves RateLimit-Remaining and the count as they were', async () => {
    const { base, prefix } = await serve(kind);
    const k = await createKey(t.db, 'free');
    const auth = bearer(k.key);
    const first = await fetch(`${base}/api/v1/listings?per_page=5`, { headers: auth });
    expect(first).toHaveStatus(200);
    await first.arrayBuffer();
    expect(first.headers.get('ratelimit-remaining')).toBe('99');
    const etag = first.headers.get('etag')!;
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${base}/api/v1/listings?per_page=5`, { headers: { ...auth, 'If-None-Match': etag } });
      expect(res).toHaveStatus(304);
      expect(res.headers.get('ratelimit-limit')).toBe('100');
      expect(res.headers.get('ratelimit-remaining'), `revalidation ${i + 1}`).toBe('99');
      // The count is taken back after the response: let it land before the next request.
      if (kind === 'redis') await vi.waitFor(async () => expect(await counted(prefix, k.id)).toBe(1), { timeout: 30_000, interval: 20 });
    }
    // The communes answer (res.send + Express's own ETag) follows the same rule.
    const communes = await fetch(`${base}/api/v1/communes`, { headers: auth });
    await communes.arrayBuffer();
    expect(communes.headers.get('ratelimit-remaining')).toBe('98');
    const again = await fetch(`${base}/api/v1/communes`, { headers: { ...auth, 'If-None-Match': communes.headers.get('etag')! } });
    expect(again).toHaveStatus(304);
    expect(again.headers.get('ratelimit-remaining')).toBe('98');
    if (kind === 'redis') await vi.waitFor(async () => expect(await counted(prefix, k.id)).toBe(2), { timeout: 30_000, interval: 20 });
    const next = await fetch(`${base}/api/v1/listings?per_page=6`, { headers: auth });
    await next.arrayBuffer();
    expect(next).toHaveStatus(200);
    expect(next.headers.get('ratelimit-remaining')).toBe('97');
  });

  it('a 304 to If-None-Match: * or to an If-Modified-Since counts: neither says the client holds a copy', async () => {
    const { base, prefix } = await serve(kind);
    const k = await createKey(t.db, 'free');
    const auth = bearer(k.key);
    const star = await fetch(`${base}/api/v1/listings?per_page=1&min_price=7`, { headers: { ...auth, 'If-None-Match': '*' } });
    expect(star).toHaveStatus(304);
    expect(star.headers.get('ratelimit-remaining')).toBe('99');
    const since = await fetch(`${base}/api/v1/communes`, { headers: { ...auth, 'If-Modified-Since': 'Fri, 01 Jan 2100 00:00:00 GMT' } });
    await since.arrayBuffer();
    expect(since.headers.get('ratelimit-remaining')).toBe('98');
    if (kind === 'redis') await vi.waitFor(async () => expect(await counted(prefix, k.id)).toBe(2), { timeout: 30_000, interval: 20 });
    const next = await fetch(`${base}/api/v1/listings?per_page=6`, { headers: auth });
    await next.arrayBuffer();
    expect(next.headers.get('ratelimit-remaining')).toBe('97');
    // `*` after an empty element (an empty header of the same name before it) is `*`: a 304, counted.
    const starAgain = await fetch(`${base}/api/v1/listings?per_page=1&min_price=8`, { headers: { ...auth, 'If-None-Match': ', *' } });
    expect(starAgain).toHaveStatus(304);
    expect(starAgain.headers.get('ratelimit-remaining')).toBe('96');
  });

  it('stays exact under concurrency: the count equals the answers that were neither 304 nor 429', async () => {
    const { base, prefix, app } = await serve(kind);
    const k = await createKey(t.db, 'free');
    const auth = bearer(k.key);
    const first = await fetch(`${base}/api/v1/listings?per_page=5`, { headers: auth });
    await first.arrayBuffer();
    const etag = first.headers.get('etag')!;
    const statuses = await Promise.all(
      Array.from({ length: 240 }, async (_, i) => {
        const res = await fetch(`${base}/api/v1/listings?per_page=5`, { headers: i % 2 ? { ...auth, 'If-None-Match': etag } : auth });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    const ok = statuses.filter((s) => s === 200).length;
    // More unconditional requests than the quota has left: some must be refused.
    expect(statuses.filter((s) => s === 304).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 304 || s === 429)).toBe(true);
    expect(1 + ok).toBeLessThanOrEqual(100);
    // What the key has used is what a new request sees (a Starter upgrade lifts the cap).
    const used = 1 + ok;
    if (kind === 'redis') await vi.waitFor(async () => expect(await counted(prefix, k.id)).toBe(used), { timeout: 30_000, interval: 20 });
    else {
      // The memory store takes 304s back right after each response: wait until it settles.
      await vi.waitFor(async () => {
        const r = await request(app).get('/api/v1/listings?per_page=5').set(auth).set('If-None-Match', etag);
        if (used === 100) expect(r).toHaveStatus(429);
        else expect(r.headers['ratelimit-remaining']).toBe(String(100 - used));
      }, { timeout: 30_000, interval: 50 });
    }
  });

  // An outside probe: with 2 requests left, 20 revalidations sent at once with a plain GET got
  // 14-15 of the revalidations and the GET refused ("quota used up", Retry-After to midnight),
  // since the revalidations in flight stood in the count until each was taken back.
  it('near the limit, revalidations in flight get no other request refused', async () => {
    const { base, prefix } = await serve(kind);
    const k = await createKey(t.db, 'free');
    const auth = bearer(k.key);
    let etag = '';
    for (let i = 0; i < 98; i++) {
      const res = await fetch(`${base}/api/v1/listings?per_page=5`, { headers: auth });
      expect(res).toHaveStatus(200);
      etag = res.headers.get('etag')!;
      await res.arrayBuffer();
    }
    const send = async (conditional: boolean) => {
      const res = await fetch(`${base}/api/v1/listings?per_page=5`, { headers: conditional ? { ...auth, 'If-None-Match': etag } : auth });
      await res.arrayBuffer();
      return res.status;
    };
    const statuses = await Promise.all([...Array.from({ length: 20 }, () => send(true)), send(false), ...Array.from({ length: 20 }, () => send(true))]);
    expect(statuses.filter((s) => s === 304)).toHaveLength(40);
    expect(statuses[20]).toBe(200);
    if (kind === 'redis') await vi.waitFor(async () => expect(await counted(prefix, k.id)).toBe(99), { timeout: 30_000, interval: 20 });
    // The last one of the day, then the refusal.
    expect(await send(false)).toBe(200);
    expect(await send(false)).toBe(429);
    expect(await send(true)).toBe(429);
  });

  // An outside probe: with the turn passed on after 1 s, a revalidation slower than that (a
  // /changes page waiting on the database) got the requests after it refused, the last
  // request of the day among them. (A /changes revalidation is answered before its page is read
  // since stop 48: a listing read again after the data changed is the slow one here.)
  it('near the limit, a slow revalidation gets no request after it refused', async () => {
    const { base, prefix } = await serve(kind);
    const k = await createKey(t.db, 'free');
    const pro = bearer((await createKey(t.db, 'pro')).key);
    const auth = bearer(k.key);
    const listing = await insertListing(t.db);
    for (let i = 0; i < 98; i++) {
      const res = await fetch(`${base}/api/v1/listings?per_page=5`, { headers: auth });
      expect(res).toHaveStatus(200);
      await res.arrayBuffer();
    }
    const page = await fetch(`${base}/api/v1/listings/${listing.id}`, { headers: auth });
    expect(page).toHaveStatus(200);
    const etag = page.headers.get('etag')!;
    await page.arrayBuffer();
    // Another listing moves the data version: the listing's cached answer is no longer used
    // once the server knows (a Pro key, not counted, asks until it sees the new one).
    const other = await insertListing(t.db);
    await vi.waitFor(async () => expect(await fetch(`${base}/api/v1/listings/${other.id}`, { headers: pro })).toHaveStatus(200), { timeout: 30_000, interval: 50 });
    // 99 used, 1 left. The revalidation's read waits on a lock for well over a second.
    const lock = await t.db.transaction();
    try {
      await lock.raw('LOCK TABLE listings IN ACCESS EXCLUSIVE MODE');
      const slow = fetch(`${base}/api/v1/listings/${listing.id}`, { headers: { ...auth, 'If-None-Match': etag } });
      await vi.waitFor(async () => expect((await t.db.raw(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'listings'::regclass`)).rows[0].n).toBeGreaterThanOrEqual(1), { timeout: 30_000, interval: 20 });
      const last = fetch(`${base}/api/v1/listings?per_page=6`, { headers: auth });
      await new Promise((resolve) => setTimeout(resolve, 1_500)); // longer than the old cap
      await lock.rollback();
      expect(await slow).toHaveStatus(304);
      const res = await last;
      expect(res).toHaveStatus(200);
      await res.arrayBuffer();
    } finally {
      await lock.rollback().catch(() => undefined);
    }
    if (kind === 'redis') await vi.waitFor(async () => expect(await counted(prefix, k.id)).toBe(100), { timeout: 30_000, interval: 20 });
    const over = await fetch(`${base}/api/v1/listings?per_page=7`, { headers: auth });
    expect(over).toHaveStatus(429);
  });

  it('a key whose quota is used up gets 429 for a conditional request too (the limiter decides before the answer exists)', async () => {
    const { base } = await serve(kind);
    const k = await createKey(t.db, 'free');
    const auth = bearer(k.key);
    let etag = '';
    for (let i = 0; i < 100; i++) {
      const res = await fetch(`${base}/api/v1/communes`, { headers: auth });
      expect(res).toHaveStatus(200);
      etag = res.headers.get('etag')!;
      await res.arrayBuffer();
    }
    const res = await fetch(`${base}/api/v1/communes`, { headers: { ...auth, 'If-None-Match': etag } });
    expect(res).toHaveStatus(429);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

// An outside probe of stop 56: a Range with If-Range naming a weak entity tag got 206 on the docs
// page's assets; RFC 9110 section 13.1.5 says a weak tag never validates a range: the whole file.
describe('If-Range on the docs page assets', () => {
  it('its Last-Modified date gives the range; its (weak) entity tag, or a tag that does not match, the whole file', async () => {
    const { server } = await serve();
    const path = '/docs/assets/swagger-ui.css';
    const whole = await request(server).get(path);
    expect(whole).toHaveStatus(200);
    const etag = whole.headers.etag as string;
    expect(etag).toMatch(/^W\//); // the static files' tags are weak
    const ranged = await request(server).get(path).set({ Range: 'bytes=0-9', 'If-Range': whole.headers['last-modified'] as string });
    expect(ranged).toHaveStatus(206);
    expect(ranged.headers['content-range']).toMatch(/^bytes 0-9\//);
    expect((await request(server).get(path).set({ Range: 'bytes=0-9' }))).toHaveStatus(206);
    for (const ifRange of [etag, ` ${etag}`, '"not-this-one"']) {
      const full = await request(server).get(path).set({ Range: 'bytes=0-9', 'If-Range': ifRange });
      expect(full, ifRange).toHaveStatus(200);
      expect(full.headers['content-range'], ifRange).toBeUndefined();
      expect(full.headers['content-length'], ifRange).toBe(whole.headers['content-length']);
    }
  });
});
