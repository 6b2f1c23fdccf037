import { Router } from 'express';
import type { Knex } from 'knex';
import { z } from 'zod';
import { validateQuery } from '../validate.js';

export const communesQuery = z.object({});

// The 100 communes with their canton, Luxembourgish and German names, centroid and
// localities: what a client needs to build a commune picker.
export function communesRouter(deps: { db: Knex }): Router {
  const router = Router();
  let cache: unknown[] | null = null; // reference data: changes only with a migration
  router.get('/', async (req, res) => {
    validateQuery(communesQuery, req.query);
    if (!cache) {
      const [communes, localities] = await Promise.all([
        deps.db('communes').select('lau2', 'name', 'name_lb', 'name_de', 'canton', 'canton_iso', 'lat', 'lng', 'population').orderBy('name'),
        deps.db('localities').select('commune', 'locality', 'kind').orderBy('locality'),
      ]);
      const byCommune = new Map<string, { name: string; kind: string }[]>();
      for (const l of localities) {
        if (l.locality === l.commune) continue;
        const list = byCommune.get(l.commune) ?? [];
        list.push({ name: l.locality, kind: l.kind === 'locality' ? 'locality' : 'quarter' });
        byCommune.set(l.commune, list);
      }
      const collator = new Intl.Collator('fr', { sensitivity: 'base' });
      cache = communes
        .sort((a, b) => collator.compare(a.name, b.name))
        .map((c) => ({ ...c, localities: byCommune.get(c.name) ?? [] }));
    }
    res.json({ data: cache, meta: { total: cache.length } });
  });
  return router;
}
