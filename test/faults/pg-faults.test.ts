import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import request from 'supertest';
import { register } from 'tsx/esm/api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/db/embedded.js';
import { createDb, migrateLatest } from '../../src/db/knex.js';
import { bearer, buildTestApp, createKey, insertListing } from '../helpers/factory.js';
import { freePort } from '../helpers/redis-server.js';

// PostgreSQL going away while the service runs, on a throwaway server (never the machine's).
describe('PostgreSQL going away and coming back', () => {
  let root: string;
  let port: number;
  let pg: EmbeddedPostgresHandle | null = null;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'pg-faults-'));
    await chmod(root, 0o755);
    port = await freePort();
    pg = await startEmbeddedPostgres({ dir: path.join(root, 'pg'), port });
  });
  afterAll(async () => {
    await pg?.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('answers 503 unavailable (never a 500, never a hang, never a crash) and recovers by itself', async () => {
    const db = createDb(pg!.url, { poolMax: 4 });
    try {
      const unregister = register(); // knex imports the .ts migrations with Node's own loader
      try {
        await migrateLatest(db);
      } finally {
        await unregister();
      }
      const key = (await createKey(db, 'pro')).key;
      await insertListing(db);
      const lines: { msg: string; cause?: string }[] = [];
      const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
      const app = await buildTestApp(db, { logger });
      expect(await request(app).get('/api/v1/listings').set(bearer(key))).toHaveStatus(200);

      await pg!.stop();
      pg = null;
      for (const path of ['/api/v1/listings', '/api/v1/stats', '/api/v1/market/prices', '/readyz']) {
        // "Never a hang": an outer bound far above the pool's acquire timeout (5 s).
        const res = await request(app).get(path).set(bearer(key)).timeout(30_000);
        expect(res, path).toHaveStatus(503);
        if (path !== '/readyz') expect(res.body.code).toBe('unavailable');
      }
      // Each 503 of the API classified by its cause: the connections the server cut, or the
      // new ones it refuses; never a query left waiting for a connection (pool_timeout).
      const causes = lines.filter((l) => l.msg === 'dependency unavailable').map((l) => l.cause);
      expect(causes).toHaveLength(3);
      for (const cause of causes) expect(['unreachable', 'connection_lost']).toContain(cause);
      expect(await request(app).get('/healthz')).toHaveStatus(200);

      pg = await startEmbeddedPostgres({ dir: path.join(root, 'pg'), port });
      // Recovers by itself once PostgreSQL is back (however long the pool takes to reconnect on a busy machine).
      await vi.waitFor(async () => expect(await request(app).get('/api/v1/listings').set(bearer(key))).toHaveStatus(200), { timeout: 30_000, interval: 200 });
    } finally {
      await db.destroy();
    }
  }, 120_000);
});
