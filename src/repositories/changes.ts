import type { Knex } from 'knex';
import type { ListingStatus } from '../domain/listing.js';
import { PUBLIC_COLUMNS, type PublicListingRow } from './listings.js';

// The changes feed over listing_changes (migrations/20261124000100_listing_changes.ts): one
// row a listing, at the sequence number of its latest public change.

// Where a reader stands: every change up to (seq, id) is read; without id, every change up to
// and including seq. `floor` is set during a first walk through the feed (a reader that
// started with nothing): changes at or below it of listings that are not visible to the key
// are skipped, since such a reader never held them (any change after its first read has a
// higher number).
export interface ChangePosition {
  seq: number;
  id?: string;
  floor?: number;
}

// A listing's current state as the feed reports it; null when the row is gone altogether.
export type ChangedListing = PublicListingRow & { status: ListingStatus; merged_into: string | null };

export interface ChangeRow {
  seq: number;
  listing_id: string;
  listing: ChangedListing | null;
}

export interface ChangesRead {
  rows: ChangeRow[];
  hasMore: boolean;
  // The data version of the snapshot the page was read in: every change up to it is visible
  // in that snapshot, none above it is.
  version: number;
}

const after = (p: { seq: number; id?: string }): [string, Knex.RawBinding[]] =>
  p.id === undefined ? ['c.seq > ?', [p.seq]] : ['(c.seq, c.listing_id) > (?, ?)', [p.seq, p.id]];

// One page of changes after `from`, or from the start (null: a first walk, whose floor is
// the version of the snapshot this first page is read in). Read in one statement, so in one
// snapshot: the version, the change rows and the listings' states agree.
export async function readChanges(db: Knex, opts: { from: ChangePosition | null; limit: number; includeFlagged: boolean }): Promise<ChangesRead & { floor?: number }> {
  const { limit, includeFlagged } = opts;
  const from = opts.from ?? { seq: 0 };
  const n = limit + 1;
  const parts: string[] = [];
  const bindings: Knex.RawBinding[] = [];
  // Above it (or past a first walk), in the unflagged view, only listings that were once in it:
  // one never shown there is nothing its mirror could hold (and its id no business of the key's:
  // migrations/20261130000100_listing_changes_shown.ts).
  const everShown = includeFlagged ? '' : ' AND c.shown';
  // Below the floor of a first walk, only listings visible to the key (the partial index).
  const floorSql = opts.from === null ? '(SELECT version FROM v)' : from.floor !== undefined && from.seq <= from.floor ? '?' : null;
  if (floorSql !== null) {
    const [cond, b] = after(from);
    parts.push(`(SELECT c.seq, c.listing_id FROM listing_changes c
                  WHERE ${cond} AND c.seq <= ${floorSql} AND c.active${includeFlagged ? '' : ' AND NOT c.flagged'}
                  ORDER BY c.seq, c.listing_id LIMIT ${n})`);
    bindings.push(...b, ...(opts.from === null ? [] : [from.floor!]));
    parts.push(`(SELECT c.seq, c.listing_id FROM listing_changes c WHERE c.seq > ${floorSql}${everShown} ORDER BY c.seq, c.listing_id LIMIT ${n})`);
    if (opts.from !== null) bindings.push(from.floor!);
  } else {
    const [cond, b] = after(from);
    parts.push(`(SELECT c.seq, c.listing_id FROM listing_changes c WHERE ${cond}${everShown} ORDER BY c.seq, c.listing_id LIMIT ${n})`);
    bindings.push(...b);
  }

  // Each listing of the page by its primary key (the LIMIT keeps the planner from turning the
  // lookups into a hash join over the whole table: it cannot know the page's size).
  const cols = PUBLIC_COLUMNS.map((c) => `l.${c}`).join(', ');
  // A merged listing points at the listing that carries the property only when the key may
  // see that one (active, and unflagged for the tiers that do not see flags), as the 404 of
  // GET /listings/:id does: a pointer the key cannot follow would be a dead end.
  const mergeTarget = `CASE WHEN l.merged_into IS NOT NULL THEN (SELECT t.id FROM listings t WHERE t.id = l.merged_into AND t.status = 'active'${includeFlagged ? '' : ' AND NOT t.flagged'}) END AS merged_into`;
  // LIMIT 1 on the one-row data_state: without statistics the planner guessed hundreds of rows
  // there, multiplied the page by them and JIT-compiled the plan (170-380 ms a page).
  const { rows } = await db.raw(
    `WITH v AS MATERIALIZED (SELECT version FROM data_state LIMIT 1),
          page AS MATERIALIZED (SELECT * FROM (${parts.join(' UNION ALL ')}) u ORDER BY seq, listing_id LIMIT ${n})
     SELECT v.version, p.* FROM v LEFT JOIN LATERAL (
       SELECT page.seq, page.listing_id, l.id AS found, ${cols}, l.status, ${mergeTarget}
         FROM page LEFT JOIN LATERAL (SELECT * FROM listings l WHERE l.id = page.listing_id LIMIT 1) l ON true) p ON true
     ORDER BY p.seq, p.listing_id`,
    bindings,
  );
  const version = Number(rows[0].version);
  const found = (rows as Record<string, unknown>[]).filter((r) => r.listing_id !== null);
  const page = found.slice(0, limit).map((r): ChangeRow => {
    const { version: _v, seq, listing_id, found: exists, ...listing } = r;
    return { seq: Number(seq), listing_id: listing_id as string, listing: exists ? (listing as unknown as ChangedListing) : null };
  });
  const floor = opts.from === null ? version : from.floor;
  return { rows: page, hasMore: found.length > limit, version, ...(floor !== undefined ? { floor } : {}) };
}

// A row of the export: the listing's id, its public fields as stored JSON text and its flags as a
// JSON array (null: none); where no JSON is stored (public_json null), its columns instead.
export type ExportRow = PublicListingRow & { public_json: string | null; flags_json: string | null };

// The data version and the active listings visible to the key, streamed from one
// REPEATABLE READ snapshot on a connection of its own (pg-query-stream, a server-side cursor
// read in batches as the consumer asks: memory stays flat), each row an ExportRow. `release`
// ends the transaction and returns the connection; call it once the stream is done or abandoned.
export async function openListingsExport(
  db: Knex,
  opts: { includeFlagged: boolean; batchSize?: number },
): Promise<{ version: number; stream: NodeJS.ReadableStream & { destroy(err?: Error): void }; release: () => Promise<void> }> {
  const trx = await db.transaction({ isolationLevel: 'repeatable read', readOnly: true });
  try {
    // A whole export may take minutes at 1,000,000 listings: no statement timeout (the
    // cursor's reads count as one statement), and no JIT compilation for one big scan.
    await trx.raw(`SET LOCAL statement_timeout = 0`);
    await trx.raw(`SET LOCAL jit = off`);
    const { rows } = await trx.raw(`SELECT version FROM data_state`);
    const version = Number(rows[0].version);
    // Each listing's JSON as stored (public_json, migration 20261202000100) with its flags as a
    // JSON array; its columns only where none is stored (a row PostgreSQL writes otherwise than
    // JavaScript): parsing 18 columns a row and writing them out again was most of the export's
    // work in the server (ExportRow, src/http/routes/export.ts).
    const q = trx
      .select(
        trx.raw(
          `id, public_json, array_to_json(flags)::text AS flags_json, ${PUBLIC_COLUMNS.filter((c) => c !== 'id')
            .map((c) => `CASE WHEN public_json IS NULL THEN ${c} END AS ${c}`)
            .join(', ')}`,
        ),
      )
      .from('listings')
      .where('status', 'active');
    if (!opts.includeFlagged) q.where('flagged', false);
    const stream = q.stream({ batchSize: opts.batchSize ?? 500, highWaterMark: opts.batchSize ?? 500 }) as unknown as NodeJS.ReadableStream & {
      destroy(err?: Error): void;
    };
    let released = false;
    const release = async () => {
      if (released) return;
      released = true;
      await trx.rollback().catch(() => {});
    };
    return { version, stream, release };
  } catch (e) {
    await trx.rollback().catch(() => {});
    throw e;
  }
}

// What became of a listing that is not active: merged into another (the active one, if any,
// and only if this key may see it: a flagged one is no answer for a tier that sees no
// flagged listings), or withdrawn (when). Null for an unknown id or an active one.
export async function findListingFate(
  db: Knex,
  id: string,
  seesFlagged: boolean,
): Promise<{ status: ListingStatus; mergedInto: string | null; removedAt: Date | null } | null> {
  const row = await db('listings as l')
    .leftJoin('listings as t', function () {
      this.on('t.id', '=', 'l.merged_into').andOnVal('t.status', '=', 'active');
      if (!seesFlagged) this.andOn(db.raw('cardinality(t.flags) = 0'));
    })
    .select('l.status', 't.id as merged_into', 'l.removed_at')
    .where('l.id', id)
    .whereNot('l.status', 'active')
    .first();
  if (!row) return null;
  return { status: row.status as ListingStatus, mergedInto: (row.merged_into as string | null) ?? null, removedAt: (row.removed_at as Date | null) ?? null };
}
