import { Router, type Response } from 'express';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import type { ReadModel } from '../../read-model/queries.js';
import { within } from '../../lib/within.js';
import { pingDatabase } from '../../repositories/database.js';

// A health answer is never kept (no-store), so it carries no ETag either and is never a 304:
// sent as it is, without res.json's entity tag (an outside probe found 304s of health checks).
function sendNoStore(res: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.status(status).setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

// /healthz: the process is alive (no dependency is checked, so a database outage does not get
// the container restarted). /readyz: the database and Redis answer; 503 names the one that
// does not. It also reports the listings read model (informational: without it, answers come
// from SQL, exact but slower at scale).
export function healthRouter(deps: { db: Knex; redis: Redis | null; readModel?: ReadModel }): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    sendNoStore(res, 200, { status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const [database, redis] = await Promise.all([
      within(pingDatabase(deps.db), 1000).then(
        () => 'ok' as const,
        () => 'down' as const,
      ),
      deps.redis
        ? within(deps.redis.ping(), 1000).then(
            () => 'ok' as const,
            () => 'down' as const,
          )
        : Promise.resolve('not_configured' as const),
    ]);
    const ok = database === 'ok' && redis !== 'down';
    const m = deps.readModel?.info();
    const readModel = m
      ? { status: m.version === null ? 'loading' : 'loaded', version: m.version, listings: m.listings, last_load_ms: m.lastBuildMs, last_error: m.lastError, builds: m.builds, served: m.served }
      : { status: 'off' };
    sendNoStore(res, ok ? 200 : 503, { status: ok ? 'ok' : 'unavailable', checks: { database, redis }, read_model: readModel });
  });
  return router;
}
