import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { readAt, type ReadsAt } from '../db/read-replica.js';
import { within } from '../lib/within.js';
import { marketFiguresOfEveryGroup, marketPrices, type CommuneFigures, type MarketPricesFilter } from '../repositories/market.js';

export interface MarketPrices {
  // The figures per commune that marketPrices gives for `f`, at data version `version`.
  prices(version: number, f: MarketPricesFilter): Promise<CommuneFigures[]>;
  // Resolves once the figures of every group are held at `version` or newer (tests).
  ready(version: number): Promise<void>;
}

interface Held {
  version: number;
  // By type, rooms bucket (-1: all rooms) and locality ('' the whole commune): the figures of
  // each commune that has such listings.
  groups: Map<string, CommuneFigures[]>;
}

const groupKey = (listingType: string, rooms: number | null | undefined, locality: string | null | undefined) => `${listingType}|${rooms ?? -1}|${locality ?? ''}`;

// /market/prices for any commune, locality, type and rooms from memory: the figures of every
// group are read once per data version (src/repositories/market.ts: one statement, the same
// expressions as the per-request one) and a request at exactly that version takes its groups
// from them. The first request at a newer version starts that read and waits for it. Reads go
// one at a time, and no sooner after the previous one than that one took, so that under
// constant writes they cost PostgreSQL at most about half of one backend's time; a request
// that finds the next read held back, or that read another version than the one held, asks
// SQL as before.
// A request waits for that read at most `waitMs` (the statement timeout a request's own statement
// has), then is answered 503 as a statement past it is; the read goes on, under its own longer
// timeout, for the requests after. It waited as long as PostgreSQL held the read back (an outside
// probe of stop 52: 39.7 s behind a table lock, where every other route answered 503 at 10 s).
export function createMarketPrices(deps: { db: Knex; reads?: ReadsAt; logger?: Logger; waitMs?: number }): MarketPrices {
  const waitMs = deps.waitMs ?? 10_000;
  let held: Held | null = null;
  let loading: Promise<void> | null = null;
  let lastEnd = 0;
  let lastMs = 0;

  // The read in flight, or a new one; null while the spacing holds the next one back. It goes
  // where a read at `version` goes (the replica once it has replayed it): the figures come
  // with the version they were read at, that one or newer.
  function load(version: number): Promise<void> | null {
    if (loading) return loading;
    if (Date.now() < lastEnd + lastMs) return null;
    const started = performance.now();
    loading = readAt(deps.reads, deps.db, version, (db) => marketFiguresOfEveryGroup(db))
      .then(({ version, groups }) => {
        const byKey = new Map<string, CommuneFigures[]>();
        for (const { locality, listing_type, rooms, ...figures } of groups) {
          const key = groupKey(listing_type, rooms, locality);
          const list = byKey.get(key) ?? [];
          list.push(figures);
          byKey.set(key, list);
        }
        if (!held || version > held.version) held = { version, groups: byKey };
      })
      .catch((err: Error) => deps.logger?.warn({ err: err.message }, 'market figures: read failed; answering from SQL'))
      .finally(() => {
        lastMs = performance.now() - started;
        lastEnd = Date.now();
        loading = null;
      });
    return loading;
  }

  function fromMemory(h: Held, f: MarketPricesFilter): CommuneFigures[] {
    const list = h.groups.get(groupKey(f.listingType, f.rooms, f.locality)) ?? [];
    if (!f.communes) return list;
    const wanted = new Set(f.communes);
    return list.filter((g) => wanted.has(g.commune));
  }

  return {
    async prices(version, f) {
      if (held?.version === version) return fromMemory(held, f);
      // A version newer than the one held: wait for the read of every group (concurrent
      // requests share it) rather than send a statement of its own.
      if (!held || version > held.version) {
        const pending = load(version);
        if (pending) await within(pending, waitMs).catch(() => Promise.reject(tooSlow(waitMs)));
        if (held?.version === version) return fromMemory(held, f);
      }
      return readAt(deps.reads, deps.db, version, (db) => marketPrices(db, f));
    },
    async ready(version) {
      while (!held || held.version < version) {
        lastEnd = 0;
        await load(version);
      }
    },
  };
}

// The error of a read past a request's wait: a statement timeout's SQLSTATE, so that both error
// handlers answer it as one (503 unavailable, src/db/errors.ts).
function tooSlow(ms: number): Error {
  return Object.assign(new Error(`market figures: the read of every group did not end within ${ms} ms`), { code: '57014' });
}
