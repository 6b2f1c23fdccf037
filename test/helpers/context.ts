import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import { afterAll, beforeAll } from 'vitest';
import type { App, AppDeps } from '../../src/app.js';
import { TIERS, type Tier } from '../../src/domain/tiers.js';
import { createHttpServer } from '../../src/http/http-server.js';
import { requireHost } from '../../src/http/raw-responses.js';
import { waitForRedis } from '../../src/redis.js';
import { buildWebApp } from '../web/helpers.js';
import { buildTestApp, createKey, TEST_REDIS_URL, testRedis } from './factory.js';
import { createTestDb, type TestDb } from './pg.js';

// The opening most test files share, as one call at the top of the file (or of a describe):
//
//   const t = useTestContext({ app: 'api', keys: ['free', 'pro'] });
//   it('…', async () => expect(await request(t.app).get('/api/v1/listings').set(bearer(t.keys.free))).toHaveStatus(200));
//
// It registers a beforeAll that clones a database of the file's own from the migrated
// template, then (as asked) opens a Redis client under a prefix of the file's own, builds the
// app and mints one key per tier; and an afterAll that closes the servers the file listened
// on, deletes what was written under the Redis prefix and closes the database's connections
// (the database is dropped by the global teardown). A file's own beforeAll hooks, declared
// after this call, run after it; its own afterAll hooks run before it. Fixtures stay in each
// file: factories create what its tests need.

export interface TestContextOptions {
  // Which app to build once the database is ready: the API's (buildTestApp: silent logger,
  // in-memory rate-limit stores unless `redis`), the web pages' (buildWebApp: the web tests'
  // options), or none (the file builds its own, or tests no app).
  app?: 'api' | 'web';
  // What the app is built with, over the defaults; a function gets the file's database.
  deps?: Partial<AppDeps> | ((db: Knex) => Partial<AppDeps>);
  // One key minted per tier (each on an account of its own), read as t.keys[tier].
  keys?: readonly Tier[];
  // A client on the machine's Redis (TEST_REDIS_URL) and a key prefix of the file's own,
  // given to the app unless deps say otherwise.
  redis?: boolean;
}

export interface TestContext {
  readonly db: Knex;
  // The database's connection string and name, for code under test that opens its own.
  readonly url: string;
  readonly name: string;
  readonly app: App;
  readonly keys: Readonly<Record<Tier, string>>;
  readonly redis: Redis;
  readonly redisPrefix: string;
  // Listens on an ephemeral port of 127.0.0.1 (the context's app unless another is given);
  // closed at the end of the file.
  listen(app?: App): Promise<{ server: Server; base: string; port: number }>;
}

export function useTestContext(options: TestContextOptions = {}): TestContext {
  let testDb: TestDb | undefined;
  let app: App | undefined;
  let redis: Redis | undefined;
  const minted = new Map<Tier, string>();
  // t.keys.free: the key minted for that tier; a tier not asked for is an error, not undefined.
  const keys = new Proxy({} as Record<Tier, string>, {
    get(_target, tier) {
      if (!(TIERS as readonly unknown[]).includes(tier)) return undefined; // symbols, `then`…: not a tier
      const key = minted.get(tier as Tier);
      if (key === undefined) throw new Error(`t.keys.${String(tier)}: no key minted for that tier (list it in useTestContext({ keys }); read it in a test or a hook)`);
      return key;
    },
  });
  const redisPrefix = `lftest:${process.pid}:${randomBytes(4).toString('hex')}:`;
  const servers: Server[] = [];

  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is read before the test context is ready (or was not asked for in useTestContext)`);
    return value;
  };

  beforeAll(async () => {
    testDb = await createTestDb();
    if (options.redis) {
      redis = testRedis();
      redis.on('error', () => undefined); // surfaced by the tests themselves if it matters
      if (!(await waitForRedis(redis, 5000))) throw new Error(`Redis is not reachable at ${TEST_REDIS_URL} (set TEST_REDIS_URL)`);
    }
    if (options.app) {
      const deps = typeof options.deps === 'function' ? options.deps(testDb.db) : (options.deps ?? {});
      const withRedis: Partial<AppDeps> = redis ? { redis, redisPrefix, ...deps } : deps;
      app = options.app === 'web' ? await buildWebApp(testDb.db, withRedis) : await buildTestApp(testDb.db, withRedis);
    }
    for (const tier of options.keys ?? []) minted.set(tier, (await createKey(testDb.db, tier)).key);
  });

  afterAll(async () => {
    for (const s of servers) s.closeAllConnections();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
    if (redis) {
      try {
        let cursor = '0';
        do {
          const [next, found] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
          cursor = next;
          if (found.length) await redis.del(...found);
        } while (cursor !== '0');
      } finally {
        redis.disconnect();
      }
    }
    await testDb?.drop();
  });

  return {
    get db() {
      return ready(testDb, 't.db').db;
    },
    get url() {
      return ready(testDb, 't.url').url;
    },
    get name() {
      return ready(testDb, 't.name').name;
    },
    get app() {
      return ready(app, 't.app');
    },
    keys,
    get redis() {
      return ready(redis, 't.redis');
    },
    redisPrefix,
    async listen(other?: App) {
      // The production server's settings (src/http/http-server.ts) and its Host check.
      const server = createHttpServer(requireHost(other ?? ready(app, 't.app'))).listen(0, '127.0.0.1');
      servers.push(server);
      await once(server, 'listening');
      const port = (server.address() as AddressInfo).port;
      return { server, base: `http://127.0.0.1:${port}`, port };
    },
  };
}
