// Admission to a cache on second sight. A cache that keeps every answer it computes keeps, under
// varied traffic (a different search on every request), mostly answers asked for once: each is
// serialized text that lives until evicted, long enough to reach V8's old generation, which then
// fills with dead answers and is collected in full, every second or so at 1,000,000 listings,
// each time pausing every request in flight in the process (bench/README.md, stop 38). An answer
// is kept only when its key was asked for before, among the last `capacity` to 2 × `capacity`
// keys refused. Keys are remembered as 32-bit hashes (small integers: nothing allocated per
// key); a collision only admits a key one sight early.
export class Doorkeeper {
  private current = new Set<number>();
  private previous = new Set<number>();

  constructor(private readonly capacity = 16_384) {}

  // True when `key` was seen recently (the caller may keep its answer); otherwise remembers it.
  admit(key: string): boolean {
    const h = hash32(key);
    if (this.current.has(h) || this.previous.has(h)) return true;
    if (this.current.size >= this.capacity) {
      this.previous = this.current;
      this.current = new Set();
    }
    this.current.add(h);
    return false;
  }
}

// FNV-1a over the UTF-16 code units.
function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}
