import type { Knex } from 'knex';
import { isoTimestamp } from '../lib/iso-time.js';
import { findActiveListingsByIds, findActiveListingsJson, type PublicListingRow } from '../repositories/listings.js';

// A listing ready to be written out (src/http/present.ts, writeListing): its public fields
// from `source` to `updated_at` as JSON text (`{"source":…,"updated_at":"…"}`), and its flags
// as a JSON array, null when it has none.
export interface ListingJson {
  id: string;
  flags: string | null;
  fields: string;
}

export interface ListingRows {
  // The active listings among `ids` that the caller may see (flagged ones only with
  // `includeFlagged`), in the order of `ids`; the others are left out. Shared objects: read,
  // never modify.
  find(db: Knex, ids: string[], includeFlagged: boolean): Promise<ListingJson[]>;
}

// The fields of a listing as JSON text, written here from its columns: what PostgreSQL writes
// for it in findActiveListingsJson (test/api/listing-json.test.ts holds both to presentListing).
export function listingJsonOf(r: PublicListingRow): ListingJson {
  const fields = JSON.stringify({
    source: r.source,
    external_id: r.external_id,
    title: r.title,
    price_eur: r.price_eur,
    area_m2: r.area_m2,
    rooms: r.rooms,
    commune: r.commune,
    locality: r.locality,
    lat: r.lat,
    lng: r.lng,
    listing_type: r.listing_type,
    accepts_students: r.accepts_students,
    images: r.images ?? [],
    source_url: r.source_url,
    created_at: isoTimestamp(r.created_at),
    updated_at: isoTimestamp(r.updated_at),
  });
  const flags = r.flags ?? [];
  return { id: r.id, flags: flags.length > 0 ? JSON.stringify(flags) : null, fields };
}

// Statements of at most this many ids (a batch of many deep pages is split).
const MAX_IDS = 1000;

// The listings of `ids` as JSON: written by PostgreSQL, except the rare row it writes
// otherwise than JavaScript (findActiveListingsJson), read again as columns and written here.
async function readJson(db: Knex, ids: string[]): Promise<ListingJson[]> {
  const rows = await findActiveListingsJson(db, ids);
  const odd = rows.filter((r) => r.fields === null).map((r) => r.id);
  const written = odd.length > 0 ? (await findActiveListingsByIds(db, odd, true)).map(listingJsonOf) : [];
  return [...rows.flatMap((r) => (r.fields === null ? [] : [{ id: r.id, flags: r.flags_json, fields: r.fields }])), ...written];
}

interface Batch {
  ids: Set<string>;
  rows: Promise<Map<string, ListingJson>>;
}

// Primary-key reads of active listings (the rows of a page the read model chose, a listing
// by id) asked for in the same turn of the event loop go to PostgreSQL as one statement: under
// load many requests each want a few rows at once, and every statement costs both processes a
// round trip (a socket write and read, the pool, knex's runner) whatever its size. The rows
// are read with their flags and filtered here for the tiers that must not see flagged
// listings (flagged is exactly "has flags": a generated column), so one statement serves
// every tier.
// `poolFor` gives the pool a database's row reads go to (server.ts: a small pool of their own,
// DB_ROWS_POOL_MAX), by default the database's own.
export function createListingRows(opts: { poolFor?: (db: Knex) => Knex } = {}): ListingRows {
  const poolFor = opts.poolFor ?? ((db: Knex) => db);
  const pending = new Map<Knex, Batch>();

  function batchFor(db: Knex): Batch {
    let batch = pending.get(db);
    if (batch) return batch;
    const ids = new Set<string>();
    const rows = new Promise<Map<string, ListingJson>>((resolve, reject) => {
      // After the I/O callbacks of this turn: every request they started has asked by then.
      setImmediate(() => {
        pending.delete(db);
        const all = [...ids];
        const chunks: string[][] = [];
        for (let k = 0; k < all.length; k += MAX_IDS) chunks.push(all.slice(k, k + MAX_IDS));
        Promise.all(chunks.map((chunk) => readJson(poolFor(db), chunk))).then(
          (found) => resolve(new Map(found.flat().map((r) => [r.id, r]))),
          reject,
        );
      });
    });
    batch = { ids, rows };
    pending.set(db, batch);
    return batch;
  }

  return {
    async find(db, ids, includeFlagged) {
      if (ids.length === 0) return [];
      const batch = batchFor(db);
      for (const id of ids) batch.ids.add(id);
      const byId = await batch.rows;
      return ids.flatMap((id) => {
        const row = byId.get(id);
        return row && (includeFlagged || row.flags === null) ? [row] : [];
      });
    },
  };
}
