// A bounded max-heap of (key, row) by key then row: keeps the `cap` smallest.
export class MaxHeap {
  private readonly keys: Float64Array;
  private readonly rows: Uint32Array;
  private n = 0;
  constructor(private readonly cap: number) {
    this.keys = new Float64Array(cap);
    this.rows = new Uint32Array(cap);
  }
  get full(): boolean {
    return this.n >= this.cap;
  }
  get topKey(): number {
    return this.keys[0];
  }
  private greater(a: number, b: number): boolean {
    return this.keys[a] > this.keys[b] || (this.keys[a] === this.keys[b] && this.rows[a] > this.rows[b]);
  }
  private swap(a: number, b: number): void {
    const k = this.keys[a];
    this.keys[a] = this.keys[b];
    this.keys[b] = k;
    const r = this.rows[a];
    this.rows[a] = this.rows[b];
    this.rows[b] = r;
  }
  offer(key: number, row: number): void {
    if (this.cap === 0) return;
    if (this.n < this.cap) {
      let i = this.n++;
      this.keys[i] = key;
      this.rows[i] = row;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.greater(i, parent)) break;
        this.swap(i, parent);
        i = parent;
      }
      return;
    }
    if (key > this.keys[0] || (key === this.keys[0] && row > this.rows[0])) return;
    this.keys[0] = key;
    this.rows[0] = row;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.n && this.greater(l, m)) m = l;
      if (r < this.n && this.greater(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
  }
  sorted(): number[] {
    const idx = Array.from({ length: this.n }, (_, k) => k);
    idx.sort((a, b) => this.keys[a] - this.keys[b] || this.rows[a] - this.rows[b]);
    return idx.map((k) => this.rows[k]);
  }
}
