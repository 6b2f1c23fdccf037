import { beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../src/demo/random.js';
import { LISTING_TYPES } from '../../src/domain/listing.js';
import { currentDataVersion } from '../../src/repositories/data-version.js';
import { marketPrices, type MarketPricesFilter } from '../../src/repositories/market.js';
import { createMarketPrices } from '../../src/services/market-prices.js';
import { unavailableCause } from '../../src/db/errors.js';
import { useTestContext } from '../helpers/context.js';
import { insertListing } from '../helpers/factory.js';

// /market/prices answers from the figures of every group, read once per data version in one
// statement (src/services/market-prices.ts): each selection must give exactly what its own
// SQL statement gives, for every type, rooms bucket, commune, locality and list of communes.

const t = useTestContext();
const COMMUNES = ['Luxembourg', 'Strassen', 'Mamer', 'Hesperange'];
const LOCALITIES = ['Gare', 'Kirchberg', 'Belair', 'Howald', null];

beforeAll(async () => {
  const rng = new Rng(2026);
  for (let k = 0; k < 400; k++) {
    const type = rng.pick(LISTING_TYPES);
    await insertListing(t.db, {
      commune: rng.pick(COMMUNES),
      locality: rng.pick(LOCALITIES),
      listing_type: type,
      rooms: rng.chance(0.15) ? null : rng.int(0, 8),
      area_m2: rng.chance(0.15) ? null : rng.chance(0.1) ? 0 : Math.round(rng.between(12, 250) * 10) / 10,
      price_eur: type === 'SALE' ? rng.int(150_000, 2_500_000) : rng.pick([900, 1200, 1500, rng.int(400, 5000)]),
      status: rng.chance(0.1) ? 'inactive' : 'active',
      flags: rng.chance(0.1) ? ['price_outlier'] : [],
    });
  }
});

describe('market prices from the figures of every group', () => {
  it('gives what the per-request SQL gives, for every selection', async () => {
    const prices = createMarketPrices({ db: t.db });
    const version = await currentDataVersion(t.db);
    await prices.ready(version);
    const selections: Array<Pick<MarketPricesFilter, 'communes' | 'locality'>> = [
      {},
      ...COMMUNES.map((c) => ({ communes: [c] })),
      ...COMMUNES.flatMap((c) => LOCALITIES.filter((l) => l !== null).map((locality) => ({ communes: [c], locality }))),
      { communes: ['Luxembourg', 'Hesperange'], locality: 'Howald' },
      { communes: ['Strassen', 'Nowhere'] },
    ];
    const byCommune = (rows: Array<{ commune: string }>) => [...rows].sort((a, b) => a.commune.localeCompare(b.commune));
    let compared = 0;
    for (const listingType of LISTING_TYPES) {
      for (const rooms of [undefined, 0, 1, 2, 3, 4, 5]) {
        for (const sel of selections) {
          const f = { ...sel, listingType, rooms };
          const fromSql = await marketPrices(t.db, f);
          expect(byCommune(await prices.prices(version, f)), JSON.stringify(f)).toEqual(byCommune(fromSql));
          compared += fromSql.length;
        }
      }
    }
    expect(compared).toBeGreaterThan(300);
  });

  it('answers at the version held until a newer one is read, then from the newer one', async () => {
    const prices = createMarketPrices({ db: t.db });
    const before = await currentDataVersion(t.db);
    await prices.ready(before);
    const f = { communes: ['Mamer'], listingType: 'SUBLET' as const, rooms: 1 };
    const old = await marketPrices(t.db, f);
    await insertListing(t.db, { commune: 'Mamer', listing_type: 'SUBLET', rooms: 1, price_eur: 777, area_m2: 7 });
    const after = await currentDataVersion(t.db);
    expect(after).toBeGreaterThan(before);
    const now = await marketPrices(t.db, f);
    expect(now).not.toEqual(old);
    expect(await prices.prices(before, f)).toEqual(old); // a request that read the older version
    // The newer version: from its read of every group, or from SQL while the previous read's
    // spacing holds the next one back.
    expect(await prices.prices(after, f)).toEqual(now);
    await prices.ready(after);
    expect(await prices.prices(after, f)).toEqual(now);
    expect(await prices.prices(before, f)).toEqual(now); // older than held: SQL, as it stands
  });

  // An outside probe of stop 52: behind a lock on the table, a request waited for the read of
  // every group (120 s timeout) 39.7 s, where every other route answered 503 at 10 s.
  it('waits for the read of every group no longer than a statement may take, then answers 503; the read goes on', async () => {
    await insertListing(t.db, { commune: 'Mamer', listing_type: 'RENT', rooms: 2, price_eur: 1999, area_m2: 70 });
    const version = await currentDataVersion(t.db);
    // Nothing held yet: the first request starts the read (no spacing holds it back).
    const prices = createMarketPrices({ db: t.db, waitMs: 300 });
    const f = { communes: ['Mamer'], listingType: 'RENT' as const, rooms: 2 };
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = t.db.transaction(async (trx) => {
      await trx.raw('LOCK TABLE listings IN ACCESS EXCLUSIVE MODE');
      locked();
      await released;
    });
    await isLocked;
    const started = Date.now();
    const err = await prices.prices(version, f).then(() => null, (e: unknown) => e as Error & { code?: string });
    const waited = Date.now() - started;
    release();
    await holder;
    expect(err?.code).toBe('57014');
    expect(unavailableCause(err)).toBe('statement_timeout');
    // Its own wait (300 ms), not the read's timeout (120 s), however busy the machine.
    expect(waited).toBeGreaterThanOrEqual(300);
    expect(waited).toBeLessThan(20_000);
    await prices.ready(version);
    expect(await prices.prices(version, f)).toEqual(await marketPrices(t.db, f));
  });
});
