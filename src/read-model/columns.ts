import type { SortedRows } from './sort-orders.js';

// The columns of the read model: one typed array per searched field (off the JS heap), row i
// being the i-th active listing in id order. Text columns hold small codes of a Dictionary;
// the two booleans are bits of one byte.

export const NO_CODE = 0;
export const FLAGGED = 1;
export const STUDENTS = 2;
export const NO_ROOMS = -1; // rooms is never negative (a check constraint)

// One active listing as the loader reads it.
export type IndexRow = [
  id: string,
  price: number,
  area: number | null,
  rooms: number | null,
  commune: string,
  locality: string | null,
  lat: number | null,
  lng: number | null,
  listingType: string,
  source: string,
  acceptsStudents: boolean,
  flagged: boolean,
  createdMs: number,
];

// The codes of one text column: 0 is "no value", each distinct value gets the next code.
export class Dictionary {
  private readonly codes = new Map<string, number>();
  private readonly values: string[] = [''];
  code(value: string): number {
    let c = this.codes.get(value);
    if (c === undefined) {
      c = this.values.length;
      if (c > 0xffff) throw new Error('read model: more than 65,535 distinct values in a column');
      this.values.push(value);
      this.codes.set(value, c);
    }
    return c;
  }
  find(value: string): number {
    return this.codes.get(value) ?? -1;
  }
  get size(): number {
    return this.values.length;
  }
}

// Listing ids: the usual shape (lst_ and 20 lower-case hex digits) packed in 10 bytes, any
// other id kept as it is.
const PACKED_ID = /^lst_[0-9a-f]{20}$/;
export class Ids {
  private packed: Buffer;
  private readonly other = new Map<number, string>();
  constructor(capacity: number) {
    this.packed = Buffer.alloc(capacity * 10);
  }
  set(row: number, id: string): void {
    if (PACKED_ID.test(id)) this.packed.write(id.slice(4), row * 10, 'hex');
    else this.other.set(row, id);
  }
  get(row: number): string {
    return this.other.get(row) ?? 'lst_' + this.packed.toString('hex', row * 10, row * 10 + 10);
  }
  cut(n: number): Ids {
    if (this.packed.length > n * 10) this.packed = Buffer.from(this.packed.subarray(0, n * 10));
    return this;
  }
  get bytes(): number {
    return this.packed.length + this.other.size * 64;
  }
}

// The columns of a built index, sorted orders included (sort-orders.ts).
export interface Columns {
  n: number;
  ids: Ids;
  price: Int32Array;
  rooms: Int32Array;
  byPrice: SortedRows;
  byArea: SortedRows;
  byCreated: SortedRows;
  lat: Float64Array;
  lng: Float64Array;
  commune: Uint16Array;
  locality: Uint16Array;
  source: Uint16Array;
  type: Uint8Array;
  bits: Uint8Array;
  dicts: { commune: Dictionary; locality: Dictionary; source: Dictionary; type: Dictionary };
}
