import type { Knex } from 'knex';
import { backfillDemoMarketHistory } from '../../src/demo/history.js';
import { takeMarketSnapshot } from '../../src/repositories/market-snapshots.js';
import { insertListing } from './factory.js';

// A small market for the page tests: rentals in a few communes (many in the capital, 2 in
// Vianden: suppressed, 6 in Bech: low sample) and a year of history made by the demo's
// backfill over them, then today's snapshot.
export async function seedSmallMarket(db: Knex, now: Date): Promise<void> {
  let state = 7;
  const rand = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const plan: [string, number, number][] = [
    ['Luxembourg', 80, 47],
    ['Strassen', 24, 40],
    ['Esch-sur-Alzette', 30, 44],
    ['Differdange', 18, 30],
    ['Bech', 6, 22],
    ['Vianden', 2, 20],
  ];
  for (const [commune, n, perM2] of plan) {
    for (let i = 0; i < n; i++) {
      const area = Math.round(30 + rand() * 90);
      const rooms = Math.min(6, Math.max(0, Math.round(area / 28 + rand() - 0.5)));
      await insertListing(db, { commune, listing_type: 'RENT', rooms, area_m2: area, price_eur: Math.round(area * perM2 * (0.8 + rand() * 0.4)) });
    }
  }
  await backfillDemoMarketHistory(db, { now });
  await takeMarketSnapshot(db, { day: now.toISOString().slice(0, 10), takenAt: now });
}
