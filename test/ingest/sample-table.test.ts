import { beforeAll, describe, expect, it } from 'vitest';
import { importFeed, type ImportReport } from '../../src/ingest/index.js';
import { useTestContext } from '../helpers/context.js';
import { fixture, gazetteer, SAMPLES } from './helpers.js';

const NOW = new Date('2026-11-22T08:00:00.000Z');

// docs/feed-formats.md section 5, row by row.
const TABLE = [
  { id: 'IN-2026-0042', type: 'RENT', price: 2150, area: 78.5, rooms: 3, commune: 'Luxembourg', locality: 'Belair', images: 2 },
  { id: 'IN-2026-0107', type: 'SALE', price: 895000, area: 142, rooms: 5, commune: 'Ettelbruck', locality: null },
  { id: 'IN-2026-0150', type: 'FLATSHARE', price: 850, area: 16, rooms: 1, commune: 'Esch-sur-Alzette', locality: 'Belval', lat: null, students: true },
  { id: 'MI-5521', type: 'RENT', price: 1250, area: 32.5, rooms: 1, commune: 'Luxembourg', locality: 'Gare', created: '2026-11-21T13:03:00.000Z' },
  { id: 'MI-5530', type: 'SALE', price: 1250000, area: 185, rooms: 5, commune: 'Pétange', locality: null, created: '2026-07-02T07:30:00.000Z' },
  { id: 'MI-5534', type: 'RENT', price: 1690, area: 74, rooms: 3, commune: 'Sanem', locality: 'Belvaux' },
  { id: 'MI-5540', type: 'FLATSHARE', price: 780, area: 14, rooms: 1, commune: 'Esch-sur-Alzette', locality: null },
  { id: 'CH-1042', type: 'RENT', price: 1700, area: 74, rooms: 3, commune: 'Sanem', locality: 'Belvaux', images: 1 },
  { id: 'CH-1077', type: 'SUBLET', price: 2600, area: 45, rooms: 2, commune: 'Luxembourg', locality: 'Kirchberg', lat: null },
];

describe('the sample files of docs/feed-formats.md', () => {
  const t = useTestContext();
  const reports: ImportReport[] = [];
  beforeAll(async () => {
    for (const s of SAMPLES) {
      reports.push(await importFeed(t.db, { source: s.source, format: s.format, input: { path: fixture(s.file) }, now: NOW, gazetteer: gazetteer() }));
    }
  });

  it.each(TABLE)('$id becomes $type $price EUR, $area m2, $rooms rooms in $commune ($locality)', async (row) => {
    const l = await t.db('listings').where({ external_id: row.id }).first();
    expect(l, row.id).toBeTruthy();
    expect(l.listing_type).toBe(row.type);
    expect(l.price_eur).toBe(row.price);
    expect(l.area_m2).toBe(row.area);
    expect(l.rooms).toBe(row.rooms);
    expect(l.commune).toBe(row.commune);
    expect(l.locality).toBe(row.locality);
    if (row.images !== undefined) expect(l.images).toHaveLength(row.images);
    if (row.lat === null) expect([l.lat, l.lng]).toEqual([null, null]);
    if (row.students) expect(l.accepts_students).toBe(true);
    if (row.created) expect(l.created_at.toISOString()).toBe(row.created);
  });

  it('keeps the floor plan and the video out of the images', async () => {
    const a = await t.db('listings').where({ external_id: 'IN-2026-0042' }).first();
    expect(a.images.every((u: string) => u.endsWith('.jpg'))).toBe(true);
    const b = await t.db('listings').where({ external_id: 'CH-1042' }).first();
    expect(b.images).toEqual(['https://cdn.capital-homes.example/ch-1042/01.jpg']);
  });

  it('rejects MI-5541 for its CHF price and keeps CH-1080 (let) off the public listings', async () => {
    expect(await t.db('listings').where({ external_id: 'MI-5541' }).first()).toBeUndefined();
    const moselle = reports[1];
    expect(moselle.counts.rejected).toBe(1);
    expect(moselle.rejects[0]).toMatchObject({ external_id: 'MI-5541', position: 'line 6' });
    expect(moselle.rejects[0].reason).toMatch(/CHF/);
    const ch1080 = await t.db('listings').where({ external_id: 'CH-1080' }).first();
    expect(ch1080 === undefined || ch1080.status !== 'active').toBe(true);
  });

  it('merges MI-5534 and CH-1042: exactly one is active, the other is merged into it', async () => {
    const pair = await t.db('listings').whereIn('external_id', ['MI-5534', 'CH-1042']).orderBy('external_id');
    const active = pair.filter((l) => l.status === 'active');
    const merged = pair.filter((l) => l.status === 'merged');
    expect(active).toHaveLength(1);
    expect(merged).toHaveLength(1);
    expect(merged[0].merged_into).toBe(active[0].id);
    expect(active[0].flags).toEqual([]);
  });

  it('leaves 8 active listings, one merged, and an ok import_runs row per source', async () => {
    const counts = await t.db('listings').select('status').count<{ status: string; count: string }[]>('* as count').groupBy('status');
    expect(Object.fromEntries(counts.map((c) => [c.status, Number(c.count)]))).toEqual({ active: 8, merged: 1 });
    const runs = await t.db('import_runs').orderBy('id');
    expect(runs.map((r) => [r.source, r.status, r.mode])).toEqual([
      ['immo-nord', 'ok', 'full'],
      ['moselle-immo', 'ok', 'full'],
      ['capital-homes', 'ok', 'full'],
    ]);
    expect(runs.every((r) => r.finished_at instanceof Date)).toBe(true);
    expect(runs[1].rejects).toHaveLength(1);
    expect(reports.map((r) => r.counts)).toEqual([
      { read: 3, created: 3, updated: 0, unchanged: 0, reactivated: 0, deleted: 0, skipped: 0, rejected: 0, withdrawn: 0, merged: 0, separated: 0, flagged: 0 },
      { read: 5, created: 4, updated: 0, unchanged: 0, reactivated: 0, deleted: 0, skipped: 0, rejected: 1, withdrawn: 0, merged: 0, separated: 0, flagged: 0 },
      // CH-1080 is let: a withdrawal of a listing that was never live, skipped.
      { read: 3, created: 2, updated: 0, unchanged: 0, reactivated: 0, deleted: 0, skipped: 1, rejected: 0, withdrawn: 0, merged: 1, separated: 0, flagged: 0 },
    ]);
  });
});
