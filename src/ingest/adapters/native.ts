import type { Knex } from 'knex';
import { LISTING_TYPES, type ListingType } from '../../domain/listing.js';
import type { ParsedFeed, RawRecord } from '../types.js';

interface NativePostRow {
  id: string;
  title: string;
  price_eur: number;
  area_m2: number | null;
  rooms: number | null;
  commune_text: string;
  lat: number | null;
  lng: number | null;
  listing_type: string;
  accepts_students: boolean;
  images: unknown;
  status: string;
  created_at: Date;
}

// Posts made on our own service, read from native_posts: always a full snapshot of them.
// A withdrawn post withdraws its listing; source_url stays null (the post has no origin
// page elsewhere).
export async function readNativePosts(db: Knex | Knex.Transaction): Promise<ParsedFeed> {
  const rows = (await db('native_posts')
    .select('id', 'title', 'price_eur', 'area_m2', 'rooms', 'commune_text', 'lat', 'lng', 'listing_type', 'accepts_students', 'images', 'status', 'created_at')
    .orderBy('id')) as NativePostRow[];
  const records: RawRecord[] = rows.map((p) => {
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
  });
  return { mode: 'full', records, rejects: [] };
}
