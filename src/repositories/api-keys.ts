import type { Knex } from 'knex';
import { displayParts, generateApiKey, generateKeyId, hashApiKey } from '../auth/api-key.js';
import { normalizeEmail } from '../domain/email.js';
import type { Tier } from '../domain/tiers.js';

export interface ApiKeyRecord {
  id: string;
  account_id: number;
  email: string;
  name: string;
  tier: Tier;
  prefix: string;
  last4: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

export interface AuthenticatedKey {
  id: string;
  account_id: number;
  tier: Tier;
}

// The key, and in the same round trip the current data version (which the API's caches are
// checked against): one query per request instead of two.
export async function findActiveKeyByHash(db: Knex, keyHash: string): Promise<{ key: AuthenticatedKey | null; dataVersion: number }> {
  const { rows } = await db.raw(
    `SELECT k.id, k.account_id, k.tier, d.version AS data_version
       FROM data_state d
       LEFT JOIN api_keys k ON k.key_hash = ? AND k.revoked_at IS NULL`,
    [keyHash],
  );
  const row = rows[0] as (AuthenticatedKey & { data_version: number }) | undefined;
  const dataVersion = Number(row?.data_version ?? 0);
  if (!row || row.id === null) return { key: null, dataVersion };
  return { key: { id: row.id, account_id: row.account_id, tier: row.tier }, dataVersion };
}

// Returns the plaintext key: the only moment it exists outside the client's hands.
export async function createApiKey(
  db: Knex | Knex.Transaction,
  input: { accountId: number; tier: Tier; name?: string },
): Promise<{ record: ApiKeyRecord; key: string }> {
  const key = generateApiKey();
  const { prefix, last4 } = displayParts(key);
  const id = generateKeyId();
  await db('api_keys').insert({
    id,
    account_id: input.accountId,
    name: input.name ?? '',
    tier: input.tier,
    prefix,
    last4,
    key_hash: hashApiKey(key),
  });
  const record = (await listApiKeys(db, { id }))[0];
  return { record, key };
}

export async function listApiKeys(db: Knex | Knex.Transaction, filter: { email?: string; id?: string; accountId?: number } = {}): Promise<ApiKeyRecord[]> {
  const q = db('api_keys as k')
    .join('accounts as a', 'a.id', 'k.account_id')
    .select('k.id', 'k.account_id', 'a.email', 'k.name', 'k.tier', 'k.prefix', 'k.last4', 'k.created_at', 'k.last_used_at', 'k.revoked_at')
    .orderBy([{ column: 'k.created_at' }, { column: 'k.id' }]);
  if (filter.email) q.where('a.email', normalizeEmail(filter.email));
  if (filter.id) q.where('k.id', filter.id);
  if (filter.accountId !== undefined) q.where('k.account_id', filter.accountId);
  return (await q) as ApiKeyRecord[];
}

// The key `keyId` if it belongs to the account: another account's key is answered as if it
// did not exist.
export async function findAccountKey(db: Knex, accountId: number, keyId: string): Promise<ApiKeyRecord | null> {
  return (await listApiKeys(db, { accountId, id: keyId }))[0] ?? null;
}

export type CreateAccountKeyResult = { ok: true; record: ApiKeyRecord; key: string } | { ok: false; reason: 'limit' | 'daily_limit' | 'used' };

// A key for an account that has fewer than `maxActive` active keys and has created fewer than
// `maxPerDay` Free keys since 00:00 UTC (revoked ones included, by the database's clock, which
// stamps created_at: a quota counts per key, so revoking a used-up key and creating another
// would otherwise give an account any number of quotas a day). The account row is locked
// while counting, so two requests at once cannot go over either limit.
// `claim`, when given, runs in the same transaction once the account is locked: false (the
// form that asked was used already) creates nothing; a failure later rolls the claim back.
export async function createAccountKey(
  db: Knex,
  input: { accountId: number; tier: Tier; name: string; maxActive: number; maxPerDay: number },
  claim?: (trx: Knex.Transaction) => Promise<boolean>,
): Promise<CreateAccountKeyResult> {
  return db.transaction(async (trx) => {
    await trx('accounts').select('id').where({ id: input.accountId }).forUpdate().first();
    if (claim && !(await claim(trx))) return { ok: false, reason: 'used' } as const;
    const [{ active, today }] = await trx('api_keys')
      .where({ account_id: input.accountId })
      .select(
        trx.raw('count(*) FILTER (WHERE revoked_at IS NULL)::int AS active'),
        trx.raw(`count(*) FILTER (WHERE tier = 'free' AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')::int AS today`),
      );
    if (active >= input.maxActive) return { ok: false, reason: 'limit' } as const;
    if (today >= input.maxPerDay) return { ok: false, reason: 'daily_limit' } as const;
    const { record, key } = await createApiKey(trx, { accountId: input.accountId, tier: input.tier, name: input.name });
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

export async function revokeApiKey(db: Knex | Knex.Transaction, id: string, now: Date): Promise<boolean> {
  const n = await db('api_keys').where({ id }).whereNull('revoked_at').update({ revoked_at: now });
  return n > 0;
}

// An active key's tier (a revoked key keeps the tier it had); false when there is none.
export async function setApiKeyTier(db: Knex | Knex.Transaction, id: string, tier: Tier): Promise<boolean> {
  const n = await db('api_keys').where({ id }).whereNull('revoked_at').update({ tier });
  return n > 0;
}

// Each key's last use, in one statement; never moved back (another process's flush may come
// after a later one's).
export async function touchApiKeys(db: Knex, uses: ReadonlyMap<string, Date>): Promise<void> {
  if (uses.size === 0) return;
  await db.raw(
    `UPDATE api_keys k SET last_used_at = GREATEST(k.last_used_at, u.at)
       FROM unnest(?::text[], ?::timestamptz[]) AS u(id, at) WHERE k.id = u.id`,
    [[...uses.keys()], [...uses.values()]],
  );
}
