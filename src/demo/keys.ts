import type { Knex } from 'knex';
import { TIERS, type Tier } from '../domain/tiers.js';
import { findOrCreateAccount } from '../repositories/accounts.js';
import { createApiKey } from '../repositories/api-keys.js';

export const DEMO_EMAIL = 'demo@listings-feed.local';

// A fresh key of each tier for the demo account; the previous demo keys are revoked so they
// do not pile up across restarts.
export async function mintDemoKeys(db: Knex, now: Date): Promise<{ tier: Tier; id: string; key: string }[]> {
  return db.transaction(async (trx) => {
    const accountId = await findOrCreateAccount(trx, DEMO_EMAIL);
    await trx('api_keys').where({ account_id: accountId }).whereNull('revoked_at').update({ revoked_at: now });
    const out: { tier: Tier; id: string; key: string }[] = [];
    for (const tier of TIERS) {
      const { record, key } = await createApiKey(trx, { accountId, tier, name: `demo ${tier}` });
      out.push({ tier, id: record.id, key });
    }
    return out;
  });
}
