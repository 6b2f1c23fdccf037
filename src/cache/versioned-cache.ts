// Answers computed from the data at one data version, reused only while the version is the
// same (so every answer stays exact), bounded in size (least recently used entries go first).
// Concurrent misses for the same key share one computation.
export class VersionedCache<T> {
  private version = -1;
  private entries = new Map<string, Promise<T>>();

  constructor(private readonly maxEntries = 5000) {}

  async get(version: number, key: string, compute: () => Promise<T>): Promise<T> {
    // A request that read an older version than one already seen is answered from the
    // database directly: versions only grow, so it must not reset the cache.
    if (version < this.version) return compute();
    if (version > this.version) {
      this.entries.clear();
      this.version = version;
    }
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key); // re-insert: most recently used last
      this.entries.set(key, hit);
      return hit;
    }
    const pending = compute();
    this.entries.set(key, pending);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    // A failed computation is not kept.
    pending.catch(() => {
      if (this.entries.get(key) === pending) this.entries.delete(key);
    });
    return pending;
  }

  get size(): number {
    return this.entries.size;
  }
}
