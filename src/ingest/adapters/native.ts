import type { Knex } from 'knex';
import { LISTING_TYPES, type ListingType } from '../../domain/listing.js';
import type { NativePostRow } from '../../repositories/native-posts.js';
import type { FeedEvent, RawRecord } from '../types.js';

// The columns the adapter reads.
type NativePost = Omit<NativePostRow, 'account_email' | 'updated_at'>;

const PAGE = 2000;

// Posts made on our own service, read from native_posts page by page (by id): always a
// full snapshot of them. A withdrawn post withdraws its listing; source_url stays null (the
// post has no origin page elsewhere).
export async function* readNativePosts(db: Knex | Knex.Transaction): AsyncGenerator<FeedEvent> {
  yield { kind: 'mode', mode: 'full' };
  let after: string | null = null;
  for (;;) {
    const page = db('native_posts')
      .select('id', 'title', 'price_eur', 'area_m2', 'rooms', 'commune_text', 'lat', 'lng', 'listing_type', 'accepts_students', 'images', 'status', 'created_at')
      .orderBy('id')
      .limit(PAGE);
    if (after !== null) page.where('id', '>', after);
    const rows = (await page) as NativePost[];
    for (const p of rows) yield { kind: 'record', record: toRecord(p) };
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1].id;
  }
}

function toRecord(p: NativePost): RawRecord {
  const position = `post ${p.id}`;
  if (p.status === 'withdrawn') return { position, externalId: p.id, action: 'withdraw', listingType: null };
  const type = (LISTING_TYPES as readonly string[]).includes(p.listing_type) ? (p.listing_type as ListingType) : null;
  return {
    position,
    externalId: p.id,
    action: 'upsert',
    listingType: type,
    typeText: p.listing_type,
    title: p.title,
    price: p.price_eur,
    currency: 'EUR',
    area: p.area_m2,
    rooms: p.rooms,
    town: p.commune_text,
    lat: p.lat,
    lng: p.lng,
    images: Array.isArray(p.images) ? p.images.filter((u): u is string => typeof u === 'string') : [],
    students: p.accepts_students,
    date: p.created_at,
    dateKind: 'created',
    sourceUrl: null,
  };
}
