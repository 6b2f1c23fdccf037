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

// Redis answers a write, not only PING: a Redis that refuses writes (out of memory under
// `noeviction`, a read-only replica, a failed snapshot with stop-writes-on-bgsave-error) still
// answers PING, but the quota counters cannot count there, so quotas go unenforced as with
// Redis down (an outside probe found /readyz "ok" meanwhile). Such an error is
// `refuses_writes`; no answer within 1 s, or a broken connection, is `down`.
const REFUSED_WRITE = /^(?:OOM|READONLY|MISCONF|NOPERM|NOREPLICAS)\b/;

function redisCheck(redis: Redis, key: string): Promise<'ok' | 'down' | 'refuses_writes'> {
  return within(redis.set(key, String(process.pid), 'PX', 10_000), 1000).then(
    () => 'ok' as const,
    (err: unknown) => (err instanceof Error && REFUSED_WRITE.test(err.message) ? ('refuses_writes' as const) : ('down' as const)),
  );
}

// /healthz: the process is alive (no dependency is checked, so a database outage does not get
// the container restarted). /readyz: the database and Redis answer (Redis a write: above); 503
// names the one that does not. It also reports the listings read model (informational:
// without it, answers come from SQL, exact but slower at scale).
export function healthRouter(deps: { db: Knex; redis: Redis | null; redisPrefix: string; readModel?: ReadModel }): Router {
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
      deps.redis ? redisCheck(deps.redis, `${deps.redisPrefix}readyz`) : Promise.resolve('not_configured' as const),
    ]);
    const ok = database === 'ok' && (redis === 'ok' || redis === 'not_configured');
    const m = deps.readModel?.info();
    const readModel = m
      ? { status: m.version === null ? 'loading' : 'loaded', version: m.version, listings: m.listings, last_load_ms: m.lastBuildMs, last_error: m.lastError, builds: m.builds, served: m.served }
      : { status: 'off' };
    sendNoStore(res, ok ? 200 : 503, { status: ok ? 'ok' : 'unavailable', checks: { database, redis }, read_model: readModel });
  });
  return router;
}
