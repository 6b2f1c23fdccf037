import type { ListingIdFn } from '../domain/listing.js';
import type { Gazetteer } from '../reference/gazetteer.js';
import { normalizeRecord } from './normalize.js';
import type { FeedEvent, NormalizedListing, RawRecord, Reject } from './types.js';

// The plan step of the importer, between reading and staging: what one batch of records
// (in file order) becomes, decided without the database. The one fact it needs from earlier
// batches, where an external id was first seen, the caller looks up (writer.ts markSeen)
// for the ids firstPositions names.

export type BatchEvent = FeedEvent & { kind: 'record' | 'reject' };

export interface PlanContext {
  source: string;
  gazetteer: Gazetteer;
  now: Date;
  listingId: ListingIdFn;
}

export interface BatchPlan {
  // Valid records, normalized: staged and written.
  listings: NormalizedListing[];
  // Listing ids a full snapshot must not withdraw: its valid records, and its rejected
  // records whose id is known (the agency still lists them, this version could not be read).
  keep: string[];
  // Listing ids the feed withdraws (deleted, sold, let...).
  gone: string[];
  // In file order.
  rejects: Reject[];
}

// External id -> its first record in the batch.
function firstRecords(events: readonly BatchEvent[]): Map<string, RawRecord> {
  const first = new Map<string, RawRecord>();
  for (const e of events) if (e.kind === 'record' && e.record.externalId && !first.has(e.record.externalId)) first.set(e.record.externalId, e.record);
  return first;
}

// External id -> the position of its first record in the batch: the ids to look up in the
// batches before.
export function firstPositions(events: readonly BatchEvent[]): Map<string, string> {
  return new Map([...firstRecords(events)].map(([id, r]) => [id, r.position]));
}

// `earlier`: external id -> its position in an earlier batch, for the ids of this batch
// seen before. Only the first record of an external id is imported; a withdrawal needs an
// external id; every other record is normalized (or rejected, with the reason).
export function planBatch(events: readonly BatchEvent[], earlier: ReadonlyMap<string, string>, ctx: PlanContext): BatchPlan {
  const idOf = ctx.listingId;
  const first = firstRecords(events);
  const plan: BatchPlan = { listings: [], keep: [], gone: [], rejects: [] };
  for (const e of events) {
    if (e.kind === 'reject') {
      plan.rejects.push(e.reject);
      if (e.reject.external_id) plan.keep.push(idOf(ctx.source, e.reject.external_id));
      continue;
    }
    const r = e.record;
    if (r.externalId) {
      const before = earlier.get(r.externalId) ?? (first.get(r.externalId) !== r ? first.get(r.externalId)!.position : undefined);
      if (before !== undefined) {
        plan.rejects.push({ external_id: r.externalId, position: r.position, reason: `external id appears again (first at ${before}); only the first is imported` });
        continue;
      }
    }
    if (r.action !== 'upsert') {
      if (!r.externalId) plan.rejects.push({ external_id: null, position: r.position, reason: `no external id: cannot ${r.action === 'delete' ? 'delete' : 'withdraw'} an unnamed listing` });
      else plan.gone.push(idOf(ctx.source, r.externalId));
      continue;
    }
    const n = normalizeRecord(r, { source: ctx.source, gazetteer: ctx.gazetteer, now: ctx.now, listingId: idOf });
    if (n.ok) {
      plan.listings.push(n.listing);
      plan.keep.push(n.listing.id);
    } else {
      plan.rejects.push({ external_id: r.externalId, position: r.position, reason: n.reason });
      if (r.externalId) plan.keep.push(idOf(ctx.source, r.externalId));
    }
  }
  return plan;
}
