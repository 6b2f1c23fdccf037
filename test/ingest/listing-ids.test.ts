import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createDb, migrationConfig } from '../../src/db/knex.js';
import { listingIdSql } from '../../src/domain/listing.js';
import { importFeed } from '../../src/ingest/index.js';
import { loadListingIds, prepareListingIdSql } from '../../src/repositories/listing-ids.js';
import { useTestContext } from '../helpers/context.js';
import { ensureSource } from '../helpers/factory.js';
import { createTestDb, type TestDb } from '../helpers/pg.js';
import { csvFeed, csvRow, gazetteer } from './helpers.js';

// Issue 10, item 1: ids were sha256(source NUL external_id) cut to 20 hex digits. Sources are
// public (/stats) and external ids sequential, so 800 computed ids fetched 467 listings in
// 3.9 s, 65 of them flagged. Now they are keyed by a secret of the service.
const unkeyed = (source: string, externalId: string) => 'lst_' + createHash('sha256').update(`${source}\u0000${externalId}`).digest('hex').slice(0, 20);
const MIGRATION = '20261123000200_keyed_listing_ids.ts';

const t = useTestContext();

const importRefs = (db: TestDb['db'], source: string, refs: string[]) =>
  importFeed(db, {
    source,
    format: 'csv',
    input: { text: csvFeed(refs.map((ref, i) => csvRow({ ref, lat: String(49.6 + i * 0.01) }))) },
    gazetteer: gazetteer(),
  });

describe('listing ids', () => {
  it('cannot be computed from (source, external_id) without the secret; keep the documented shape', async () => {
    const refs = Array.from({ length: 20 }, (_, i) => `MI-${1000 + i}`);
    const report = await importRefs(t.db, 'keyed-agency', refs);
    expect(report.counts.created).toBe(20);
    const rows = (await t.db('listings').where({ source: 'keyed-agency' }).select('id', 'external_id')) as { id: string; external_id: string }[];
    const listingId = await loadListingIds(t.db);
    for (const r of rows) {
      expect(r.id).toMatch(/^lst_[0-9a-f]{20}$/);
      expect(r.id).not.toBe(unkeyed('keyed-agency', r.external_id));
      expect(r.id).toBe(listingId('keyed-agency', r.external_id));
    }
    // The secret: one row, 32 random bytes, of this database only.
    const secrets = await t.db('service_secrets').select('name', 'value');
    expect(secrets).toHaveLength(1);
    expect((secrets[0].value as Buffer).length).toBe(32);
  });

  it('are the same across re-imports and restarts (another connection, another process reading the same database)', async () => {
    const refs = ['R-1', 'R-2', 'R-3'];
    await importRefs(t.db, 'stable-agency', refs);
    const before = await t.db('listings').where({ source: 'stable-agency' }).orderBy('external_id').pluck('id');
    // "Restart": a new pool, with nothing carried over in memory.
    const again = createDb(t.url, { poolMax: 2 });
    try {
      await importRefs(again, 'stable-agency', refs.slice(0, 2)); // R-3 withdrawn
      await importRefs(again, 'stable-agency', refs); // and back
      const after = await again('listings').where({ source: 'stable-agency' }).orderBy('external_id').pluck('id');
      expect(after).toEqual(before);
      expect(await again('listings').where({ source: 'stable-agency', status: 'active' }).count<{ n: number }[]>('* as n')).toEqual([{ n: 3 }]);
    } finally {
      await again.destroy();
    }
  });

  it('differ between two databases (each made its own secret)', async () => {
    const other = await createTestDb();
    try {
      // Test databases are copies of one template; a fresh secret stands for another install.
      await other.db('service_secrets').update({ value: Buffer.alloc(32, 0x11) });
      expect((await loadListingIds(other.db))('a', '1')).not.toBe((await loadListingIds(t.db))('a', '1'));
    } finally {
      await other.drop();
    }
  });

  it('are computed the same way by PostgreSQL (the SQL form used by the migration and the benchmark)', async () => {
    const listingId = await loadListingIds(t.db);
    const pairs: [string, string][] = [
      ['capital-homes', 'CH-1042'],
      ['native', 'post-00017'],
      ['x', ''],
      ['lëtzebuerg-immo', 'Réf. 12/Ä ✓ 🏠'],
      ['a'.repeat(63), 'b'.repeat(200)],
    ];
    await t.db.transaction(async (trx) => {
      await prepareListingIdSql(trx);
      for (const [source, externalId] of pairs) {
        const { rows } = await trx.raw(`SELECT ${listingIdSql('?::text', '?::text')} AS id`, [source, externalId]);
        expect(rows[0].id, `${source}/${externalId}`).toBe(listingId(source, externalId));
      }
    });
  });
});

describe('the migration that keys them', () => {
  it('re-keys an existing database: ids, merged_into and the dedup pairs follow; down restores the old ids', async () => {
    const scratch = await createTestDb();
    const db = scratch.db;
    try {
      await db.migrate.down({ ...migrationConfig, name: MIGRATION });
      expect(await db.schema.hasTable('service_secrets')).toBe(false);
      for (const s of ['agency-a', 'agency-b', 'agency-c']) await ensureSource(db, s);
      const base = { title: 'Flat', price_eur: 1500, area_m2: 60, rooms: 2, commune: 'Luxembourg', listing_type: 'RENT', images: '[]' };
      const time = { created_at: new Date('2026-11-01T10:00:00Z'), updated_at: new Date('2026-11-01T10:00:00Z'), first_seen_at: new Date('2026-11-01T10:00:00Z'), last_seen_at: new Date('2026-11-01T10:00:00Z') };
      const rows: Record<string, unknown>[] = [];
      for (let i = 0; i < 300; i++) {
        const source = ['agency-a', 'agency-b', 'agency-c'][i % 3];
        rows.push({ ...base, ...time, id: unkeyed(source, `E${i}`), source, external_id: `E${i}`, status: 'active' });
      }
      // A few merged into others (of another source), and pairs both ways round.
      for (let i = 0; i < 30; i++) {
        rows[3 * i + 1].status = 'merged';
        rows[3 * i + 1].merged_into = rows[3 * i].id;
      }
      await db.batchInsert('listings', rows, 100);
      const pairs = Array.from({ length: 60 }, (_, i) => {
        const [x, y] = [rows[i].id as string, rows[i + 100].id as string];
        return { a: x < y ? x : y, b: x < y ? y : x, kind: i % 2 ? 'merge' : 'possible', score: i / 100 };
      });
      await db('listing_dedup_pairs').insert(pairs);

      await db.migrate.up({ ...migrationConfig, name: MIGRATION });

      const listingId = await loadListingIds(db);
      const oldToNew = new Map(rows.map((r) => [r.id as string, listingId(r.source as string, r.external_id as string)]));
      const after = (await db('listings').select('id', 'source', 'external_id', 'status', 'merged_into')) as { id: string; source: string; external_id: string; status: string; merged_into: string | null }[];
      expect(after).toHaveLength(300);
      for (const r of after) {
        expect(r.id).toBe(listingId(r.source, r.external_id));
        expect(r.id).not.toBe(unkeyed(r.source, r.external_id));
      }
      const byExternal = new Map(after.map((r) => [r.external_id, r]));
      for (const r of rows.filter((x) => x.merged_into)) {
        const now = byExternal.get(r.external_id as string)!;
        expect(now.status).toBe('merged');
        expect(now.merged_into).toBe(oldToNew.get(r.merged_into as string));
      }
      const newPairs = (await db('listing_dedup_pairs').select('a', 'b', 'kind', 'score')) as { a: string; b: string; kind: string; score: number }[];
      expect(newPairs).toHaveLength(60);
      const expected = pairs.map((p) => {
        const [x, y] = [oldToNew.get(p.a)!, oldToNew.get(p.b)!];
        return { a: x < y ? x : y, b: x < y ? y : x, kind: p.kind, score: p.score };
      });
      const key = (p: { a: string; b: string }) => `${p.a}|${p.b}`;
      expect(newPairs.map(key).sort()).toEqual(expected.map(key).sort());
      // The references are still enforced.
      await expect(db('listings').where({ id: after[0].id }).update({ status: 'merged', merged_into: 'lst_nothing' })).rejects.toMatchObject({ code: '23503' });

      // And back: the unkeyed ids again, references included.
      await db.migrate.down({ ...migrationConfig, name: MIGRATION });
      const restored = (await db('listings').select('id', 'external_id', 'merged_into')) as { id: string; external_id: string; merged_into: string | null }[];
      const original = new Map(rows.map((r) => [r.external_id as string, r]));
      for (const r of restored) {
        expect(r.id).toBe(original.get(r.external_id)!.id);
        expect(r.merged_into).toBe(original.get(r.external_id)!.merged_into ?? null);
      }
      expect(await db('listing_dedup_pairs').count<{ n: number }[]>('* as n')).toEqual([{ n: 60 }]);
    } finally {
      await scratch.drop();
    }
  });
});
