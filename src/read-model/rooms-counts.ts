import { FLAGGED } from './columns.js';

// Counts of "rooms at least m" (and of unflagged rows among them) over any range of positions
// of an order, without visiting the range: per block of 64 positions, how many rows before it
// pass each threshold; a range then costs two lookups and at most 2 × 63 rows. For filters
// whose other conditions the range already holds (commune, locality, type, price): a
// min_rooms filter over every commune visits hundreds of thousands of rows otherwise.
const BLOCK = 64;
const MAX_THRESHOLD = 7; // min_rooms above this: visit the rows
const STEPS = MAX_THRESHOLD + 2; // no minimum, then 0..MAX_THRESHOLD

export class RoomsCounts {
  // [block × STEPS + step]: rows before the block passing the step's minimum (all, unflagged).
  private readonly all: Uint32Array;
  private readonly clean: Uint32Array;

  constructor(
    private readonly order: Uint32Array,
    private readonly rooms: Int32Array,
    private readonly bits: Uint8Array,
  ) {
    const blocks = Math.ceil(order.length / BLOCK) + 1;
    this.all = new Uint32Array(blocks * STEPS);
    this.clean = new Uint32Array(blocks * STEPS);
    const all = new Uint32Array(STEPS);
    const clean = new Uint32Array(STEPS);
    for (let k = 0; k < order.length; k++) {
      if (k % BLOCK === 0) {
        this.all.set(all, (k / BLOCK) * STEPS);
        this.clean.set(clean, (k / BLOCK) * STEPS);
      }
      const i = order[k];
      const top = Math.min(rooms[i], MAX_THRESHOLD) + 1; // steps 0..top pass (unknown rooms, -1: step 0 only)
      const isClean = (bits[i] & FLAGGED) === 0;
      for (let s = 0; s <= top; s++) {
        all[s]++;
        if (isClean) clean[s]++;
      }
    }
    // The block just past the end, when the last one is full (a range may end there).
    if (order.length % BLOCK === 0) {
      this.all.set(all, (order.length / BLOCK) * STEPS);
      this.clean.set(clean, (order.length / BLOCK) * STEPS);
    }
  }

  get bytes(): number {
    return this.all.byteLength + this.clean.byteLength;
  }

  // Rows at positions [from, to) with rooms >= minRooms (-Infinity: any) and the flag
  // (-1 any, 0 unflagged, FLAGGED flagged); null when minRooms is above what is counted.
  count(from: number, to: number, minRooms: number, flag: number): number | null {
    // Rooms are whole, and -1 when unknown: any minimum up to -1 passes every row.
    if (Math.ceil(minRooms) > MAX_THRESHOLD) return null;
    const step = minRooms <= -1 ? 0 : Math.ceil(minRooms) + 1;
    return this.before(to, minRooms, step, flag) - this.before(from, minRooms, step, flag);
  }

  private before(p: number, minRooms: number, step: number, flag: number): number {
    const block = Math.floor(p / BLOCK);
    const at = block * STEPS + step;
    let n = flag < 0 ? this.all[at] : flag === 0 ? this.clean[at] : this.all[at] - this.clean[at];
    for (let k = block * BLOCK; k < p; k++) {
      const i = this.order[k];
      if (this.rooms[i] >= minRooms && (flag < 0 || (this.bits[i] & FLAGGED) === flag)) n++;
    }
    return n;
  }
}
