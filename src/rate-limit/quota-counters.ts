import type { Store } from 'express-rate-limit';
import { DAILY_QUOTA, type Tier } from '../domain/tiers.js';

// The daily quota's counters: one per API key and UTC calendar day, kept in the quota store
// (src/rate-limit/store.ts). The API counts in them (src/http/quota.ts); the key page reads
// them (usageToday).

export function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

export function secondsUntilUtcMidnight(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

// The day is part of the counter's key, so the quota resets at 00:00:00 UTC whatever the
// store's own window says.
export function dailyQuotaKey(keyId: string, now: Date): string {
  return `${keyId}:${utcDay(now)}`;
}

export type UsageToday =
  | { kind: 'unlimited' }
  | { kind: 'counted'; limit: number; used: number; remaining: number }
  | { kind: 'unknown'; limit: number };

// Today's count, read from the very store the API's daily quota counts in, under the same
// key. Pro and Enterprise keys are not counted.
export async function usageToday(store: Store, key: { id: string; tier: Tier }, now: Date): Promise<UsageToday> {
  const limit = DAILY_QUOTA[key.tier];
  if (limit === null) return { kind: 'unlimited' };
  try {
    const info = store.get ? await store.get(dailyQuotaKey(key.id, now)) : undefined;
    // A key not counted yet today has no counter: the memory store says undefined, but
    // rate-limit-redis parses Redis's nil (null through ioredis) as NaN.
    const hits = info?.totalHits;
    const used = typeof hits === 'number' && Number.isSafeInteger(hits) && hits > 0 ? hits : 0;
    return { kind: 'counted', limit, used, remaining: Math.max(0, limit - used) };
  } catch {
    return { kind: 'unknown', limit }; // the store is down: the page still works
  }
}
