import { Router } from 'express';
import type { Knex } from 'knex';
import { z } from 'zod';
import { listCommunes } from '../../repositories/communes.js';
import type { ApiCommunes } from '../schemas/responses.js';
import { validateQuery } from '../validate.js';

export const communesQuery = z.object({});

// The 100 communes with their canton, Luxembourgish and German names, centroid and
// localities: what a client needs to build a commune picker.
export function communesRouter(deps: { db: Knex }): Router {
  const router = Router();
  let cache: ApiCommunes['data'] | null = null; // reference data: changes only with a migration
  router.get('/', async (req, res) => {
    validateQuery(communesQuery, req.query);
    cache ??= await listCommunes(deps.db);
    const body: ApiCommunes = { data: cache, meta: { total: cache.length } };
    res.json(body);
  });
  return router;
}
