// Keys found over their daily quota, held for a moment so that their next requests are
// refused without asking the quota store (issue 15: a request answered from what the process
// holds costs no Redis round trip; a key over its quota sends little else).
//
// Holding a refusal is exact for as long as the key's count cannot fall below its limit.
// Refused requests are not counted (docs/spec/contract.md section 6), so the only way down is
// a 304 of a request admitted earlier, taken back when it finishes (src/http/quota.ts). So a
// refusal is held for `holdMs` (1 s) at most, dropped at once when this process takes back a
// 304 of that key, and never outlives its counter (the counter's key names the UTC day) or
// the key's limit (a tier change gives another limit). A slot freed by another instance's
// 304 is therefore offered again within 1 s.
export const REFUSAL_HOLD_MS = 1_000;

interface Held {
  counter: string;
  limit: number;
  untilMs: number;
}

export class QuotaRefusals {
  private readonly held = new Map<string, Held>();

  constructor(
    private readonly holdMs = REFUSAL_HOLD_MS,
    private readonly maxKeys = 10_000,
  ) {}

  // The store refused a request of this key: `counter` (dailyQuotaKey) is at or over `limit`.
  refuse(keyId: string, counter: string, limit: number, nowMs: number): void {
    if (this.held.size >= this.maxKeys && !this.held.has(keyId)) this.held.clear();
    this.held.set(keyId, { counter, limit, untilMs: nowMs + this.holdMs });
  }

  // Whether a request of this key, counted in `counter` against `limit`, is refused without
  // asking the store.
  refuses(keyId: string, counter: string, limit: number, nowMs: number): boolean {
    const h = this.held.get(keyId);
    if (h === undefined) return false;
    if (h.counter === counter && h.limit === limit && nowMs < h.untilMs) return true;
    this.held.delete(keyId);
    return false;
  }

  // A request of this key was taken back from its count: it may be under its limit again.
  forget(keyId: string): void {
    this.held.delete(keyId);
  }

  get size(): number {
    return this.held.size;
  }
}
