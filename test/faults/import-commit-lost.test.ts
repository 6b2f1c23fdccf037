import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knex } from 'knex';
import { createDb } from '../../src/db/knex.js';
import { CommitOutcomeUnknownError, importFeed, type ProgressEvent } from '../../src/ingest/index.js';
import { createTestDb, type TestDb } from '../helpers/pg.js';
import { csvFeed, csvRow, gazetteer } from '../ingest/helpers.js';

// The connection of an import drops once its COMMIT has been sent: PostgreSQL applies the
// commit, and its answer is lost. The import is done, and says so; its run is not marked failed
// over its 'ok' (an outside probe of stop 56: "import failed, nothing was changed", exit 4, the
// listings served all the same and the source shown as failed in /api/v1/stats).

// A proxy in front of PostgreSQL that, on the import's connection (the one that made its staging
// table), passes the COMMIT on and closes the client's side before any answer comes back.
// With `unreachableMs`, every connection is then reset and new ones refused for that long (a
// database gone for a while just after the commit: an outside probe of stop 57).
async function commitCuttingProxy(url: string, unreachableMs = 0): Promise<{ url: string; cuts(): number; close(): Promise<void> }> {
  const target = new URL(url);
  let cuts = 0;
  let unreachableUntil = 0;
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    if (Date.now() < unreachableUntil) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    let importing = false;
    let cut = false;
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      if (text.includes('CREATE TEMP TABLE ingest_batch')) importing = true;
      // The COMMIT statement itself (a simple query: "Q", its length, the text), not "ON COMMIT DROP".
      if (importing && /Q[\s\S]{4}COMMIT;?\0/.test(text)) {
        cut = true;
        cuts++;
        upstream.end(chunk); // the server reads the COMMIT, applies it, then finds the connection gone
        client.destroy();
        if (unreachableMs > 0) {
          unreachableUntil = Date.now() + unreachableMs;
          for (const s of sockets) if (s !== upstream) s.destroy();
        }
        return;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => void (cut || client.write(chunk)));
    for (const s of [client, upstream]) s.on('error', () => {});
    client.on('close', () => void (cut || upstream.destroy()));
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const port = (proxy.address() as net.AddressInfo).port;
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(port);
  return {
    url: proxied.toString(),
    cuts: () => cuts,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}

describe('an import whose COMMIT was applied but whose answer was lost', () => {
  let t: TestDb;
  beforeAll(async () => {
    t = await createTestDb();
  });
  afterAll(async () => {
    await t?.drop();
  });
  // Runs `fn` with a connection pool through a COMMIT-cutting proxy, both closed after.
  async function throughProxy(unreachableMs: number, fn: (db: Knex, proxy: { cuts(): number }) => Promise<void>): Promise<void> {
    const proxy = await commitCuttingProxy(t.url, unreachableMs);
    const db = createDb(proxy.url, { poolMax: 2 });
    try {
      await fn(db, proxy);
    } finally {
      await db.destroy();
      await proxy.close();
    }
  }

  it('reports the import done (its counts), and its run stays ok', async () => {
    await throughProxy(0, async (db, proxy) => {
      const rows = [1, 2, 3].map((n) => csvRow({ ref: `CUT-${n}`, price: String(1500 + n * 100), area: String(60 + n * 10), rooms: '3', place: 'Strassen' }));
      const events: ProgressEvent[] = [];
      const report = await importFeed(db, { source: 'commit-cut', format: 'csv', input: Buffer.from(csvFeed(rows)), gazetteer: gazetteer(), onProgress: (e) => events.push(e) });
      expect(proxy.cuts()).toBe(1);
      // The command line learns which run it is committing (it names it if the outcome is unknown).
      expect(events.filter((e) => e.phase === 'commit')).toEqual([{ phase: 'commit', runId: report.run_id }]);
      expect(report).toMatchObject({ status: 'ok', commit_answer_lost: true, counts: { created: 3 } });
      // What the database holds agrees: the listings, and the run 'ok' with them.
      expect(await t.db('listings').where({ source: 'commit-cut', status: 'active' }).count('* as n').first()).toEqual({ n: 3 });
      const run = await t.db('import_runs').where({ id: report.run_id }).first('status', 'error');
      expect(run).toEqual({ status: 'ok', error: null });
    });
  });

  // An outside probe of stop 57: with the database unreachable for a while after the COMMIT, the
  // run's row was asked once, could not be read, and the import said "nothing was changed".
  it('asks again until the database answers when it is gone for a while after the COMMIT', async () => {
    await throughProxy(3000, async (db) => {
      const rows = [1, 2].map((n) => csvRow({ ref: `GONE-${n}`, price: String(1700 + n * 100), area: String(70 + n * 10), rooms: '3', place: 'Strassen' }));
      const started = Date.now();
      const report = await importFeed(db, { source: 'commit-gone', format: 'csv', input: Buffer.from(csvFeed(rows)), gazetteer: gazetteer() });
      expect(Date.now() - started).toBeGreaterThanOrEqual(2500);
      expect(report).toMatchObject({ status: 'ok', commit_answer_lost: true, counts: { created: 2 } });
      expect(await t.db('import_runs').where({ id: report.run_id }).first('status')).toEqual({ status: 'ok' });
    });
  });

  it('says the outcome is unknown, never "nothing was changed", when the database stays gone past the check', async () => {
    await throughProxy(8000, async (db) => {
      const rows = [csvRow({ ref: 'LONG-1', price: '1990', area: '81', rooms: '3', place: 'Strassen' })];
      const error = await importFeed(db, { source: 'commit-long', format: 'csv', input: Buffer.from(csvFeed(rows)), gazetteer: gazetteer(), commitCheckMs: 2000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CommitOutcomeUnknownError);
      const runId = (error as CommitOutcomeUnknownError).runId;
      expect((error as Error).message).toMatch(new RegExp(`could not be reached for 2 s to tell whether it applied: import_runs row ${runId} tells`));
      // It had applied: the run says so.
      expect(await t.db('import_runs').where({ id: runId }).first('status')).toEqual({ status: 'ok' });
      expect(await t.db('listings').where({ source: 'commit-long', status: 'active' }).count('* as n').first()).toEqual({ n: 1 });
    });
  });
});
