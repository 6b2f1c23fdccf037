import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDb } from '../src/db/knex.js';
import { createRedis, waitForRedis } from '../src/redis.js';
import { loadGazetteer } from '../src/reference/load.js';
import { keyOf, type Keys, type Req } from './scenarios.js';

// The SQL a scenario really sends, and its plan. The app itself (buildApp, the same code the
// benchmarked server runs) serves one request of each scenario in this process on a knex
// instance whose 'query' events are recorded, so whatever the routes and repositories send
// (page, count, caches' cold path…) is captured with its bindings, and then run again under
// EXPLAIN (ANALYZE, BUFFERS) with the same parameters (an unnamed statement, as knex sends).

export interface ExplainedQuery {
  sql: string;
  bindings: unknown[];
  ms: number | null; // EXPLAIN ANALYZE's execution time
  plan: string;
}

export interface Explained {
  path: string;
  status: number;
  requestMs: number;
  queries: ExplainedQuery[];
}

export async function explainRequests(opts: {
  dbUrl: string;
  redisUrl: string;
  keys: Keys;
  requests: { id: string; req: Req }[];
}): Promise<Map<string, Explained>> {
  const logger = pino({ level: 'silent' });
  const config = loadConfig({ DATABASE_URL: opts.dbUrl, NODE_ENV: 'production', STATS_RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'silent' });
  const db = createDb(opts.dbUrl, { poolMax: 10 });
  let captured: { sql: string; bindings: unknown[] }[] | null = null;
  db.on('query', (q: { sql: string; bindings?: unknown[] }) => captured?.push({ sql: q.sql, bindings: q.bindings ?? [] }));
  const redis = createRedis(opts.redisUrl, { timeoutMs: 300, logger });
  await waitForRedis(redis, 1500);
  const app = buildApp({ config, db, redis, logger, gazetteer: await loadGazetteer(db) });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new pg.Client({ connectionString: opts.dbUrl });
  await client.connect();
  const out = new Map<string, Explained>();
  try {
    for (const { id, req } of opts.requests) {
      captured = [];
      const t = performance.now();
      const res = await fetch(base + req.path, { headers: req.key ? { authorization: `Bearer ${keyOf(opts.keys, req.key)}` } : {} });
      await res.arrayBuffer();
      const requestMs = performance.now() - t;
      const sent = captured;
      captured = null;
      // The key lookup is in every keyed request: shown only when it is all there is.
      const interesting = sent.filter((q) => !/\bapi_keys\b/.test(q.sql));
      const queries: ExplainedQuery[] = [];
      for (const q of interesting.length ? interesting : sent) {
        if (!/^\s*(select|with)\b/i.test(q.sql)) {
          queries.push({ sql: q.sql, bindings: q.bindings, ms: null, plan: '(not run again: not a read)' });
          continue;
        }
        const r = await client.query({ text: `EXPLAIN (ANALYZE, BUFFERS) ${q.sql}`, values: q.bindings as unknown[] });
        const plan = (r.rows as { 'QUERY PLAN': string }[]).map((x) => x['QUERY PLAN']).join('\n');
        const m = /Execution Time: ([\d.]+) ms/.exec(plan);
        queries.push({ sql: q.sql, bindings: q.bindings, ms: m ? Number(m[1]) : null, plan });
      }
      queries.sort((a, b) => (b.ms ?? 0) - (a.ms ?? 0));
      out.set(id, { path: req.path, status: res.status, requestMs, queries });
    }
  } finally {
    await client.end();
    server.close();
    server.closeAllConnections();
    await db.destroy();
    await redis.quit().catch(() => redis.disconnect());
  }
  return out;
}
