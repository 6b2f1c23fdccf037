import { Router } from 'express';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';

async function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    t = setTimeout(() => reject(new Error('timeout')), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(t);
  }
}

// /healthz: the process is alive (no dependency is checked, so a database outage does not get
// the container restarted). /readyz: the database and Redis answer; 503 names the one that
// does not.
export function healthRouter(deps: { db: Knex; redis: Redis | null }): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const [database, redis] = await Promise.all([
      within(1000, deps.db.raw('SELECT 1')).then(
        () => 'ok' as const,
        () => 'down' as const,
      ),
      deps.redis
        ? within(1000, deps.redis.ping()).then(
            () => 'ok' as const,
            () => 'down' as const,
          )
        : Promise.resolve('not_configured' as const),
    ]);
    const ok = database === 'ok' && redis !== 'down';
    res.setHeader('Cache-Control', 'no-store');
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'unavailable', checks: { database, redis } });
  });
  return router;
}
