import { Router } from 'express';
import type { Knex } from 'knex';
import type { ReadsAt } from '../../db/read-replica.js';
import type { ApiCaches } from '../../cache/api-caches.js';
import type { LiveState } from '../../cache/live-state.js';
import { cachedBody } from '../../cache/cached-body.js';
import { describePeriod, historyRange, NO_FIGURES, publishFigures, utcDay } from '../../domain/market.js';
import type { Gazetteer } from '../../reference/gazetteer.js';
import { iso } from '../../repositories/freshness.js';
import { ALL_ROOMS, lastSnapshotAt, marketHistory, snapshotVersion } from '../../repositories/market-snapshots.js';
import { lastUpdatedAt } from '../../services/last-updated.js';
import type { MarketPrices } from '../../services/market-prices.js';
import { resolveCommuneParam } from '../commune-param.js';
import { dataVersion } from '../data-version.js';
import { ApiError } from '../errors.js';
import { historyRangeProblem, marketHistoryQuery, marketHistoryQueryShape, marketPricesQuery, type ApiMarketHistory, type ApiMarketPrices } from '../schemas/market.js';
import { sendCachedBody } from '../send-cached-body.js';
import { validateQuery } from '../validate.js';

const byName = new Intl.Collator('fr', { sensitivity: 'base' });

export function marketRouter(deps: { db: Knex; reads?: ReadsAt; gazetteer: Gazetteer; caches: ApiCaches; clock: () => Date; live?: LiveState; prices: MarketPrices }): Router {
  const router = Router();

  router.get('/prices', async (req, res) => {
    const q = validateQuery(marketPricesQuery, req.query);
    const listingType = q.listing_type ?? 'RENT';
    const rooms = q.rooms ?? null;
    const place = q.commune !== undefined ? resolveCommuneParam(deps.gazetteer, q.commune) : undefined;
    // Live: computed from the data as it stands, reused only while the data version is the same.
    const version = await dataVersion(res, deps.db, deps.live);
    // A locality name: a record for each locality the name matches, in its commune, as the
    // listings filter matches them all (an outside probe of stop 47: `Goebelsmühle` answered for
    // Bourscheid alone, with none, while the listings of that name are in Goesdorf).
    const places: { commune?: string; locality?: string }[] = place?.every
      ? [...place.every.options].sort((a, b) => byName.compare(a.commune, b.commune) || byName.compare(a.locality, b.locality))
      : place
        ? place.communes.map((commune) => ({ commune }))
        : [{}];
    const key = JSON.stringify([places, listingType, rooms]);
    const body = await deps.caches.market.get(version, key, async () => {
      const [answers, updated] = await Promise.all([
        Promise.all(
          places.map(async (p) => ({
            p,
            rows: await deps.prices.prices(version, { communes: p.commune ? [p.commune] : undefined, locality: p.locality, listingType, rooms: rooms ?? undefined }),
          })),
        ),
        lastUpdatedAt(deps, version),
      ]);
      // A named commune (or quarter) with no such listings still answers: one record with
      // listings 0 and null figures.
      const data = answers.flatMap(({ p, rows }) => {
        const figures = new Map(rows.map((r) => [r.commune, r]));
        const communes = p.commune ? [p.commune] : [...figures.keys()].sort((a, b) => byName.compare(a, b));
        return communes.map((commune) => ({
          commune,
          ...(p.locality ? { locality: p.locality } : {}),
          ...publishFigures(figures.get(commune) ?? NO_FIGURES, listingType, rooms),
        }));
      });
      const answer: ApiMarketPrices = { data, meta: { listing_type: listingType, rooms, last_updated: iso(updated) } };
      return cachedBody(answer);
    });
    sendCachedBody(req, res, body);
  });

  router.get('/history', async (req, res) => {
    const q = validateQuery(marketHistoryQueryShape, req.query, marketHistoryQuery);
    const place = resolveCommuneParam(deps.gazetteer, q.commune, 'commune', true);
    if (place.every) {
      // Every locality the name is, with every commune they lie in (an outside probe of stop 50:
      // "Bruch" named Esch-sur-Alzette alone, though it is also Brouch in Helperknapp).
      const { localities, communes } = place.every;
      const message = `names the ${localities.length > 1 ? 'localities' : 'locality'} ${localities.join(', ')}; history is kept per commune (${communes.join(', ')})`;
      throw new ApiError({ status: 400, code: 'invalid_parameter', detail: `commune ${message}`, errors: [{ param: 'commune', message }] });
    }
    const commune = place.communes[0];
    const listingType = q.listing_type ?? 'RENT';
    const rooms = q.rooms ?? null;
    const interval = q.interval ?? 'month';
    const today = deps.clock();
    const { from, to } = historyRange(interval, utcDay(today), q);
    const message = historyRangeProblem(from, to);
    if (message) {
      throw new ApiError({ status: 400, code: 'invalid_parameter', detail: `from ${message}`, errors: [{ param: 'from', message }] });
    }
    // From the snapshots only: reused while no snapshot has been taken since (the version kept
    // in memory by the database's notifications, else read now).
    const version = deps.live?.currentSnapshotVersion() ?? (await snapshotVersion(deps.db));
    const key = JSON.stringify([commune, listingType, rooms, interval, from, to]);
    const body = await deps.caches.marketHistory.get(version, key, async () => {
      const [rows, last] = await Promise.all([
        marketHistory(deps.db, { commune, listingType, rooms: rooms ?? ALL_ROOMS, interval, from, to }),
        lastSnapshotAt(deps.db),
      ]);
      const data = rows.map((r) => ({
        ...describePeriod(interval, r.period_start),
        snapshot_date: r.snapshot_date,
        ...publishFigures(r, listingType, rooms),
      }));
      const answer: ApiMarketHistory = { data, meta: { commune, listing_type: listingType, rooms, interval, from, to, last_snapshot_at: iso(last) } };
      return cachedBody(answer);
    });
    // Sent again without Express only at the same snapshots' version and on the same UTC day
    // (the default range ends today).
    const untilMs = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + 1);
    sendCachedBody(req, res, body, { snapshots: version, untilMs });
  });

  return router;
}
