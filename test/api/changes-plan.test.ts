import { describe, expect, it } from 'vitest';
import { readChanges } from '../../src/repositories/changes.js';
import { useTestContext } from '../helpers/context.js';
import { insertListing } from '../helpers/factory.js';

// An outside probe (stop 60): on a freshly seeded database whose data_state had never been
// analysed (autovacuum off), a page of /changes?limit=1000 spent 170-380 ms in PostgreSQL's
// JIT compilation. The planner guessed hundreds of rows for the one-row data_state, multiplied
// the page by them (1.8 million rows estimated for a page of 1,001) and compiled the plan.
// The page's statement now reads the version with LIMIT 1, so its estimate is the page's size
// whatever data_state's statistics say.

const t = useTestContext();

interface PlanNode {
  'Plan Rows': number;
}

// The plan of the statement readChanges sends, under the statistics as they stand.
async function planOfPage(opts: Parameters<typeof readChanges>[1]): Promise<{ plan: PlanNode; jit: boolean }> {
  let captured: { sql: string; bindings: unknown[] } | undefined;
  const onQuery = (q: { sql: string; bindings?: unknown[] }) => {
    if (q.sql.includes('listing_changes')) captured = { sql: q.sql, bindings: q.bindings ?? [] };
  };
  t.db.on('query', onQuery);
  try {
    await readChanges(t.db, opts);
  } finally {
    t.db.off('query', onQuery);
  }
  expect(captured).toBeDefined();
  const conn = await t.db.client.acquireConnection();
  try {
    const { rows } = await conn.query(`EXPLAIN (FORMAT JSON) ${captured!.sql}`, captured!.bindings);
    const top = rows[0]['QUERY PLAN'][0];
    return { plan: top.Plan as PlanNode, jit: top.JIT !== undefined };
  } finally {
    await t.db.client.releaseConnection(conn);
  }
}

describe('the plan of a page of changes', () => {
  it('is estimated at the page size and not JIT-compiled when data_state was never analysed', async () => {
    // Each insert bumps the version: dead row versions in data_state's pages, as after a seed.
    for (let i = 0; i < 40; i++) await insertListing(t.db);
    // The statistics of a table never analysed (the state the probe found after a seed).
    await t.db.raw(`UPDATE pg_class SET reltuples = -1 WHERE oid = 'data_state'::regclass`);
    const limit = 1000;
    for (const opts of [
      { from: null, limit, includeFlagged: false },
      { from: null, limit, includeFlagged: true },
      { from: { seq: 0 }, limit, includeFlagged: false },
      { from: { seq: 5, floor: 30 }, limit, includeFlagged: false },
    ]) {
      const { plan, jit } = await planOfPage(opts);
      expect(plan['Plan Rows'], JSON.stringify(opts)).toBeLessThanOrEqual(limit + 1);
      expect(jit, JSON.stringify(opts)).toBe(false);
    }
    // And the page itself is read as before.
    const page = await readChanges(t.db, { from: null, limit, includeFlagged: true });
    expect(page.rows).toHaveLength(40);
  });
});
