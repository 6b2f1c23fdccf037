import { describe, expect, it } from 'vitest';
import { refreshStaleUnlessImporting } from '../../src/ingest/index.js';
import { ensureTodaysSnapshot } from '../../src/services/market-snapshots.js';
import { useTestContext } from '../helpers/context.js';
import { insertListing } from '../helpers/factory.js';

// The data version moves with every committed change and only then (migrations/
// 20261129000100): a statement that writes no row is no change. An outside probe found the
// server's stale check moving it every 15 minutes with nothing changed, so today's market
// snapshot was taken again and every cache dropped.
describe('the data version', () => {
  const t = useTestContext();
  const version = async () => Number((await t.db('data_state').first('version')).version);

  it('does not move for statements on listings that write no row, and moves for one that writes', async () => {
    const listing = await insertListing(t.db, { commune: 'Mamer', price_eur: 1900, last_seen_at: new Date() });
    const v0 = await version();
    await t.db.raw(`UPDATE listings SET title = title || '!' WHERE false`);
    await t.db.raw(`DELETE FROM listings WHERE false`);
    await t.db.raw(`INSERT INTO listings (id) SELECT id FROM listings WHERE false`);
    expect(await version()).toBe(v0);
    const [{ seq }] = await t.db('listing_changes').where({ listing_id: listing.id }).select('seq');
    await t.db('listings').where({ id: listing.id }).update({ title: 'A flat in Mamer, renovated' });
    expect(await version()).toBe(v0 + 1);
    const [after] = await t.db('listing_changes').where({ listing_id: listing.id }).select('seq');
    expect(Number(after.seq)).toBe(v0 + 1);
    expect(Number(after.seq)).toBeGreaterThan(Number(seq));
  });

  it("the server's check with nothing stale leaves the version, and today's snapshot stays current", async () => {
    const now = new Date();
    await insertListing(t.db, { commune: 'Mamer', price_eur: 1900, last_seen_at: now });
    expect(await ensureTodaysSnapshot(t.db, now)).toBe('taken');
    const v0 = await version();
    expect(await refreshStaleUnlessImporting(t.db, now)).toEqual({ flagged: 0, decidedAgain: 0 });
    expect(await version()).toBe(v0);
    expect(await ensureTodaysSnapshot(t.db, now)).toBe('current');
  });
});
