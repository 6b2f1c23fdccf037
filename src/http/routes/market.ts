import { Router } from 'express';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { ApiCaches } from '../../cache/api-caches.js';
import type { Gazetteer } from '../../reference/gazetteer.js';
import { currentDataVersion } from '../../repositories/data-version.js';
import { iso, lastUpdated } from '../../repositories/freshness.js';
import { marketPrices, type MarketRecord } from '../../repositories/market.js';
import { cachedBody } from '../../cache/cached-body.js';
import { sendCachedBody } from '../send-cached-body.js';
import { resolveCommuneParam } from '../commune-param.js';
import { communeParam } from '../schemas/listings.js';
import { validateQuery } from '../validate.js';

export const marketQuery = z.object({ commune: communeParam.optional() });

const byName = new Intl.Collator('fr', { sensitivity: 'base' });

export function marketRouter(deps: { db: Knex; gazetteer: Gazetteer; caches: ApiCaches }): Router {
  const router = Router();
  router.get('/prices', async (req, res) => {
    const q = validateQuery(marketQuery, req.query);
    const place = q.commune !== undefined ? resolveCommuneParam(deps.gazetteer, q.commune) : undefined;
    // Live: computed from the data as it stands, reused only while the data version is the same.
    const version = res.locals.dataVersion ?? (await currentDataVersion(deps.db));
    const body = await deps.caches.market.get(version, JSON.stringify(place ?? {}), async () => {
      const [rows, updated] = await Promise.all([
        marketPrices(deps.db, place ?? {}),
        deps.caches.freshness.get(version, 'last_updated', () => lastUpdated(deps.db)),
      ]);
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
      return cachedBody({ data, meta: { listing_type: 'RENT', last_updated: iso(updated) } });
    });
    sendCachedBody(req, res, body);
  });
  return router;
}
