import type { ListingType } from '../../domain/listing.js';
import { FeedParseError } from '../errors.js';
import { cleanExternalId } from '../normalize.js';
import type { FeedMode, ParsedFeed, RawRecord, Reject } from '../types.js';
import { assertFieldSizes, decodeFeed, str } from './common.js';

type Obj = Record<string, unknown>;

const OFFERS: Record<string, ListingType> = { rent: 'RENT', sale: 'SALE', flatshare: 'FLATSHARE', sublet: 'SUBLET' };
// Only `available` is on offer; the others mean the listing is gone.
const GONE = new Set(['reserved', 'let', 'sold', 'rented', 'withdrawn', 'inactive']);

export function parseJsonFeed(input: Buffer | string): ParsedFeed {
  const text = decodeFeed(input);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new FeedParseError(`the file is not valid JSON: ${(e as Error).message}`);
  }
  if (!isObj(doc)) throw new FeedParseError(`the JSON is not an object (found ${Array.isArray(doc) ? 'an array' : typeof doc}); expected { "mode": ..., "listings": [...] }`);
  if (!Array.isArray(doc.listings)) throw new FeedParseError('the JSON has no "listings" array');
  let mode: FeedMode | null = null;
  if (doc.mode !== undefined && doc.mode !== null) {
    if (doc.mode !== 'full' && doc.mode !== 'delta') throw new FeedParseError(`"mode" must be "full" or "delta", not ${JSON.stringify(doc.mode).slice(0, 40)}`);
    mode = doc.mode;
  }

  const records: RawRecord[] = [];
  const rejects: Reject[] = [];
  doc.listings.forEach((item: unknown, i: number) => {
    const position = `listings[${i}]`;
    assertFieldSizes(item, position);
    if (!isObj(item)) {
      rejects.push({ external_id: null, position, reason: 'the record is not an object' });
      return;
    }
    const externalId = cleanExternalId(item.ref);
    const status = (str(item.status) ?? 'available').trim().toLowerCase();
    if (status === 'deleted') {
      records.push({ position, externalId, action: 'delete', listingType: null });
      return;
    }
    if (GONE.has(status)) {
      records.push({ position, externalId, action: 'withdraw', listingType: null });
      return;
    }
    if (status !== 'available') {
      rejects.push({ external_id: externalId, position, reason: `unknown status ${JSON.stringify(item.status).slice(0, 40)}` });
      return;
    }
    const offer = str(item.offer);
    const price = item.price;
    const priceObj = isObj(price) ? price : null;
    const address = isObj(item.address) ? item.address : {};
    const geo = isObj(item.geo) ? item.geo : {};
    const images: string[] = [];
    if (Array.isArray(item.media)) {
      for (const m of item.media) {
        if (typeof m === 'string') images.push(m);
        else if (isObj(m) && ['photo', 'image', 'picture'].includes(String(m.type ?? 'photo').toLowerCase())) {
          const url = str(m.url);
          if (url) images.push(url);
        }
      }
    }
    records.push({
      position,
      externalId,
      action: 'upsert',
      listingType: offer ? (OFFERS[offer.trim().toLowerCase()] ?? null) : null,
      typeText: offer,
      title: item.title,
      price: priceObj ? priceObj.amount : price,
      currency: priceObj ? str(priceObj.currency) : null,
      pricePeriod: priceObj ? str(priceObj.period) : null,
      area: item.surface_m2 ?? item.area_m2,
      rooms: item.rooms,
      bedrooms: item.bedrooms,
      town: str(address.commune) ?? str(address.city) ?? str(address.locality),
      quarter: str(address.commune) || str(address.city) ? str(address.locality) : str(address.quarter),
      postcode: str(address.postcode),
      country: str(address.country),
      lat: geo.lat,
      lng: geo.lon ?? geo.lng,
      images,
      students: item.students,
      date: item.published_at,
      dateKind: 'created',
      sourceUrl: str(item.link),
    });
  });
  return { mode, records, rejects };
}

function isObj(v: unknown): v is Obj {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}
