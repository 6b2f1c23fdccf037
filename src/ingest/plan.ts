import type { ListingIdFn } from '../domain/listing.js';
import type { Gazetteer } from '../reference/gazetteer.js';
import { normalizeRecord } from './normalize.js';
import type { FeedEvent, NormalizedListing, Reject } from './types.js';

// The plan step of the importer, between reading and staging: what one batch of records
// (in file order) becomes, decided without the database. The one fact it needs from earlier
// batches, which external ids an earlier record already took (imported or withdrew), the
// caller looks up (writer.ts seenBefore) for the ids externalIds names; it records the ids
// this batch took (BatchPlan.taken) with writer.ts markSeen.

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
  // External id -> the position of the record that took it in this batch.
  taken: Map<string, string>;
}

// The external ids of a batch's records: the ids to look up in the batches before.
export function externalIds(events: readonly BatchEvent[]): string[] {
  return [...new Set(events.flatMap((e) => (e.kind === 'record' && e.record.externalId ? [e.record.externalId] : [])))];
}

// `earlier`: external id -> the position of the record that took it in an earlier batch. The
// first record of an external id that can be used (imported, or a withdrawal) takes it; a
// later one is rejected, naming it. A record rejected for what it holds does not take its id,
// so a valid copy after it is imported rather than lost. A withdrawal needs an external id;
// every other record is normalized (or rejected, with the reason).
export function planBatch(events: readonly BatchEvent[], earlier: ReadonlyMap<string, string>, ctx: PlanContext): BatchPlan {
  const idOf = ctx.listingId;
  const plan: BatchPlan = { listings: [], keep: [], gone: [], rejects: [], taken: new Map() };
  const { taken } = plan;
  for (const e of events) {
    if (e.kind === 'reject') {
      plan.rejects.push(e.reject);
      if (e.reject.external_id) plan.keep.push(idOf(ctx.source, e.reject.external_id));
      continue;
    }
    const r = e.record;
    if (r.externalId) {
      const before = earlier.get(r.externalId) ?? taken.get(r.externalId);
      if (before !== undefined) {
        plan.rejects.push({ external_id: r.externalId, position: r.position, reason: `external id appears again (imported at ${before}); only the first is imported` });
        continue;
      }
    }
    if (r.action !== 'upsert') {
      if (!r.externalId) plan.rejects.push({ external_id: null, position: r.position, reason: `no external id: cannot ${r.action === 'delete' ? 'delete' : 'withdraw'} an unnamed listing` });
      else {
        plan.gone.push(idOf(ctx.source, r.externalId));
        taken.set(r.externalId, r.position);
      }
      continue;
    }
    const n = normalizeRecord(r, { source: ctx.source, gazetteer: ctx.gazetteer, now: ctx.now, listingId: idOf });
    if (n.ok) {
      plan.listings.push(n.listing);
      plan.keep.push(n.listing.id);
      if (r.externalId) taken.set(r.externalId, r.position);
    } else {
      plan.rejects.push({ external_id: r.externalId, position: r.position, reason: n.reason });
      if (r.externalId) plan.keep.push(idOf(ctx.source, r.externalId));
    }
  }
  return plan;
}
