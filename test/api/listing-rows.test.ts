import { beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/knex.js';
import { findActiveListingsByIds } from '../../src/repositories/listings.js';
import { createListingRows, listingJsonOf } from '../../src/services/listing-rows.js';
import { useTestContext } from '../helpers/context.js';
import { insertListing } from '../helpers/factory.js';

// The rows of pages and single listings asked for in the same turn of the event loop are read
// in one statement (src/services/listing-rows.ts); each caller still gets exactly its own
// rows, in its order, flagged ones only for the tiers that see them.

const t = useTestContext();
let ids: string[];

beforeAll(async () => {
  ids = [];
  for (let k = 0; k < 8; k++) ids.push((await insertListing(t.db, { price_eur: 1000 + k, flags: k % 3 === 0 ? ['stale'] : [] })).id);
  ids.push((await insertListing(t.db, { status: 'inactive', removed_at: new Date() })).id);
});

describe('listing rows read together', () => {
  it('sends one statement for the requests of one turn, and gives each its own rows', async () => {
    const rows = createListingRows();
    const asks: Array<[string[], boolean]> = [
      [[ids[2], ids[0], ids[5]], true],
      [[ids[0], ids[1], ids[8], 'lst_unknown'], false],
      [[ids[3]], false],
      [[ids[3]], true],
      [[...ids].reverse(), true],
    ];
    const sql: string[] = [];
    const onQuery = (q: { sql: string }) => sql.push(q.sql);
    t.db.on('query', onQuery);
    let answers;
    try {
      answers = await Promise.all(asks.map(([list, flagged]) => rows.find(t.db, list, flagged)));
    } finally {
      t.db.off('query', onQuery);
    }
    expect(sql).toHaveLength(1);
    for (const [k, [list, flagged]] of asks.entries()) {
      const alone = (await findActiveListingsByIds(t.db, list, flagged)).map(listingJsonOf);
      expect(answers[k], JSON.stringify({ list, flagged })).toEqual(alone);
    }
    expect(answers[2]).toEqual([]); // flagged, for a tier that does not see flags
    expect(answers[3].map((r) => r.id)).toEqual([ids[3]]);
  });

  // server.ts reads them on a small pool of their own (DB_ROWS_POOL_MAX): the rows of a batch go
  // there, nothing to the database's own pool, and the batches stay one per database asked.
  it('reads them on the pool poolFor gives for the database asked, in one statement', async () => {
    const rowPool = createDb(t.url, { poolMax: 1 });
    const seen = { main: [] as string[], rows: [] as string[] };
    const onMain = (q: { sql: string }) => seen.main.push(q.sql);
    const onRows = (q: { sql: string }) => seen.rows.push(q.sql);
    t.db.on('query', onMain);
    rowPool.on('query', onRows);
    try {
      const rows = createListingRows({ poolFor: (db) => (db === t.db ? rowPool : db) });
      const answers = await Promise.all([rows.find(t.db, [ids[1], ids[0]], true), rows.find(t.db, [ids[3], ids[2]], false)]);
      expect(answers.map((a) => a.map((r) => r.id))).toEqual([[ids[1], ids[0]], [ids[2]]]);
      expect(seen.main).toEqual([]);
      expect(seen.rows).toHaveLength(1);
    } finally {
      t.db.off('query', onMain);
      await rowPool.destroy();
    }
  });
});
