import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import type { ApiListing } from '../../src/http/schemas/responses.js';
import { importFeed } from '../../src/ingest/index.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, ensureSource } from '../helpers/factory.js';
import { crawl, emptyMirror, sorted, sync } from '../helpers/mirror.js';
import { csvFeed, csvRow, gazetteer } from '../ingest/helpers.js';

const PLACES = ['Strassen', 'Bertrange', 'Mamer', 'Hesperange', 'Walferdange', 'Sandweiler', 'Contern', 'Steinsel'];
const feed = (source: string, n: number, over: (i: number) => Parameters<typeof csvRow>[0] = () => ({})) =>
  csvFeed(Array.from({ length: n }, (_, k) => k + 1).map((i) => csvRow({ ref: `${source}-${i}`, place: PLACES[i % 8], price: String(1400 + i * 37), area: String(30 + i * 2), bedrooms: '1', ...over(i) })));

const parseNdjson = (text: string): ApiListing[] => text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as ApiListing);

describe('GET /api/v1/listings/export', () => {
  const t = useTestContext({ app: 'api', keys: ['free', 'starter', 'pro', 'enterprise'] });
  const imp = (text: string, now: Date) => importFeed(t.db, { source: 'exp', format: 'csv', input: { text }, now, gazetteer: gazetteer() });

  it('is for Pro and Enterprise keys', async () => {
    for (const tier of ['free', 'starter'] as const) {
      const res = await request(t.app).get('/api/v1/listings/export').set(bearer(t.keys[tier]));
      expect(res, tier).toHaveStatus(403);
      expect(res.body.code).toBe('forbidden_for_tier');
    }
    expect(await request(t.app).get('/api/v1/listings/export?x=1').set(bearer(t.keys.pro))).toHaveStatus(400);
    const head = await request(t.app).head('/api/v1/listings/export').set(bearer(t.keys.pro));
    expect(head).toHaveStatus(200);
    expect(head.headers['content-type']).toMatch(/^application\/x-ndjson/);
  });

  it('export + /changes from its cursor equals a mirror built from /changes, and a crawl', async () => {
    await imp(feed('exp', 40, (i) => (i === 9 ? { price: '30000' } : {})), new Date('2026-11-01T08:00:00Z'));
    const res = await request(t.app).get('/api/v1/listings/export').set(bearer(t.keys.enterprise)).buffer(true).parse((r, cb) => {
      let s = '';
      r.setEncoding('utf8');
      r.on('data', (c: string) => (s += c));
      r.on('end', () => cb(null, s));
    });
    expect(res).toHaveStatus(200);
    expect(res.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const cursor = res.headers['x-changes-cursor'];
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    // HEAD says the cursor a GET would give now, without reading a listing.
    expect((await request(t.app).head('/api/v1/listings/export').set(bearer(t.keys.enterprise))).headers['x-changes-cursor']).toBe(cursor);
    const exported = parseNdjson(res.body as string);
    expect(exported.length).toBe(40);
    expect(exported.some((l) => l.flags?.includes('price_outlier'))).toBe(true);

    // Changes after the export: an update, a withdrawal (40 -> 35), a new listing.
    await imp(feed('exp', 41, (i) => (i === 3 ? { price: '1999' } : {})).split('\n').filter((_, k) => k < 36 || k === 41).join('\n') + '\n', new Date('2026-11-02T08:00:00Z'));
    const m = emptyMirror();
    for (const l of exported) m.listings.set(l.id, l);
    m.cursor = cursor;
    await sync(t.app, t.keys.enterprise, m, 4);
    const viaChanges = await sync(t.app, t.keys.enterprise, emptyMirror(), 6);
    const crawled = await crawl(t.app, t.keys.enterprise);
    expect(crawled.size).toBe(36);
    expect(sorted(m.listings)).toEqual(sorted(crawled));
    expect(sorted(viaChanges.listings)).toEqual(sorted(crawled));
  });

  it('is compressed when the client accepts it', async () => {
    const res = await request(t.app).get('/api/v1/listings/export').set(bearer(t.keys.pro)).set('Accept-Encoding', 'gzip').buffer(true).parse((r, cb) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => cb(null, Buffer.concat(chunks)));
    });
    expect(res).toHaveStatus(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    // supertest (superagent) unzips by itself: the body is the NDJSON text either way.
    const body = res.body as Buffer;
    const text = body[0] === 0x1f ? gunzipSync(body).toString('utf8') : body.toString('utf8');
    const [{ n }] = (await t.db.raw(`SELECT count(*)::int AS n FROM listings WHERE status = 'active'`)).rows;
    expect(parseNdjson(text).length).toBe(n);
  });

  it('a client that goes away midway gives its connection back at once', async () => {
    // Enough rows that the answer cannot fit in the socket buffers.
    await ensureSource(t.db, 'bulk');
    await t.db.transaction(async (trx) => {
      await trx.raw(`SET LOCAL statement_timeout = 0`);
      await trx.raw(`
      INSERT INTO listings (id, source, external_id, title, price_eur, area_m2, rooms, commune, lat, lng, listing_type, images, created_at, updated_at, first_seen_at, last_seen_at)
      SELECT 'lst_bulk' || lpad(i::text, 16, '0'), 'bulk', 'B' || i, repeat('Appartement spacieux ', 30), 1500 + i % 500, 70, 3, 'Luxembourg', 49.6, 6.13, 'RENT',
             '["https://img.example/a.jpg","https://img.example/b.jpg"]', now(), now(), now(), now()
        FROM generate_series(1, 15000) i`);
    });
    const pool = (t.db.client as unknown as { pool: { numUsed(): number; numPendingAcquires(): number } }).pool;
    const { base } = await t.listen();
    const firstBytes = await new Promise<number>((resolve, reject) => {
      const req = http.get(`${base}/api/v1/listings/export`, { headers: bearer(t.keys.pro) }, (res) => {
        res.once('data', (chunk: Buffer) => {
          expect(res.statusCode).toBe(200);
          // The server is streaming from its cursor now: it holds a connection.
          req.destroy();
          resolve(chunk.length);
        });
      });
      req.on('error', (e) => ((e as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(e)));
    });
    expect(firstBytes).toBeGreaterThan(0);
    await vi.waitFor(
      async () => {
        const { rows } = await t.db.raw(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`,
        );
        expect(rows[0].n, 'no backend still in the export').toBe(0);
        expect(pool.numUsed(), 'connections in use').toBe(0);
      },
      { timeout: 60_000, interval: 50 },
    );
  }, 180_000);
});
