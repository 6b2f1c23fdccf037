import { describe, expect, it } from 'vitest';
import { type BatchEvent, externalIds, planBatch } from '../../src/ingest/plan.js';
import type { RawRecord } from '../../src/ingest/types.js';
import { TEST_LISTING_IDS } from '../helpers/factory.js';
import { gazetteer } from './helpers.js';

// The plan step of the importer, without a database: what a batch of records becomes.

const NOW = new Date('2026-11-22T08:00:00.000Z');
const SOURCE = 'plan-src';
const ctx = () => ({ source: SOURCE, gazetteer: gazetteer(), now: NOW, listingId: TEST_LISTING_IDS });
const idOf = (externalId: string) => TEST_LISTING_IDS(SOURCE, externalId);

const record = (position: string, externalId: string | null, more: Partial<RawRecord> = {}): BatchEvent => ({
  kind: 'record',
  record: {
    position, externalId, action: 'upsert', listingType: 'RENT', title: 'Flat', price: 1500, currency: 'EUR',
    area: 50, rooms: 2, town: 'Strassen', images: [], students: false, date: '2026-11-20T08:00:00Z', dateKind: 'created', sourceUrl: null,
    ...more,
  },
});
const adapterReject = (position: string, externalId: string | null): BatchEvent => ({
  kind: 'reject',
  reject: { external_id: externalId, position, reason: 'not an object' },
});

describe('planBatch', () => {
  it('normalizes valid records and keeps their ids', () => {
    const plan = planBatch([record('line 2', 'A'), record('line 3', 'B', { price: 2100 })], new Map(), ctx());
    expect(plan.rejects).toEqual([]);
    expect(plan.listings.map((l) => [l.id, l.external_id, l.price_eur, l.commune])).toEqual([
      [idOf('A'), 'A', 1500, 'Strassen'],
      [idOf('B'), 'B', 2100, 'Strassen'],
    ]);
    expect(plan.keep).toEqual([idOf('A'), idOf('B')]);
    expect(plan.gone).toEqual([]);
  });

  it('imports only the first record of an external id: later ones in the batch, or one taken in an earlier batch, are rejected with where it was imported', () => {
    const plan = planBatch(
      [record('line 2', 'A'), record('line 3', 'A', { price: 9999 }), record('line 4', 'OLD')],
      new Map([['OLD', 'line 1234']]),
      ctx(),
    );
    expect(plan.listings.map((l) => [l.external_id, l.price_eur])).toEqual([['A', 1500]]);
    expect(plan.rejects).toEqual([
      { external_id: 'A', position: 'line 3', reason: 'external id appears again (imported at line 2); only the first is imported' },
      { external_id: 'OLD', position: 'line 4', reason: 'external id appears again (imported at line 1234); only the first is imported' },
    ]);
    expect(plan.keep).toEqual([idOf('A')]);
    expect([...plan.taken]).toEqual([['A', 'line 2']]);
  });

  it('a record rejected for what it holds does not take its id: a valid copy after it is imported; a withdrawal takes it too', () => {
    const plan = planBatch(
      [record('line 2', 'C', { price: 'sur demande' }), record('line 3', 'C', { price: 1550 }), record('line 4', 'C', { price: 1600 }), record('line 5', 'S', { action: 'withdraw' }), record('line 6', 'S')],
      new Map(),
      ctx(),
    );
    expect(plan.listings.map((l) => [l.external_id, l.price_eur])).toEqual([['C', 1550]]);
    expect(plan.rejects.map((r) => [r.position, r.reason])).toEqual([
      ['line 2', expect.stringContaining('price')],
      ['line 4', 'external id appears again (imported at line 3); only the first is imported'],
      ['line 6', 'external id appears again (imported at line 5); only the first is imported'],
    ]);
    expect(plan.gone).toEqual([idOf('S')]);
    expect([...plan.taken]).toEqual([['C', 'line 3'], ['S', 'line 5']]);
  });

  it('withdraws named listings and rejects a withdrawal or deletion without an external id', () => {
    const plan = planBatch(
      [record('line 2', 'SOLD', { action: 'withdraw' }), record('line 3', 'DEL', { action: 'delete' }), record('line 4', null, { action: 'delete' }), record('line 5', null, { action: 'withdraw' })],
      new Map(),
      ctx(),
    );
    expect(plan.gone).toEqual([idOf('SOLD'), idOf('DEL')]);
    expect(plan.listings).toEqual([]);
    expect(plan.keep).toEqual([]);
    expect(plan.rejects).toEqual([
      { external_id: null, position: 'line 4', reason: 'no external id: cannot delete an unnamed listing' },
      { external_id: null, position: 'line 5', reason: 'no external id: cannot withdraw an unnamed listing' },
    ]);
  });

  it('rejects what the normalizer refuses, and keeps the listing of a named record it could not read this time', () => {
    const plan = planBatch(
      [record('line 2', 'NOPLACE', { town: 'Atlantis' }), record('line 3', null, { price: 'free' }), adapterReject('line 4', 'BROKEN'), adapterReject('line 5', null)],
      new Map(),
      ctx(),
    );
    expect(plan.listings).toEqual([]);
    expect(plan.rejects.map((r) => [r.external_id, r.position])).toEqual([
      ['NOPLACE', 'line 2'],
      [null, 'line 3'],
      ['BROKEN', 'line 4'],
      [null, 'line 5'],
    ]);
    expect(plan.rejects[0].reason).toMatch(/Atlantis/);
    expect(plan.rejects[2].reason).toBe('not an object');
    // A full snapshot must not withdraw a listing the agency still lists.
    expect(plan.keep).toEqual([idOf('NOPLACE'), idOf('BROKEN')]);
  });

  it('keeps the rejects in file order', () => {
    const plan = planBatch([adapterReject('line 2', null), record('line 3', 'A'), record('line 4', 'A'), record('line 5', null, { action: 'delete' })], new Map(), ctx());
    expect(plan.rejects.map((r) => r.position)).toEqual(['line 2', 'line 4', 'line 5']);
  });
});

describe('externalIds', () => {
  it("names each external id of the batch's records once, in order", () => {
    const events = [adapterReject('line 1', 'R'), record('line 2', 'A'), record('line 3', null), record('line 4', 'B'), record('line 5', 'A')];
    expect(externalIds(events)).toEqual(['A', 'B']);
  });
});
