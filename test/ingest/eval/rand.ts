// The evaluation's own seeded generator (sfc32 seeded through splitmix32), kept apart from
// the demo data's and the first set's generator so that nothing is shared with them but
// the reference data. No clock, no Math.random: one seed, one byte-identical set of feeds.

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export class Rand {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    const sm = splitmix32(seed);
    this.a = sm();
    this.b = sm();
    this.c = sm();
    this.d = sm();
    for (let i = 0; i < 12; i++) this.next();
  }

  private next(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t >>> 0;
  }

  // A child generator: per-record choices that must not shift when another part changes.
  fork(): Rand {
    return new Rand(this.next());
  }

  float(): number {
    return this.next() / 4294967296;
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  between(min: number, max: number): number {
    return min + (max - min) * this.float();
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.float() * items.length)];
  }

  // Standard normal (Box-Muller).
  normal(): number {
    const u = Math.max(this.float(), 1e-12);
    const v = this.float();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  weighted<T>(items: readonly T[], weight: (t: T) => number): T {
    let total = 0;
    for (const it of items) total += weight(it);
    let x = this.float() * total;
    for (const it of items) {
      x -= weight(it);
      if (x < 0) return it;
    }
    return items[items.length - 1];
  }

  // `k` distinct items, each draw weighted.
  weightedDistinct<T>(items: readonly T[], k: number, weight: (t: T) => number): T[] {
    const left = [...items];
    const out: T[] = [];
    while (out.length < k && left.length > 0) {
      const it = this.weighted(left, weight);
      out.push(it);
      left.splice(left.indexOf(it), 1);
    }
    return out;
  }

  // From a table of [outcome, probability] (probabilities need not add up to 1).
  outcome<T>(table: readonly (readonly [T, number])[]): T {
    return this.weighted(table, (e) => e[1])[0];
  }
}
