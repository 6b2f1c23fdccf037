import express from 'express';
import type { Knex } from 'knex';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { createApiCaches } from '../../src/cache/api-caches.js';
import { errorHandler } from '../../src/http/errors.js';
import { changesRouter } from '../../src/http/routes/changes.js';
import { useTestContext } from '../helpers/context.js';
import { insertListing, silentLogger } from '../helpers/factory.js';

// GET /api/v1/changes builds a bounded number of pages at once (src/http/routes/changes.ts):
// a page of 1,000 listings is about 1 MB with its rows, and 50 clients at once took the
// process past its memory. The others wait for a slot, and all are answered.

const t = useTestContext();

// The changes router alone, behind a Pro key already verified.
function changesApp(pagesAtOnce: number) {
  const app = express();
  app.use((_req, res, next) => {
    res.locals.apiKey = { id: _req.get('x-key') ?? 'k', accountId: 1, tier: 'pro' } as never;
    next();
  });
  app.use('/changes', changesRouter({ db: t.db, baseUrl: 'https://api.example.test', caches: createApiCaches(), pagesAtOnce }));
  app.use(errorHandler(silentLogger));
  return app;
}

// Backends of this test's database waiting for a lock (page reads behind the held one).
async function lockWaits(db: Knex): Promise<number> {
  const { rows } = await db.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
  return rows[0].n;
}

describe('pages of changes built at once', () => {
  for (const pagesAtOnce of [1, 2]) {
    it(`at most ${pagesAtOnce} read at a time; the others wait, and every request is answered`, async () => {
      for (let i = 0; i < 3; i++) await insertListing(t.db);
      const app = changesApp(pagesAtOnce);
      // Every page read waits for the listings while another transaction holds them.
      const holder = await t.db.transaction();
      await holder.raw('LOCK TABLE listings IN ACCESS EXCLUSIVE MODE');
      const pending = Array.from({ length: 4 }, (_, i) => request(app).get('/changes?limit=10').set('x-key', `k${i}`));
      const answers = Promise.all(pending.map((r) => r.then((res) => res)));
      await vi.waitFor(async () => expect(await lockWaits(t.db)).toBe(pagesAtOnce), { timeout: 30_000, interval: 50 });
      // Given time, no more reads start: the other requests wait for a slot.
      await new Promise((r) => setTimeout(r, 300));
      expect(await lockWaits(t.db)).toBe(pagesAtOnce);
      await holder.commit();
      for (const res of await answers) {
        expect(res).toHaveStatus(200);
        expect(res.body.data.length).toBeGreaterThan(0);
      }
    });
  }
});

// An outside probe (stop 42): 60 connections of one Pro key that read nothing left an Enterprise
// key 6 answers in 65 s on /changes, half of them 503.
describe('one page at a time per key', () => {
  it('one key asking many pages at once holds one slot: another key still gets the other', async () => {
    for (let i = 0; i < 3; i++) await insertListing(t.db);
    const app = changesApp(2);
    const holder = await t.db.transaction();
    await holder.raw('LOCK TABLE listings IN ACCESS EXCLUSIVE MODE');
    const greedy = Array.from({ length: 5 }, () => request(app).get('/changes?limit=10').set('x-key', 'greedy').then((res) => res));
    await vi.waitFor(async () => expect(await lockWaits(t.db)).toBe(1), { timeout: 30_000, interval: 50 });
    await new Promise((r) => setTimeout(r, 300));
    // The greedy key's other four wait for its first: one read in all.
    expect(await lockWaits(t.db)).toBe(1);
    const other = request(app).get('/changes?limit=10').set('x-key', 'other').then((res) => res);
    await vi.waitFor(async () => expect(await lockWaits(t.db)).toBe(2), { timeout: 30_000, interval: 50 });
    await holder.commit();
    expect(await other).toHaveStatus(200);
    for (const res of await Promise.all(greedy)) expect(res).toHaveStatus(200);
  });

  // An outside probe of stop 47: 90 requests of one key given up on one after the other were all
  // built, and the key's next request waited the whole bound behind them (429 after 12 s).
  it('more than eight of one key waiting: the next is 429 at once, with Retry-After; the key gets pages again once they are answered', async () => {
    for (let i = 0; i < 3; i++) await insertListing(t.db);
    const app = changesApp(2);
    const holder = await t.db.transaction();
    await holder.raw('LOCK TABLE listings IN ACCESS EXCLUSIVE MODE');
    const waiting = Array.from({ length: 9 }, () => request(app).get('/changes?limit=10').set('x-key', 'many').then((res) => res));
    await vi.waitFor(async () => expect(await lockWaits(t.db)).toBe(1), { timeout: 30_000, interval: 50 });
    // The lock still held: answered without waiting for it.
    const refused = await request(app).get('/changes?limit=10').set('x-key', 'many');
    expect(refused).toHaveStatus(429);
    expect(refused.body.code).toBe('rate_limited');
    expect(refused.headers['retry-after']).toBe('5');
    // Another key is not affected.
    const other = request(app).get('/changes?limit=10').set('x-key', 'other').then((res) => res);
    await holder.commit();
    expect(await other).toHaveStatus(200);
    for (const res of await Promise.all(waiting)) expect(res).toHaveStatus(200);
    expect(await request(app).get('/changes?limit=10').set('x-key', 'many')).toHaveStatus(200);
  });
});
