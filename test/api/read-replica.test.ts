import request from 'supertest';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { ReplicaReads } from '../../src/db/read-replica.js';
import { currentDataVersion } from '../../src/repositories/data-version.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, buildTestApp, insertListing, silentLogger } from '../helpers/factory.js';
import { createTestDb, type TestDb } from '../helpers/pg.js';

// DATABASE_READ_URL (src/db/read-replica.ts): reads go to the replica only once it has replayed
// the data version a request is answered at; key lookups stay on the primary. The "replica"
// here is a second database whose data_state the test moves by hand, holding different
// listings, so that where each answer came from shows in it.

const t = useTestContext({ keys: ['pro'] });
let replicaDb: TestDb;
let reads: ReplicaReads;
let app: App;

const mamer = async () => (await request(app).get('/api/v1/listings?commune=Mamer').set(bearer(t.keys.pro))).body.meta.total as number;
const setReplicaVersion = (v: number) => replicaDb.db('data_state').update({ version: v });

beforeAll(async () => {
  replicaDb = await createTestDb();
  await insertListing(t.db, { commune: 'Mamer' });
  for (let i = 0; i < 5; i++) await insertListing(replicaDb.db, { commune: 'Mamer' });
  await setReplicaVersion(await currentDataVersion(t.db));
  reads = await new ReplicaReads(t.db, replicaDb.db, silentLogger, 20).start();
  app = await buildTestApp(t.db, { reads: reads.at });
});

afterAll(async () => {
  await reads?.close().catch(() => undefined);
  await replicaDb?.drop();
});

it('reads from the replica when it has the version; the key is looked up on the primary', async () => {
  expect(await mamer()).toBe(5); // the replica's listings; the key exists on the primary only
});

it('reads from the primary while the replica lags behind, and from the replica again once it caught up', async () => {
  await insertListing(t.db, { commune: 'Mamer' }); // the primary moves on: 2 listings there
  expect(await mamer()).toBe(2);
  // Answers are cached per version: the next version is the replica's once it has replayed it.
  await insertListing(t.db, { commune: 'Mamer' });
  const next = await currentDataVersion(t.db);
  await setReplicaVersion(next);
  await vi.waitFor(() => expect(reads.version).toBe(next), { timeout: 10_000, interval: 10 });
  expect(await mamer()).toBe(5);
});

// An outside probe: the read model loaded from the replica whatever its version, again and
// again while it lagged (133 loads a minute), and never from the primary.
it('the read model loads from the replica once it has the version asked for, else from the primary', async () => {
  const { ListingReadModel } = await import('../../src/read-model/read-model.js');
  // `db` the replica, as the server had it: the source decides.
  const model = new ListingReadModel(replicaDb.db, silentLogger, 10, undefined, reads.pick);
  try {
    await insertListing(t.db, { commune: 'Mamer' }); // the replica lags behind this version
    const lagging = await currentDataVersion(t.db);
    model.seen(lagging);
    const index = await model.ready(lagging);
    expect(index.version).toBe(lagging); // loaded from the primary: the replica is behind
    await setReplicaVersion(lagging);
    await vi.waitFor(() => expect(reads.version).toBe(lagging), { timeout: 10_000, interval: 10 });
    const builds = model.info().builds;
    await new Promise((r) => setTimeout(r, 200));
    expect(model.info().builds).toBe(builds); // not loaded again at a version it holds
  } finally {
    await model.close();
  }
});

// An outside probe of stop 50: trouble on the replica answered 503s while the primary was fine
// (a stalled replica after 12 s, one whose listings a replayed exclusive lock held after 10 s).
// A read the replica cannot serve goes to the primary.
const freshTotal = async (n: number) => {
  // Another filter each time (a price floor under every listing's): an answer and a total not
  // cached yet, read from a database.
  const res = await request(app).get(`/api/v1/listings?commune=Mamer&min_price=${n}`).set(bearer(t.keys.pro));
  expect(res).toHaveStatus(200);
  return res.body.meta.total as number;
};

it('reads from the primary while the replica holds its listings locked, and from the replica once they are free', async () => {
  const version = await currentDataVersion(t.db);
  await setReplicaVersion(version);
  await vi.waitFor(() => expect(reads.version).toBe(version), { timeout: 10_000, interval: 10 });
  const onPrimary = await t.db('listings').where({ commune: 'Mamer', status: 'active' }).count<{ count: string }[]>({ count: '*' });
  expect(await freshTotal(11)).toBe(5);
  const locker = await replicaDb.db.transaction();
  try {
    await locker.raw('LOCK TABLE listings IN ACCESS EXCLUSIVE MODE');
    // A read sent to the replica before its poll finds the listings locked, and one after.
    expect(await freshTotal(12)).toBe(Number(onPrimary[0].count));
    expect(await freshTotal(13)).toBe(Number(onPrimary[0].count));
  } finally {
    await locker.rollback();
  }
  await vi.waitFor(() => expect(reads.version).toBe(version), { timeout: 10_000, interval: 10 });
  expect(await freshTotal(14)).toBe(5);
});

it('runs a read again on the primary when the replica fails it as unavailable; a read\'s own error stays its own', async () => {
  const version = await currentDataVersion(t.db);
  await setReplicaVersion(version);
  await vi.waitFor(() => expect(reads.version).toBe(version), { timeout: 10_000, interval: 10 });
  const cut = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
  const where: string[] = [];
  const read = async (db: unknown) => {
    where.push(db === replicaDb.db ? 'replica' : 'primary');
    if (db === replicaDb.db) throw cut;
    return 'answer';
  };
  expect(await reads.at(version, read)).toBe('answer');
  expect(where).toEqual(['replica', 'primary']);
  await vi.waitFor(() => expect(reads.version).toBe(version), { timeout: 10_000, interval: 10 });
  const invalid = Object.assign(new Error('invalid input syntax'), { code: '22P02' });
  where.length = 0;
  await expect(reads.at(version, async (db) => { where.push(db === replicaDb.db ? 'replica' : 'primary'); throw invalid; })).rejects.toBe(invalid);
  expect(where).toEqual(['replica']);
});

// The re-check of stop 50: with the replica stalled, reads held there took every connection to
// it, and the poll waited for one of its own through the pool's whole wait (5 s) before it found
// the replica down. The poll's second counts that wait. Here the replica's only connection is
// held and its pool would wait two minutes: the read held there is answered from the primary as
// soon as the poll gives up.
it('finds the replica down when no connection to it comes free, and answers the read held there from the primary', async () => {
  const { default: knex } = await import('knex');
  const starved = knex({ client: 'pg', connection: replicaDb.url, pool: { min: 0, max: 1 }, acquireConnectionTimeout: 120_000 });
  const version = await currentDataVersion(t.db);
  await setReplicaVersion(version);
  const own = await new ReplicaReads(t.db, starved, silentLogger, 20).start();
  try {
    await vi.waitFor(() => expect(own.version).toBe(version), { timeout: 10_000, interval: 10 });
    const holder = await starved.transaction();
    try {
      const answer = await own.at(version, async (db) => (db === starved ? (await db.raw('SELECT 1'), 'replica') : 'primary'));
      expect(answer).toBe('primary');
      expect(own.version).toBe(-1);
    } finally {
      await holder.rollback();
    }
  } finally {
    await own.close();
  }
});
