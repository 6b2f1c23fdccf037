import request from 'supertest';
import type { Knex } from 'knex';
import { describe, expect, it, vi } from 'vitest';
import { importFeed } from '../../src/ingest/index.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, insertListing } from '../helpers/factory.js';
import { emptyMirror, expectMirrorEqualsCrawl, sync, syncPage } from '../helpers/mirror.js';
import { csvFeed, csvRow, gazetteer } from '../ingest/helpers.js';

// Exactness under concurrent commits (migrations/20261124000100_listing_changes.ts): the
// sequence number of a change is the data version its statement bumped, taken under the row
// lock of data_state, so numbers follow commit order.

// Waits until some backend of this database waits for a lock (the second writer queued
// behind the first one's data_state row).
async function waitForLockWait(db: Knex): Promise<void> {
  await vi.waitFor(
    async () => {
      const { rows } = await db.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
      expect(rows[0].n).toBeGreaterThan(0);
    },
    { timeout: 60_000, interval: 20 },
  );
}

describe('the trap: a change committed after a reader passed its number', () => {
  const t = useTestContext({ app: 'api', keys: ['pro'] });

  it('a plain sequence loses it (the naive design)', async () => {
    await t.db.raw(`CREATE TABLE naive_changes (seq bigint PRIMARY KEY DEFAULT nextval('naive_seq'), what text)`).catch(async () => {
      await t.db.raw(`CREATE SEQUENCE naive_seq`);
      await t.db.raw(`CREATE TABLE naive_changes (seq bigint PRIMARY KEY DEFAULT nextval('naive_seq'), what text)`);
    });
    const early = await t.db.transaction();
    const late = await t.db.transaction();
    await early.raw(`INSERT INTO naive_changes (what) VALUES ('early')`); // takes 1
    await late.raw(`INSERT INTO naive_changes (what) VALUES ('late')`); // takes 2
    await late.commit();
    // A reader reads everything there is and remembers the highest number.
    const seen1 = (await t.db('naive_changes').select('seq', 'what')).map((r) => r.what);
    const cursor = Number((await t.db('naive_changes').max('seq as m').first())!.m);
    await early.commit();
    const seen2 = (await t.db('naive_changes').where('seq', '>', cursor).select('what')).map((r) => r.what);
    expect(seen1).toEqual(['late']);
    expect(seen2, 'the early change is never read').toEqual([]);
  });

  it('the data version does not: the second writer waits, and its changes come after the first one’s', async () => {
    const start = await syncPage(t.app, t.keys.pro, emptyMirror());
    const first = await t.db.transaction();
    const a = await insertListing(first, { title: 'first writer' });
    const second = t.db.transaction(async (trx) => insertListing(trx, { title: 'second writer' }));
    await waitForLockWait(t.db);
    // Neither has committed: a reader sees neither, and moves its cursor to the version it read.
    const m = emptyMirror();
    m.cursor = start.meta.next_cursor;
    const during = await syncPage(t.app, t.keys.pro, m);
    expect(during.data).toEqual([]);
    await first.commit();
    const b = await second;
    await sync(t.app, t.keys.pro, m);
    expect(m.log.map((c) => c.id)).toEqual([a.id, b.id]);
    const seqs = await t.db('listing_changes').whereIn('listing_id', [a.id, b.id]).orderBy('seq').pluck('listing_id');
    expect(seqs).toEqual([a.id, b.id]);
  });
});

describe('imports committing while a mirror reads pages', () => {
  const t = useTestContext({ app: 'api', keys: ['pro', 'starter'] });
  const PLACES = ['Strassen', 'Bertrange', 'Mamer', 'Hesperange', 'Walferdange', 'Sandweiler', 'Contern', 'Steinsel'];
  // Deterministic pseudo-random choices per round.
  const rand = (seed: number) => () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);

  const feed = (source: string, round: number, slot: number) => {
    const r = rand(round * 7 + slot);
    const rows: string[] = [];
    for (let i = 1; i <= 30; i++) {
      if (i > 20 && r() < 0.4) continue; // some withdrawn, some back
      const price = 1400 + i * 37 + (r() < 0.3 ? round : 0);
      rows.push(csvRow({ ref: `${source}-${i}`, place: PLACES[i % PLACES.length], price: String(r() < 0.05 ? price * 12 : price), area: String(30 + slot * 70 + i * 2), bedrooms: '1' }));
    }
    return csvFeed(rows);
  };

  it('never skips or loses a change (many rounds, two importers and two readers at once)', async () => {
    const pro = emptyMirror();
    const starter = emptyMirror();
    const ROUNDS = 12;
    for (let round = 1; round <= ROUNDS; round++) {
      let importing = true;
      const now = new Date(Date.UTC(2026, 10, 1) + round * 3_600_000);
      const imports = Promise.all(
        ['east', 'west'].map((source, slot) =>
          importFeed(t.db, { source, format: 'csv', input: { text: feed(source, round, slot) }, now, gazetteer: gazetteer(), allowMassWithdrawal: true }),
        ),
      ).finally(() => {
        importing = false;
      });
      // Readers page through with tiny pages while the imports run, and keep going.
      const reader = async (key: string, m: typeof pro) => {
        let pages = 0;
        while (importing || pages === 0) {
          await syncPage(t.app, key, m, 3);
          pages++;
        }
      };
      await Promise.all([imports, reader(t.keys.pro, pro), reader(t.keys.starter, starter)]);
      await sync(t.app, t.keys.pro, pro, 3);
      await sync(t.app, t.keys.starter, starter, 3);
      await expectMirrorEqualsCrawl(t.app, t.keys.pro, pro);
      await expectMirrorEqualsCrawl(t.app, t.keys.starter, starter);
    }
    expect(pro.pages).toBeGreaterThan(ROUNDS * 2);
  });

  it('two writers in flight and a reader between their commits, many times', async () => {
    const m = emptyMirror();
    await sync(t.app, t.keys.pro, m);
    for (let i = 0; i < 20; i++) {
      const first = await t.db.transaction();
      await insertListing(first, { title: `first ${i}`, source: 'raw' });
      const second = t.db.transaction((trx) => insertListing(trx, { title: `second ${i}`, source: 'raw' }));
      await waitForLockWait(t.db);
      await syncPage(t.app, t.keys.pro, m, 2);
      await first.commit();
      await syncPage(t.app, t.keys.pro, m, 2);
      await second;
      await sync(t.app, t.keys.pro, m, 2);
      await expectMirrorEqualsCrawl(t.app, t.keys.pro, m);
    }
    const res = await request(t.app).get(`/api/v1/changes?since=${m.cursor}`).set(bearer(t.keys.pro));
    expect(res.body).toMatchObject({ data: [], meta: { has_more: false, next_cursor: m.cursor } });
  });
});
