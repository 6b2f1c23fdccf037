import { describe, expect, it } from 'vitest';
import { importFeed, type ImportOptions } from '../../src/ingest/index.js';
import { useTestContext } from '../helpers/context.js';
import { listingIdsOf } from '../helpers/factory.js';
import { byExternalId, csvFeed, csvRow, gazetteer, snapshot } from './helpers.js';

const DAY = 86_400_000;
const T0 = new Date('2026-11-01T08:00:00.000Z');
const at = (days: number) => new Date(T0.getTime() + days * DAY);

// Flats in different communes and sizes, so that no two of them look like duplicates.
const PLACES = ['Strassen', 'Bertrange', 'Mamer', 'Hesperange', 'Walferdange', 'Sandweiler', 'Contern', 'Steinsel'];
// Each source gets its own range of sizes, so that no listing of one looks like one of another.
const sourceSlot = new Map<string, number>();
const slot = (source: string) => {
  if (!sourceSlot.has(source)) sourceSlot.set(source, sourceSlot.size);
  return sourceSlot.get(source)!;
};
const row = (ref: string, i: number, over: Parameters<typeof csvRow>[0] = {}, source = '') =>
  csvRow({ ref, place: PLACES[i % PLACES.length], price: String(1400 + i * 37), area: String(30 + slot(source) * 25 + i * 2), bedrooms: '1', ...over });

describe('life cycle', () => {
  const t = useTestContext();

  const csv = (source: string, refs: string[], now: Date, extra: Partial<ImportOptions> = {}, over: Record<string, Parameters<typeof csvRow>[0]> = {}) =>
    importFeed(t.db, {
      source, format: 'csv', input: { text: csvFeed(refs.map((r) => row(r, Number(r.replace(/\D/g, '')), over[r], source))) }, now, gazetteer: gazetteer(), ...extra,
    });

  it('a full snapshot withdraws what it no longer contains; a returning listing is reactivated with its id', async () => {
    const r1 = await csv('snap', ['S1', 'S2', 'S3', 'S4'], at(0));
    expect(r1.counts).toMatchObject({ read: 4, created: 4, withdrawn: 0 });
    const r2 = await csv('snap', ['S1', 'S2', 'S3'], at(1));
    expect(r2.counts).toMatchObject({ read: 3, created: 0, unchanged: 3, withdrawn: 1 });
    const gone = await byExternalId(t.db, 'snap', 'S4');
    expect(gone.status).toBe('inactive');
    expect(gone.removed_at.toISOString()).toBe(at(1).toISOString());

    const r3 = await csv('snap', ['S1', 'S2', 'S3', 'S4'], at(2));
    expect(r3.counts).toMatchObject({ reactivated: 1, unchanged: 3, created: 0, withdrawn: 0 });
    const back = await byExternalId(t.db, 'snap', 'S4');
    expect(back.id).toBe((await listingIdsOf(t.db))('snap', 'S4'));
    expect(back.id).toBe(gone.id);
    expect([back.status, back.removed_at]).toEqual(['active', null]);
    expect(back.first_seen_at.toISOString()).toBe(at(0).toISOString());
  });

  it('an unchanged re-import changes nothing but last_seen_at; a change moves updated_at', async () => {
    await csv('same', ['U1', 'U2'], at(0));
    const before = await byExternalId(t.db, 'same', 'U1');
    const r = await csv('same', ['U1', 'U2'], at(3));
    expect(r.counts).toMatchObject({ unchanged: 2, updated: 0, created: 0, flagged: 0, merged: 0 });
    const after = await byExternalId(t.db, 'same', 'U1');
    expect(after.updated_at.toISOString()).toBe(before.updated_at.toISOString());
    expect(after.last_seen_at.toISOString()).toBe(at(3).toISOString());
    expect({ ...after, last_seen_at: null }).toEqual({ ...before, last_seen_at: null });

    const r2 = await csv('same', ['U1', 'U2'], at(4), {}, { U1: { price: '1999' } });
    expect(r2.counts).toMatchObject({ unchanged: 1, updated: 1 });
    const changed = await byExternalId(t.db, 'same', 'U1');
    expect(changed.price_eur).toBe(1999);
    expect(changed.updated_at.toISOString()).toBe(at(4).toISOString());
  });

  // An outside probe of stop 46: the same feed with its dates left out made every listing
  // "updated" (updated_at moved, an upsert in /changes) though nothing public had changed.
  it('a record sent again without its creation date keeps the stored one and is unchanged; with a new date it is updated', async () => {
    // (A date before the import's: a creation date after it is not kept as such.)
    const dated = { D1: { date: '20/10/2026 10:00' }, D2: { date: '20/10/2026 10:00' } };
    await csv('dates', ['D1', 'D2'], at(0), {}, dated);
    const before = await byExternalId(t.db, 'dates', 'D1');
    expect(before.created_at.toISOString()).toBe('2026-10-20T08:00:00.000Z');
    const changesBefore = Number((await t.db('listing_changes').count<{ n: number }[]>('* as n'))[0].n);
    const r = await csv('dates', ['D1', 'D2'], at(3), {}, { D1: { date: '' }, D2: { date: '' } });
    expect(r.counts).toMatchObject({ unchanged: 2, updated: 0 });
    const after = await byExternalId(t.db, 'dates', 'D1');
    expect([after.created_at.toISOString(), after.updated_at.toISOString()]).toEqual([before.created_at.toISOString(), before.updated_at.toISOString()]);
    expect(Number((await t.db('listing_changes').count<{ n: number }[]>('* as n'))[0].n)).toBe(changesBefore);
    // Sent again with the date: unchanged too; with another date, or another price and no date: updated.
    expect((await csv('dates', ['D1', 'D2'], at(4), {}, dated)).counts).toMatchObject({ unchanged: 2, updated: 0 });
    const r2 = await csv('dates', ['D1', 'D2'], at(5), {}, { D1: { date: '21/10/2026 10:00' }, D2: { date: '', price: '1999' } });
    expect(r2.counts).toMatchObject({ unchanged: 0, updated: 2 });
    expect((await byExternalId(t.db, 'dates', 'D1')).created_at.toISOString()).toBe('2026-10-21T08:00:00.000Z');
    expect((await byExternalId(t.db, 'dates', 'D2')).price_eur).toBe(1999);
  });

  it('a delta withdraws only what it deletes, and changes what it carries', async () => {
    const listing = (ref: string, status = 'available', amount = 1500) => ({
      ref, offer: 'rent', status, title: `Flat ${ref}`, price: { amount, currency: 'EUR', period: 'month' },
      surface_m2: 40 + Number(ref.slice(1)) * 7, bedrooms: 1, address: { locality: PLACES[Number(ref.slice(1))], country: 'LU' },
      published_at: '2026-10-01T08:00:00Z',
    });
    const json = (mode: string, listings: unknown[], now: Date) =>
      importFeed(t.db, { source: 'deltas', format: 'json', input: Buffer.from(JSON.stringify({ mode, listings })), now, gazetteer: gazetteer() });
    await json('full', ['D1', 'D2', 'D3', 'D4'].map((r) => listing(r)), at(0));
    const r = await json('delta', [listing('D1', 'deleted'), listing('D2', 'available', 1600)], at(1));
    expect(r.mode).toBe('delta');
    expect(r.counts).toMatchObject({ read: 2, withdrawn: 1, updated: 1, created: 0 });
    const rows = await t.db('listings').where({ source: 'deltas' }).orderBy('external_id');
    expect(rows.map((l) => [l.external_id, l.status, l.price_eur])).toEqual([
      ['D1', 'inactive', 1500], ['D2', 'active', 1600], ['D3', 'active', 1500], ['D4', 'active', 1500],
    ]);
    // A listing let or sold in a full snapshot is withdrawn too.
    const full = await json('full', [listing('D2', 'available', 1600), listing('D3', 'let'), listing('D4')], at(2));
    expect(full.counts).toMatchObject({ withdrawn: 1, unchanged: 2 });
    expect((await byExternalId(t.db, 'deltas', 'D3')).status).toBe('inactive');
  });

  it('a file that says it is a delta after its records (JSON "mode", OpenImmo umfang) is a delta', async () => {
    const listing = (ref: string) => ({
      ref, offer: 'rent', status: 'available', title: `Flat ${ref}`, price: { amount: 1500, currency: 'EUR', period: 'month' },
      surface_m2: 400 + Number(ref.slice(1)) * 7, bedrooms: 1, address: { locality: PLACES[Number(ref.slice(1))], country: 'LU' },
      published_at: '2026-10-01T08:00:00Z',
    });
    const json = (text: string, now: Date) => importFeed(t.db, { source: 'latemode', format: 'json', input: { text }, now, gazetteer: gazetteer() });
    await json(JSON.stringify({ mode: 'full', listings: ['L1', 'L2', 'L3'].map(listing) }), at(0));
    const r = await json(`{"listings": ${JSON.stringify([listing('L1')])}, "generated_at": "2026-11-02", "mode": "delta"}`, at(1));
    expect(r.mode).toBe('delta');
    expect(r.counts).toMatchObject({ read: 1, unchanged: 1, withdrawn: 0 });
    expect((await t.db('import_runs').where({ id: r.run_id }).first()).mode).toBe('delta');

    const xml = (umfang: string) =>
      `<?xml version="1.0"?><openimmo><anbieter><immobilie><objektkategorie><vermarktungsart MIETE_PACHT="true"/></objektkategorie>
       <geo><ort>Mamer</ort></geo><preise><kaltmiete>1700</kaltmiete></preise><flaechen><wohnflaeche>333</wohnflaeche></flaechen>
       <freitexte><objekttitel>Wohnung</objekttitel></freitexte><verwaltung_techn><objektnr_extern>X1</objektnr_extern></verwaltung_techn>
       </immobilie></anbieter><uebertragung umfang="${umfang}"/></openimmo>`;
    const x = (umfang: string, now: Date) => importFeed(t.db, { source: 'latemode', format: 'openimmo', input: { text: xml(umfang) }, now, gazetteer: gazetteer() });
    const d = await x('TEIL', at(2));
    expect(d.mode).toBe('delta');
    expect(d.counts).toMatchObject({ read: 1, created: 1, withdrawn: 0 });
    // The same file as a snapshot would withdraw the three others: the guard stops it.
    expect((await x('VOLL', at(3))).refusal).toEqual({ live: 4, would_withdraw: 3 });
  });

  it('the --delta option makes a csv delivery a delta: nothing is withdrawn by absence', async () => {
    await csv('csvdelta', ['C1', 'C2', 'C3'], at(0));
    const r = await csv('csvdelta', ['C1'], at(1), { delta: true });
    expect(r.counts).toMatchObject({ withdrawn: 0, unchanged: 1 });
    expect(await t.db('listings').where({ source: 'csvdelta', status: 'active' }).count('* as n').first()).toEqual({ n: 3 });
  });

  it('a rejected record of a known listing does not withdraw it', async () => {
    await csv('rej', ['R1', 'R2', 'R3'], at(0));
    const r = await csv('rej', ['R1', 'R2', 'R3'], at(1), {}, { R3: { price: '4 900 CHF' } });
    expect(r.counts).toMatchObject({ rejected: 1, withdrawn: 0, unchanged: 2 });
    expect((await byExternalId(t.db, 'rej', 'R3')).status).toBe('active');
    const run = await t.db('import_runs').where({ id: r.run_id }).first();
    expect(run.rejects).toEqual([{ external_id: 'R3', position: 'line 4', reason: 'price in CHF: only EUR is accepted' }]);
  });

  it('refuses a full snapshot that would withdraw more than half of the source, changing nothing', async () => {
    await csv('guard', ['G1', 'G2', 'G3', 'G4', 'G5'], at(0));
    const before = await snapshot(t.db);
    const r = await csv('guard', ['G1', 'G2'], at(1));
    expect(r.status).toBe('refused');
    expect(r.refusal).toEqual({ live: 5, would_withdraw: 3 });
    expect(await snapshot(t.db)).toEqual(before);
    const run = await t.db('import_runs').where({ id: r.run_id }).first();
    expect(run.status).toBe('refused');
    expect(run.finished_at).toBeInstanceOf(Date);
    expect(run.error).toMatch(/withdraw 3 of 5/);

    // Exactly half is allowed; an empty file is refused; the operator can override.
    expect((await csv('guard', [], at(1))).status).toBe('refused');
    const ok = await csv('guard', ['G1', 'G2'], at(1), { allowMassWithdrawal: true });
    expect(ok.status).toBe('ok');
    expect(ok.counts.withdrawn).toBe(3);
  });

  it('refuses a delta that would withdraw more than half of the source, exactly like a snapshot', async () => {
    const listing = (ref: string, status = 'available') => ({
      ref, offer: 'rent', status, title: `Flat ${ref}`, price: { amount: 1500, currency: 'EUR', period: 'month' },
      surface_m2: 200 + Number(ref.slice(1)) * 7, bedrooms: 1, address: { locality: PLACES[Number(ref.slice(1))], country: 'LU' },
      published_at: '2026-10-01T08:00:00Z',
    });
    const json = (mode: string, listings: unknown[], now: Date, extra: Partial<ImportOptions> = {}) =>
      importFeed(t.db, { source: 'delguard', format: 'json', input: Buffer.from(JSON.stringify({ mode, listings })), now, gazetteer: gazetteer(), ...extra });
    const refs = ['K1', 'K2', 'K3', 'K4'];
    await json('full', refs.map((r) => listing(r)), at(0));
    const before = await snapshot(t.db);

    // Every record deleted: the case of the issue.
    const all = await json('delta', refs.map((r) => listing(r, 'deleted')), at(1));
    expect(all.status).toBe('refused');
    expect(all.refusal).toEqual({ live: 4, would_withdraw: 4 });
    expect(await snapshot(t.db)).toEqual(before);
    const run = await t.db('import_runs').where({ id: all.run_id }).first();
    expect([run.status, run.mode]).toEqual(['refused', 'delta']);
    expect(run.error).toMatch(/the delta would withdraw 4 of 4 live listings/);

    // Sold and let withdraw too, and count the same.
    const sold = await json('delta', [listing('K1', 'sold'), listing('K2', 'let'), listing('K3', 'deleted')], at(1));
    expect(sold.refusal).toEqual({ live: 4, would_withdraw: 3 });
    expect(await snapshot(t.db)).toEqual(before);

    // Exactly half is allowed; the operator's override lets the rest through.
    const half = await json('delta', [listing('K1', 'deleted'), listing('K2', 'sold')], at(2));
    expect(half.status).toBe('ok');
    expect(half.counts).toMatchObject({ read: 2, deleted: 2, withdrawn: 2 });
    const rest = await json('delta', [listing('K3', 'deleted'), listing('K4', 'deleted')], at(3));
    expect(rest.status).toBe('refused');
    const forced = await json('delta', [listing('K3', 'deleted'), listing('K4', 'deleted')], at(3), { allowMassWithdrawal: true });
    expect(forced.status).toBe('ok');
    expect(forced.counts).toMatchObject({ deleted: 2, withdrawn: 2 });
    expect(await t.db('listings').where({ source: 'delguard', status: 'active' }).count('* as n').first()).toEqual({ n: 0 });
  });

  it('flags a listing its source has not confirmed for 14 days as stale, and clears it on confirmation', async () => {
    await csv('old', ['O1', 'O2'], at(0));
    await csv('other', ['X1'], at(14));
    expect((await byExternalId(t.db, 'old', 'O1')).flags).toEqual([]);
    const r = await csv('other', ['X1'], at(15));
    expect(r.counts.flagged).toBeGreaterThanOrEqual(2);
    const stale = await byExternalId(t.db, 'old', 'O1');
    expect(stale.flags).toEqual(['stale']);
    expect(stale.updated_at.toISOString()).toBe(at(15).toISOString());
    await csv('old', ['O1', 'O2'], at(16));
    expect((await byExternalId(t.db, 'old', 'O1')).flags).toEqual([]);
  });

  it('every run leaves an import_runs row with its counts', async () => {
    const runs = await t.db('import_runs').where({ source: 'snap' }).orderBy('id');
    expect(runs.map((r) => r.status)).toEqual(['ok', 'ok', 'ok']);
    expect(runs[1].counts).toMatchObject({ read: 3, withdrawn: 1 });
    expect(runs.every((r) => r.finished_at >= r.started_at)).toBe(true);
  });

  it('waits (beyond the connection statement timeout) for rows another writer holds, and says so', async () => {
    // import_runs writes also bump the service's data version row (another part of the
    // service); while a writer holds that row, the run's bookkeeping must wait, not fail.
    const hasDataState = (await t.db.raw(`SELECT to_regclass('data_state') AS t`)).rows[0].t !== null;
    const holder = await t.db.transaction();
    await holder.raw(hasDataState ? `SELECT 1 FROM data_state FOR UPDATE` : `SELECT 1`);
    const events: string[] = [];
    let waiting!: () => void;
    const isWaiting = new Promise<void>((resolve) => (waiting = resolve));
    const pending = importFeed(t.db, {
      source: 'patient', format: 'csv', input: { text: csvFeed([row('P1', 1, {}, 'patient')]) }, now: at(0), gazetteer: gazetteer(),
      onProgress: (e) => {
        events.push(e.phase);
        if (e.phase === 'waiting-for-lock') waiting();
      },
    });
    if (hasDataState) await isWaiting;
    await holder.commit();
    const r = await pending;
    expect(r.status).toBe('ok');
    if (hasDataState) expect(events[0]).toBe('waiting-for-lock');
  });

  it('a second import of the same source waits for the first (advisory lock), then runs', async () => {
    await csv('locked', ['L1'], at(0));
    const holder = await t.db.transaction();
    await holder.raw(`SELECT pg_advisory_xact_lock(7301, hashtext('locked'))`);
    const events: string[] = [];
    let waiting!: () => void;
    const isWaiting = new Promise<void>((resolve) => (waiting = resolve));
    const pending = importFeed(t.db, {
      source: 'locked', format: 'csv', input: { text: csvFeed([row('L1', 1, {}, 'locked')]) }, now: at(1), gazetteer: gazetteer(),
      onProgress: (e) => {
        events.push(e.phase);
        if (e.phase === 'waiting-for-lock') waiting();
      },
    });
    await isWaiting;
    // The API's reads are not blocked meanwhile.
    expect(await t.db('listings').where({ source: 'locked' }).count('* as n').first()).toEqual({ n: 1 });
    await holder.commit();
    const r = await pending;
    expect(r.status).toBe('ok');
    expect(events).toContain('waiting-for-lock');
  });

  it("refreshes the planner's statistics of listings when an import writes a good part of the table", async () => {
    // Deduplication searches listings in the import's own transaction, before autovacuum can
    // see the new rows: on the statistics of a (nearly) empty table its candidate search
    // walked a whole listing type per listing. Counted by ANALYZE, reltuples is exact here.
    const refs = Array.from({ length: 300 }, (_, i) => `B${i + 1}`);
    const r = await csv('statistics', refs, at(0));
    expect(r.counts).toMatchObject({ created: 300 });
    const [{ n }] = (await t.db.raw(`SELECT count(*)::int AS n FROM listings`)).rows;
    const [{ tuples }] = (await t.db.raw(`SELECT reltuples::int AS tuples FROM pg_class WHERE oid = 'listings'::regclass`)).rows;
    expect(tuples).toBe(n);
  });
});
