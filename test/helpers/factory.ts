import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import pino from 'pino';
import { Redis } from 'ioredis';
import { buildApp, type AppDeps } from '../../src/app.js';
import { listingIdFunction, type ListingIdFn, type ListingRow } from '../../src/domain/listing.js';
import type { Tier } from '../../src/domain/tiers.js';
import { loadGazetteer } from '../../src/reference/load.js';
import { findOrCreateAccount } from '../../src/repositories/accounts.js';
import { createApiKey } from '../../src/repositories/api-keys.js';
import { loadListingIds } from '../../src/repositories/listing-ids.js';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const silentLogger = pino({ level: 'silent' });

export async function ensureSource(db: Knex, name: string): Promise<void> {
  await db('sources').insert({ name, display_name: name, format: name === 'native' ? 'native' : 'csv' }).onConflict('name').ignore();
}

// The keyed id function of a test database (its secret was made by the migration), read once
// per database handle.
const idFunctions = new WeakMap<Knex, Promise<ListingIdFn>>();
export function listingIdsOf(db: Knex): Promise<ListingIdFn> {
  let ids = idFunctions.get(db);
  if (!ids) {
    ids = loadListingIds(db);
    idFunctions.set(db, ids);
  }
  return ids;
}

// For code under test that needs an id function but no database (the normalizer).
export const TEST_LISTING_IDS: ListingIdFn = listingIdFunction(Buffer.alloc(32, 0x5a));

let seq = 0;
export type ListingInput = Partial<Omit<ListingRow, 'id'>> & { id?: string };

// A listing with plausible defaults; every field can be overridden.
export async function insertListing(db: Knex, input: ListingInput = {}): Promise<ListingRow> {
  const source = input.source ?? 'test-agency';
  await ensureSource(db, source);
  const externalId = input.external_id ?? `EXT-${++seq}-${randomBytes(3).toString('hex')}`;
  const created = input.created_at ?? new Date('2026-11-01T10:00:00.000Z');
  const row: ListingRow = {
    id: input.id ?? (await listingIdsOf(db))(source, externalId),
    source,
    external_id: externalId,
    title: 'Appartement',
    price_eur: 1500,
    area_m2: 60,
    rooms: 2,
    commune: 'Luxembourg',
    locality: null,
    lat: 49.6116,
    lng: 6.1319,
    listing_type: 'RENT',
    accepts_students: false,
    images: [],
    source_url: `https://agency.example/${externalId}`,
    status: 'active',
    merged_into: null,
    flags: [],
    created_at: created,
    updated_at: created,
    first_seen_at: created,
    last_seen_at: created,
    removed_at: null,
    ...input,
  } as ListingRow;
  await db('listings').insert({ ...row, images: JSON.stringify(row.images) });
  return row;
}

export async function createKey(db: Knex, tier: Tier, email = `user-${randomBytes(4).toString('hex')}@example.com`) {
  const accountId = await findOrCreateAccount(db, email);
  const { record, key } = await createApiKey(db, { accountId, tier, name: `${tier} test key` });
  return { id: record.id, key, tier };
}

export async function buildTestApp(db: Knex, overrides: Partial<AppDeps> = {}) {
  const gazetteer = await loadGazetteer(db);
  const redis = overrides.redis === undefined ? null : overrides.redis;
  return buildApp({
    config: { PUBLIC_BASE_URL: 'https://api.example.test', TRUST_PROXY: false, STATS_RATE_LIMIT_PER_MINUTE: 1000, PAGES_RATE_LIMIT_PER_MINUTE: 100_000 },
    db,
    redis,
    logger: silentLogger,
    gazetteer,
    redisPrefix: `lftest:${randomBytes(4).toString('hex')}:`,
    ...overrides,
  });
}

// The tests' client to the machine's Redis. Its command timeout bounds a hang, not a speed:
// on a loaded machine a healthy Redis can take longer than the production 300 ms to answer,
// and the quota store would then fail open and a count test fail for the machine's sake.
// What a slow or gone Redis does is tested in test/faults/, with the production settings.
export function testRedis(): Redis {
  return new Redis(TEST_REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 5_000 });
}

export const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
