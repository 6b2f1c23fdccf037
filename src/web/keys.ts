import type { Knex } from 'knex';
import type { Store } from 'express-rate-limit';
import { DAILY_QUOTA } from '../domain/tiers.js';
import { utcDay } from '../http/quota.js';
import { createApiKey, listApiKeys, type ApiKeyRecord } from '../repositories/api-keys.js';

export const MAX_ACTIVE_KEYS = 5;
export const KEY_ID_PATTERN = /^key_[0-9a-f]{16}$/;

export async function accountKeys(db: Knex, accountId: number): Promise<ApiKeyRecord[]> {
  return listApiKeys(db, { accountId });
}

export async function findAccountKey(db: Knex, accountId: number, keyId: string): Promise<ApiKeyRecord | null> {
  return (await listApiKeys(db, { accountId, id: keyId }))[0] ?? null;
}

export type CreateResult = { ok: true; record: ApiKeyRecord; key: string } | { ok: false; reason: 'limit' };

// New keys from the web page are Free; tiers change through the admin command line. The
// account row is locked while counting, so two requests at once cannot make a sixth key.
export async function createAccountKey(db: Knex, accountId: number, name: string): Promise<CreateResult> {
  return db.transaction(async (trx) => {
    await trx('accounts').select('id').where({ id: accountId }).forUpdate().first();
    const [{ count }] = await trx('api_keys').where({ account_id: accountId }).whereNull('revoked_at').count<{ count: number }[]>('* as count');
    if (Number(count) >= MAX_ACTIVE_KEYS) return { ok: false, reason: 'limit' } as const;
    const { record, key } = await createApiKey(trx, { accountId, tier: 'free', name });
    return { ok: true, record, key } as const;
  });
}

// Only the owner's keys: another account's key id is answered as if it did not exist.
export async function revokeAccountKey(db: Knex, accountId: number, keyId: string, now: Date): Promise<'revoked' | 'already_revoked' | 'not_found'> {
  const n = await db('api_keys').where({ id: keyId, account_id: accountId }).whereNull('revoked_at').update({ revoked_at: now });
  if (n > 0) return 'revoked';
  const exists = await db('api_keys').select('id').where({ id: keyId, account_id: accountId }).first();
  return exists ? 'already_revoked' : 'not_found';
}

export type UsageToday =
  | { kind: 'unlimited' }
  | { kind: 'counted'; limit: number; used: number; remaining: number }
  | { kind: 'unknown'; limit: number };

// Today's count is read from the very store the API's daily quota counts in (Redis, or the
// process's memory without Redis), under the same key: `${keyId}:${UTC day}`. Pro and
// Enterprise keys are not counted.
export async function usageToday(store: Store, key: Pick<ApiKeyRecord, 'id' | 'tier'>, now: Date): Promise<UsageToday> {
  const limit = DAILY_QUOTA[key.tier];
  if (limit === null) return { kind: 'unlimited' };
  try {
    const info = store.get ? await store.get(`${key.id}:${utcDay(now)}`) : undefined;
    // A key not counted yet today has no counter: the memory store says undefined, but
    // rate-limit-redis parses Redis's nil (null through ioredis) as NaN.
    const hits = info?.totalHits;
    const used = typeof hits === 'number' && Number.isSafeInteger(hits) && hits > 0 ? hits : 0;
    return { kind: 'counted', limit, used, remaining: Math.max(0, limit - used) };
  } catch {
    return { kind: 'unknown', limit }; // the store is down: the page still works
  }
}
