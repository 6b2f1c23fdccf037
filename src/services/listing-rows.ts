import type { Knex } from 'knex';
import { findActiveListingsByIds, type PublicListingRow } from '../repositories/listings.js';

export interface ListingRows {
  // The active listings among `ids` that the caller may see (flagged ones only with
  // `includeFlagged`), in the order of `ids`; the others are left out. Shared objects: read,
  // never modify.
  find(db: Knex, ids: string[], includeFlagged: boolean): Promise<PublicListingRow[]>;
}

// Statements of at most this many ids (a batch of many deep pages is split).
const MAX_IDS = 1000;

interface Batch {
  ids: Set<string>;
  rows: Promise<Map<string, PublicListingRow>>;
}

// Primary-key reads of active listings (the rows of a page the read model chose, a listing
// by id) asked for in the same turn of the event loop go to PostgreSQL as one statement: under
// load many requests each want a few rows at once, and every statement costs both processes a
// round trip (a socket write and read, the pool, knex's runner) whatever its size. The rows
// are read with their flags and filtered here for the tiers that must not see flagged
// listings (flagged is exactly "has flags": a generated column), so one statement serves
// every tier.
export function createListingRows(): ListingRows {
  const pending = new Map<Knex, Batch>();

  function batchFor(db: Knex): Batch {
    let batch = pending.get(db);
    if (batch) return batch;
    const ids = new Set<string>();
    const rows = new Promise<Map<string, PublicListingRow>>((resolve, reject) => {
      // After the I/O callbacks of this turn: every request they started has asked by then.
      setImmediate(() => {
        pending.delete(db);
        const all = [...ids];
        const chunks: string[][] = [];
        for (let k = 0; k < all.length; k += MAX_IDS) chunks.push(all.slice(k, k + MAX_IDS));
        Promise.all(chunks.map((chunk) => findActiveListingsByIds(db, chunk, true))).then(
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
        return row && (includeFlagged || (row.flags ?? []).length === 0) ? [row] : [];
      });
    },
  };
}
