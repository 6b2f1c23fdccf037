// Answers computed from the data at one data version, reused only while the version is the
// same (so every answer stays exact), bounded in size: at most `maxEntries` entries and, when
// a weigher is given, at most `maxWeight` in total (least recently used entries go first).
// Concurrent misses for the same key share one computation.
export class VersionedCache<T> {
  private version = -1;
  private entries = new Map<string, { value: Promise<T>; weight: number; done?: { value: T } }>();
  private totalWeight = 0;

  constructor(
    private readonly maxEntries = 5000,
    private readonly weigh?: (value: T) => number,
    private readonly maxWeight = Infinity,
  ) {}

  async get(version: number, key: string, compute: () => Promise<T>): Promise<T> {
    // A request that read an older version than one already seen is answered from the
    // database directly: versions only grow, so it must not reset the cache.
    if (version < this.version) return compute();
    if (version > this.version) {
      this.entries.clear();
      this.totalWeight = 0;
      this.version = version;
    }
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key); // re-insert: most recently used last
      this.entries.set(key, hit);
      return hit.value;
    }
    const pending = compute();
    const entry: { value: Promise<T>; weight: number; done?: { value: T } } = { value: pending, weight: 0 };
    this.entries.set(key, entry);
    this.evict();
    pending.then(
      (value) => {
        entry.done = { value };
        if (this.entries.get(key) !== entry || !this.weigh) return;
        entry.weight = this.weigh(value);
        this.totalWeight += entry.weight;
        this.evict();
      },
      () => {
        // A failed computation is not kept.
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    );
    return pending;
  }

  // The value kept for `key` at exactly `version`, if it is computed already; no waiting (a
  // request answered from it needs no promise, no microtask).
  peek(version: number, key: string): T | undefined {
    if (version !== this.version) return undefined;
    const hit = this.entries.get(key);
    if (!hit?.done) return undefined;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit.done.value;
  }

  private evict(): void {
    while (this.entries.size > this.maxEntries || (this.totalWeight > this.maxWeight && this.entries.size > 1)) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [string, { weight: number }];
      this.entries.delete(oldestKey);
      this.totalWeight -= oldest.weight;
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
