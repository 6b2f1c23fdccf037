import { Router } from 'express';
import type { Knex } from 'knex';
import { readAt, type ReadsAt } from '../../db/read-replica.js';
import { z } from 'zod';
import type { ApiCaches } from '../../cache/api-caches.js';
import type { LiveState } from '../../cache/live-state.js';
import { cachedBody } from '../../cache/cached-body.js';
import { iso } from '../../repositories/freshness.js';
import { computeStats } from '../../repositories/stats.js';
import { lastUpdatedAt } from '../../services/last-updated.js';
import { dataVersion } from '../data-version.js';
import type { ApiStats } from '../schemas/responses.js';
import { sendCachedBody } from '../send-cached-body.js';
import { validateQuery } from '../validate.js';

export const statsQuery = z.object({});

export function statsRouter(deps: { db: Knex; reads?: ReadsAt; caches: ApiCaches; live?: LiveState }): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    validateQuery(statsQuery, req.query);
    const version = await dataVersion(res, deps.db, deps.live);
    const body = await deps.caches.stats.get(version, 'stats', async () => {
      const [stats, updated] = await Promise.all([readAt(deps.reads, deps.db, version, (db) => computeStats(db)), lastUpdatedAt(deps, version)]);
      const answer: ApiStats = {
        total_active: stats.total_active,
        flagged: stats.flagged,
        by_source: stats.by_source,
        by_commune: stats.by_commune,
        last_updated: iso(updated),
        sources: stats.sources.map((s) => ({ source: s.source, last_import_at: iso(s.last_import_at), status: s.status })),
      };
      return cachedBody(answer);
    });
    res.setHeader('Cache-Control', 'public, max-age=60');
    // The same answer for everyone (no key): the replay sends it again under the per-IP limit.
    sendCachedBody(req, res, body, { open: true, version });
  });
  return router;
}
