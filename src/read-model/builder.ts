import type { Knex } from 'knex';
import { Dictionary, FLAGGED, Ids, type IndexRow, NO_CODE, NO_ROOMS, STUDENTS } from './columns.js';
import { ListingIndex } from './listing-index.js';
import { sortRows } from './sort-orders.js';

// Reading the active listings and building a ListingIndex of them: the rows go into the
// columns as they come (in id order), then the sort orders are made once.

const BATCH = 50_000;

// Loads the active listings into a ListingIndex, in one REPEATABLE READ snapshot: the data
// version read first is exactly the version of every row read after it.
export async function loadListingIndex(db: Knex, cancelled: () => boolean = () => false): Promise<ListingIndex> {
  return db.transaction(
    async (trx) => {
      const state = await trx('data_state').select('version').first();
      const [{ count }] = await trx('listings').where('status', 'active').count<{ count: number }[]>('* as count');
      const builder = new ListingIndexBuilder(Number(count));
      let after: string | null = null;
      for (;;) {
        const q = trx('listings')
          .select(
            trx.raw(
              `id, price_eur, area_m2, rooms, commune, locality, lat, lng, listing_type, source, accepts_students, flagged,
               (extract(epoch from created_at) * 1000)::float8 AS created_ms`,
            ),
          )
          .where('status', 'active')
          .orderBy('id')
          .limit(BATCH)
          .options({ rowMode: 'array' });
        if (after !== null) q.where('id', '>', after);
        if (cancelled()) throw new Error('read model: load cancelled');
        const rows = (await q) as unknown as IndexRow[];
        for (const r of rows) builder.add(r);
        if (rows.length < BATCH) break;
        after = rows[rows.length - 1][0];
      }
      return builder.build(Number(state?.version ?? 0));
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

export class ListingIndexBuilder {
  private n = 0;
  private readonly ids: Ids;
  private readonly price: Int32Array;
  private readonly area: Float64Array;
  private readonly rooms: Int32Array;
  private readonly created: Float64Array;
  private readonly lat: Float64Array;
  private readonly lng: Float64Array;
  private readonly commune: Uint16Array;
  private readonly locality: Uint16Array;
  private readonly source: Uint16Array;
  private readonly type: Uint8Array;
  private readonly bits: Uint8Array;
  private readonly dicts = { commune: new Dictionary(), locality: new Dictionary(), source: new Dictionary(), type: new Dictionary() };
  private lastId: string | null = null;

  // `capacity`: how many rows at most (the count read in the same snapshot).
  constructor(private readonly capacity: number) {
    this.ids = new Ids(capacity);
    this.price = new Int32Array(capacity);
    this.area = new Float64Array(capacity);
    this.rooms = new Int32Array(capacity);
    this.created = new Float64Array(capacity);
    this.lat = new Float64Array(capacity);
    this.lng = new Float64Array(capacity);
    this.commune = new Uint16Array(capacity);
    this.locality = new Uint16Array(capacity);
    this.source = new Uint16Array(capacity);
    this.type = new Uint8Array(capacity);
    this.bits = new Uint8Array(capacity);
  }

  // Rows must come in id order (ORDER BY id, the database's collation).
  add(r: IndexRow): void {
    const i = this.n;
    if (i >= this.capacity) throw new Error('read model: more rows than counted');
    const id = r[0];
    if (this.lastId !== null && id === this.lastId) throw new Error('read model: duplicate id');
    this.lastId = id;
    this.ids.set(i, id);
    this.price[i] = r[1];
    this.area[i] = r[2] ?? NaN;
    this.rooms[i] = r[3] ?? NO_ROOMS;
    this.commune[i] = this.dicts.commune.code(r[4]);
    this.locality[i] = r[5] === null ? NO_CODE : this.dicts.locality.code(r[5]);
    this.lat[i] = r[6] ?? NaN;
    this.lng[i] = r[7] ?? NaN;
    this.type[i] = this.dicts.type.code(r[8]);
    this.source[i] = this.dicts.source.code(r[9]);
    this.bits[i] = (r[11] ? FLAGGED : 0) | (r[10] ? STUDENTS : 0);
    this.created[i] = r[12];
    this.n++;
  }

  build(version: number): ListingIndex {
    const n = this.n;
    const cut = <T extends Float64Array | Int32Array | Uint16Array | Uint8Array | Uint32Array>(a: T): T => (a.length === n ? a : (a.slice(0, n) as T));
    // The sort keys are kept as orders and ranks; the doubles themselves are not needed after.
    const price = cut(this.price);
    return new ListingIndex(version, {
      n,
      ids: this.ids.cut(n),
      price,
      rooms: cut(this.rooms),
      byPrice: sortRows(n, price),
      byArea: sortRows(n, cut(this.area)),
      byCreated: sortRows(n, cut(this.created)),
      lat: cut(this.lat),
      lng: cut(this.lng),
      commune: cut(this.commune),
      locality: cut(this.locality),
      source: cut(this.source),
      type: cut(this.type),
      bits: cut(this.bits),
      dicts: this.dicts,
    });
  }
}
