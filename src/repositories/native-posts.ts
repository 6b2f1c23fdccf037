// A row of native_posts (migrations/20261122000300_native_posts.ts): a post made on our own
// service. The demo writes these rows (src/demo/seed.ts); the native adapter reads them
// (src/ingest/adapters/native.ts) and, as the column is free text and jsonb, checks the
// listing type and the images it finds.
export interface NativePostRow {
  id: string;
  account_email: string | null;
  title: string;
  price_eur: number;
  area_m2: number | null;
  rooms: number | null;
  // As typed by the poster; resolved on import.
  commune_text: string;
  lat: number | null;
  lng: number | null;
  listing_type: string;
  accepts_students: boolean;
  images: unknown;
  status: 'published' | 'withdrawn';
  created_at: Date;
  updated_at: Date;
}
