import { Router } from 'express';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { ApiCaches } from '../../cache/api-caches.js';
import { cachedBody } from '../../cache/cached-body.js';
import type { Gazetteer } from '../../reference/gazetteer.js';
import { iso } from '../../repositories/freshness.js';
import { marketPrices, type MarketRecord } from '../../repositories/market.js';
import { lastUpdatedAt } from '../../services/last-updated.js';
import { resolveCommuneParam } from '../commune-param.js';
import { dataVersion } from '../data-version.js';
import { communeParam } from '../schemas/listings.js';
import type { ApiMarketPrices } from '../schemas/responses.js';
import { sendCachedBody } from '../send-cached-body.js';
import { validateQuery } from '../validate.js';

export const marketQuery = z.object({ commune: communeParam.optional() });

const byName = new Intl.Collator('fr', { sensitivity: 'base' });

export function marketRouter(deps: { db: Knex; gazetteer: Gazetteer; caches: ApiCaches }): Router {
  const router = Router();
  router.get('/prices', async (req, res) => {
    const q = validateQuery(marketQuery, req.query);
    const place = q.commune !== undefined ? resolveCommuneParam(deps.gazetteer, q.commune) : undefined;
    // Live: computed from the data as it stands, reused only while the data version is the same.
    const version = await dataVersion(res, deps.db);
    const body = await deps.caches.market.get(version, JSON.stringify(place ?? {}), async () => {
      const [rows, updated] = await Promise.all([marketPrices(deps.db, place ?? {}), lastUpdatedAt(deps, version)]);
      let data: MarketRecord[] = [...rows].sort((a, b) => byName.compare(a.commune, b.commune));
      if (place) {
        // A named commune (or quarter) with no rentals still answers: one record of zeros.
        data = place.communes.map(
          (c) =>
            rows.find((r) => r.commune === c) ?? {
              commune: c,
              listings: 0,
              avg_rent_eur: null,
              avg_price_per_m2_eur: null,
              median_rent_eur: null,
              median_price_per_m2_eur: null,
            },
        );
        if (place.locality) data = data.map(({ commune, ...rest }) => ({ commune, locality: place.locality, ...rest }));
      }
      const answer: ApiMarketPrices = { data, meta: { listing_type: 'RENT', last_updated: iso(updated) } };
      return cachedBody(answer);
    });
    sendCachedBody(req, res, body);
  });
  return router;
}
