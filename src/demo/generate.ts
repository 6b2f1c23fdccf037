import { DateTime } from 'luxon';
import { NATIVE_SOURCE, type ListingType } from '../domain/listing.js';
import type { NativePostRow } from '../repositories/native-posts.js';
import { AGENCIES, NATIVE, type FileFormat } from './agencies.js';
import { copyPrice, deliveryTimes, generateMarket, type Copy, type DemoProperty, type Market } from './market.js';
import { Rng } from './random.js';
import { imageUrls, renderFeed, type FeedItem } from './render.js';

export { mulberry32 } from './random.js';
export type { Copy, DemoProperty, Market } from './market.js';

// A realistic, reproducible demo data set, made the way real data arrives: a market of
// properties (market.ts) rendered into the feed files of six agencies in the three formats
// of docs/feed-formats.md (render.ts) - two of them delivered twice (twelve days ago and now), one
// whose export stopped 18 days ago - plus the posts of our own users as native_posts rows.
// seedDemo imports all of it through the importer. The same options always give
// byte-identical files (one seeded PRNG, no clock, no Math.random), so demos, screenshots
// and tests agree.

export interface SourceRow {
  name: string;
  display_name: string;
  format: FileFormat | 'native';
}

// A native post as the demo writes it: a known listing type, images a list of URLs.
export type DemoNativePost = NativePostRow & { account_email: string; listing_type: ListingType; images: string[] };

// One delivery of an agency: a full snapshot file.
export interface DemoFeedStep {
  kind: 'feed';
  source: string;
  format: FileFormat;
  fileName: string;
  // The clock of the import (the file was exported just before).
  at: Date;
  bytes: Buffer;
}

// The native posts as they stood at `at`, imported then.
export interface DemoNativeStep {
  kind: 'native';
  source: typeof NATIVE_SOURCE;
  format: 'native';
  at: Date;
  posts: DemoNativePost[];
}

export type DemoStep = DemoFeedStep | DemoNativeStep;

export interface DemoData {
  sources: SourceRow[];
  // In import order (oldest first).
  steps: DemoStep[];
  // The truth behind the files: which copies are one property.
  market: Market;
}

export interface DemoOptions {
  now: Date;
  seed?: number;
  // Properties on offer at `now` (about the number of active listings after import).
  listings?: number;
}

export const DEMO_DEFAULT_SEED = 20261122;
export const DEMO_DEFAULT_LISTINGS = 6000;

const DAY = 86_400_000;
// A json export keeps a let or sold listing this long, with its status, before dropping it.
const KEEP_GONE_MS = 10 * DAY;

const FIRST_NAMES = ['marie', 'laura', 'tom', 'luc', 'sarah', 'paul', 'anne', 'max', 'lea', 'noah', 'julie', 'ben', 'sofia', 'mia', 'jeff', 'claude', 'ana', 'joao', 'marco', 'elena'];
const LAST_NAMES = ['schmit', 'muller', 'weber', 'hoffmann', 'wagner', 'thill', 'schroeder', 'reuter', 'klein', 'kremer', 'faber', 'schneider', 'meyer', 'becker', 'da.silva', 'ferreira'];
const MAIL_DOMAINS = ['example.lu', 'example.com', 'mail.example'];

export function generateDemoData(opts: DemoOptions): DemoData {
  const now = opts.now.getTime();
  const market = generateMarket({
    now,
    seed: opts.seed ?? DEMO_DEFAULT_SEED,
    listings: Math.max(1, Math.floor(opts.listings ?? DEMO_DEFAULT_LISTINGS)),
  });

  const bySource = new Map<string, { p: DemoProperty; c: Copy }[]>();
  for (const p of [...market.properties, ...market.junk]) {
    for (const c of p.copies) {
      const list = bySource.get(c.source) ?? [];
      list.push({ p, c });
      bySource.set(c.source, list);
    }
  }
  for (const list of bySource.values()) list.sort((a, b) => a.c.seq - b.c.seq);

  const steps: DemoStep[] = [];
  for (const agency of AGENCIES) {
    const copies = bySource.get(agency.name) ?? [];
    for (const at of deliveryTimes(agency.name, now)) {
      const items: FeedItem[] = [];
      for (const { p, c } of copies) {
        if (c.listedAt > at) continue;
        if (p.removedAt === null || at < p.removedAt) items.push({ p, c, status: 'available' });
        else if (agency.format === 'json' && at < p.removedAt + KEEP_GONE_MS) {
          items.push({ p, c, status: p.type === 'SALE' ? 'sold' : c.style % 5 === 0 ? 'reserved' : 'let' });
        }
      }
      const ext = agency.format === 'openimmo' ? 'openimmo.xml' : agency.format;
      steps.push({
        kind: 'feed',
        source: agency.name,
        format: agency.format,
        fileName: `${agency.name}-${DateTime.fromMillis(at, { zone: 'Europe/Luxembourg' }).toFormat('yyyy-MM-dd-HHmm')}.${ext}`,
        at: new Date(at),
        bytes: renderFeed(agency, items, at),
      });
    }
  }
  const natives = bySource.get(NATIVE_SOURCE) ?? [];
  for (const at of deliveryTimes(NATIVE_SOURCE, now)) {
    steps.push({ kind: 'native', source: NATIVE_SOURCE, format: 'native', at: new Date(at), posts: nativePostsAt(natives, at) });
  }
  steps.sort((a, b) => a.at.getTime() - b.at.getTime() || (a.source < b.source ? -1 : 1));

  return {
    sources: [
      ...AGENCIES.map(({ name, display_name, format }) => ({ name, display_name, format })),
      { name: NATIVE_SOURCE, display_name: NATIVE.display_name, format: 'native' as const },
    ],
    steps,
    market,
  };
}

function nativePostsAt(copies: { p: DemoProperty; c: Copy }[], at: number): DemoNativePost[] {
  const posts: DemoNativePost[] = [];
  for (const { p, c } of copies) {
    if (c.listedAt > at) continue;
    const gone = p.removedAt !== null && p.removedAt <= at;
    const r = new Rng(c.style);
    const email = `${r.pick(FIRST_NAMES)}.${r.pick(LAST_NAMES)}${r.chance(0.4) ? r.int(1, 99) : ''}@${r.pick(MAIL_DOMAINS)}`;
    const changes = [c.listedAt, ...(p.priceChangedAt !== null && p.priceChangedAt <= at ? [p.priceChangedAt] : []), ...(gone ? [p.removedAt!] : [])];
    posts.push({
      id: c.externalId,
      account_email: email,
      title: c.title,
      price_eur: copyPrice(p, c, at),
      area_m2: c.area,
      rooms: c.rooms === 'none' ? null : p.rooms,
      commune_text: c.place.town!,
      lat: c.coords?.lat ?? null,
      lng: c.coords?.lng ?? null,
      listing_type: p.type,
      accepts_students: p.students,
      images: imageUrls(c),
      status: gone ? 'withdrawn' : 'published',
      created_at: new Date(c.listedAt),
      updated_at: new Date(Math.max(...changes)),
    });
  }
  return posts;
}
