import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/http/changes-cursor.js';
import type { ApiChange } from '../../src/http/schemas/responses.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, insertListing } from '../helpers/factory.js';

// What the changes feed tells a key that does not see flagged listings (Free, Starter) of the
// listings it never saw, whatever cursor it writes itself: nothing (an outside probe of stop 48:
// a cursor with no floor, written by hand, gave a Free key the id of every flagged listing).
// And a revalidation is answered before the page is read.
describe('GET /api/v1/changes in the unflagged view', () => {
  const t = useTestContext({ app: 'api', keys: ['pro', 'starter'] });

  // Every change after a cursor, page after page.
  const walk = async (key: string, since: string): Promise<ApiChange[]> => {
    const out: ApiChange[] = [];
    for (let cursor = since, more = true; more; ) {
      const res = await request(t.app).get(`/api/v1/changes?limit=2&since=${cursor}`).set(bearer(key));
      expect(res).toHaveStatus(200);
      out.push(...(res.body.data as ApiChange[]));
      cursor = res.body.meta.next_cursor;
      more = res.body.meta.has_more;
    }
    return out;
  };
  const idsOf = (changes: ApiChange[]) => changes.map((c) => (c.op === 'delete' ? c.id : c.listing.id));

  it('a listing flagged since it came is not named to Free or Starter keys; one flagged after it was shown is, as a delete', async () => {
    const plain = await insertListing(t.db, { external_id: 'plain' });
    const flaggedAtOnce = await insertListing(t.db, { external_id: 'outlier', price_eur: 90_000, flags: ['price_outlier'] });
    const shownThenFlagged = await insertListing(t.db, { external_id: 'later' });
    // A Starter mirror that has read everything so far (it holds `plain` and `later`).
    const held = (await request(t.app).get('/api/v1/changes?limit=1000').set(bearer(t.keys.starter))).body;
    expect(idsOf(held.data).sort()).toEqual([plain.id, shownThenFlagged.id].sort());
    await t.db('listings').where({ id: shownThenFlagged.id }).update({ flags: ['stale'] });

    // Its own next page: the delete of the one it held.
    expect(await walk(t.keys.starter, held.meta.next_cursor)).toEqual([{ op: 'delete', id: shownThenFlagged.id, reason: 'hidden' }]);
    // A cursor written by hand from the start with no floor, in this view and in the earlier
    // forms that name none: never the listing flagged since it came.
    for (const forged of [encodeCursor({ seq: 0 }, 'u'), encodeCursor({ seq: 0 })]) {
      const changes = await walk(t.keys.starter, forged);
      expect(idsOf(changes)).toContain(shownThenFlagged.id);
      expect(idsOf(changes)).not.toContain(flaggedAtOnce.id);
    }
    // A Pro key's walk names it, with its flags.
    const pro = await walk(t.keys.pro, encodeCursor({ seq: 0 }, 'a'));
    expect(pro.find((c) => c.op === 'upsert' && c.listing.id === flaggedAtOnce.id)).toMatchObject({ listing: { flags: ['price_outlier'] } });

    // Once unflagged, it comes into the view, and goes out of it as a delete when flagged again.
    const before = (await request(t.app).get(`/api/v1/changes?limit=1000&since=${held.meta.next_cursor}`).set(bearer(t.keys.starter))).body.meta.next_cursor;
    await t.db('listings').where({ id: flaggedAtOnce.id }).update({ flags: [], price_eur: 1900 });
    const shown = await walk(t.keys.starter, before);
    expect(shown).toMatchObject([{ op: 'upsert', listing: { id: flaggedAtOnce.id, price_eur: 1900 } }]);
    await t.db('listings').where({ id: flaggedAtOnce.id }).update({ flags: ['stale'] });
    const after = (await request(t.app).get(`/api/v1/changes?limit=1000&since=${before}`).set(bearer(t.keys.starter))).body.meta.next_cursor;
    await t.db('listings').where({ id: flaggedAtOnce.id }).update({ flags: ['price_outlier', 'stale'] });
    expect(await walk(t.keys.starter, after)).toEqual([{ op: 'delete', id: flaggedAtOnce.id, reason: 'hidden' }]);
  });

  it('a listing written and flagged in one transaction (an import flags its price outliers after writing them) was never in the view', async () => {
    const before = (await request(t.app).get('/api/v1/changes?limit=1000').set(bearer(t.keys.starter))).body.meta.next_cursor as string;
    let id = '';
    await t.db.transaction(async (trx) => {
      id = (await insertListing(trx, { external_id: 'flagged-in-its-import', price_eur: 95_000 })).id;
      await trx('listings').where({ id }).update({ flags: ['price_outlier'] });
    });
    const shown = await walk(t.keys.starter, before);
    expect(idsOf(shown)).not.toContain(id);
    expect(idsOf(await walk(t.keys.starter, encodeCursor({ seq: 0 }, 'u')))).not.toContain(id);
    expect(idsOf(await walk(t.keys.pro, encodeCursor({ seq: 0 }, 'a')))).toContain(id);
    // Unflagged in a later transaction: in the view from then on.
    await t.db('listings').where({ id }).update({ flags: [], price_eur: 1950 });
    expect(await walk(t.keys.starter, before)).toMatchObject([{ op: 'upsert', listing: { id, price_eur: 1950 } }]);
  });

  it('a revalidation whose tag still names the page is 304 without reading the feed; a change gives a new tag', async () => {
    await insertListing(t.db, { external_id: 'reval' });
    const first = await request(t.app).get('/api/v1/changes?limit=1000').set(bearer(t.keys.starter));
    expect(first).toHaveStatus(200);
    const tag = first.headers.etag as string;
    expect(tag).toMatch(/^W\/"/);
    const statements: string[] = [];
    const onQuery = (q: { sql: string }) => statements.push(q.sql);
    t.db.on('query', onQuery);
    try {
      const again = await request(t.app).get('/api/v1/changes?limit=1000').set(bearer(t.keys.starter)).set('If-None-Match', tag);
      expect(again).toHaveStatus(304);
      expect(again.headers.etag).toBe(tag);
    } finally {
      t.db.off('query', onQuery);
    }
    expect(statements.filter((s) => /listing_changes/.test(s))).toEqual([]);
    // Another limit or view is another page.
    expect(await request(t.app).get('/api/v1/changes?limit=999').set(bearer(t.keys.starter)).set('If-None-Match', tag)).toHaveStatus(200);
    expect(await request(t.app).get('/api/v1/changes?limit=1000').set(bearer(t.keys.pro)).set('If-None-Match', tag)).toHaveStatus(200);
    await insertListing(t.db, { external_id: 'reval-2' });
    const changed = await request(t.app).get('/api/v1/changes?limit=1000').set(bearer(t.keys.starter)).set('If-None-Match', tag);
    expect(changed).toHaveStatus(200);
    expect(changed.headers.etag).not.toBe(tag);
    expect(changed.body.data).toHaveLength(first.body.data.length + 1);
  });
});
