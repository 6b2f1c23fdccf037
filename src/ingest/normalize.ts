import { createHash } from 'node:crypto';
import { decodeHTML } from 'entities';
import type { ListingIdFn } from '../domain/listing.js';
import { tokens, type Gazetteer } from '../reference/gazetteer.js';
import { CONTROL_CHARACTERS, INVISIBLE_FORMATTING } from '../lib/text.js';
import { RULE } from './dedup/tolerances.js';
import { MAX_EXTERNAL_ID } from './errors.js';
import { nearLuxembourg } from './abroad.js';
import { fixCoordinates, resolvePlace } from './place.js';
import { offerKindsInConflict, offerNotAHome } from './adapters/common.js';
import type { NormalizedListing, RawRecord } from './types.js';
import { parseFeedDate } from './feed-dates.js';
import { parseCoordinate } from './coordinates.js';
import { webAddress } from './links.js';
import { parseCount } from './counts.js';
import { floorOf } from './floor.js';
import { periodOfField } from './periods.js';
import { parseArea, parseBool, parsePrice, show } from './values.js';

export const MAX_TITLE_CHARS = 300;
export const MAX_IMAGES = 100;
const MAX_PRICE_EUR = 100_000_000;
// Under these a price is a placeholder ("1 €" for a price on request) or a slip: no month's
// rent of a dwelling, no sale.
const MIN_RENT_EUR = 50;
const MIN_SALE_EUR = 1_000;
// A whole home (a rent or a sale) has at least this much area a room: under it, the count is
// not kept (46 rooms on 62 m2: a slip; a room let as a rent with the flat's 4 rooms on 14 m2).
// The listing is kept, its rooms unknown: a record refused for it would be lost (the regression
// probe of stop 44: rooms let as rents, "Chambre" in the kind of property, were refused). A
// flatshare's or a sublet's area may be the room's alone, beside the flat's rooms: kept.
const MIN_M2_A_ROOM = 5;

export type NormalizeResult = { ok: true; listing: NormalizedListing } | { ok: false; reason: string };

export interface NormalizeContext {
  source: string;
  gazetteer: Gazetteer;
  now: Date;
  // The service's keyed id function (src/repositories/listing-ids.ts), loaded once per import.
  listingId: ListingIdFn;
}

// Title language preference: English, then French, then German, then whatever is there.
const TITLE_LANGS = ['en', 'fr', 'de'];

// A title's text; one that a CRM wrote as a JSON number (a flat named by its number) too.
const titleText = (v: unknown): string | null => cleanText(typeof v === 'number' && Number.isFinite(v) ? String(v) : v);

export function pickTitle(v: unknown): string | null {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const obj = v as Record<string, unknown>;
    const keys = Object.keys(obj);
    const byLang = (lang: string) => keys.find((k) => k.toLowerCase() === lang || k.toLowerCase().startsWith(`${lang}-`) || k.toLowerCase().startsWith(`${lang}_`));
    const key = TITLE_LANGS.map(byLang).find((k) => k !== undefined && titleText(obj[k]) !== null) ?? keys.find((k) => titleText(obj[k]) !== null);
    return key === undefined ? null : titleText(obj[key]);
  }
  return titleText(v);
}

// An HTML tag, as agency software writes into titles (<b>, <br/>, <span class="x">), and as
// HTML reads one: a slash after the name separates attributes as a space does
// (`<svg/onload=…>`, `<img/src=x/onerror=…>`: an outside probe found them kept). Text after a
// `<` that no `>` closes is kept as written ("Loyer <a discuter", "A<B": a regression probe).
const HTML_TAG = /<\/?[a-z][a-z0-9]*(?:[\s/][^<>]*)?>/gi;
const CODE_ELEMENT = /<(script|style)\b[^<>]*>[\s\S]*?<\/\1\s*>/gi;

function cleanText(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  // Titles typed in an HTML editor come with tags and entities (OpenImmo's CDATA, a CMS's
  // export): the tags are dropped and the entities read (`r&eacute;nov&eacute;` is rénové;
  // entities, a library, knows HTML's). Control characters and runs of white space come
  // from copy-paste in agency software.
  // A script or style element is code, not words: dropped whole. Tags that entities spelled
  // (`&lt;b&gt;`) are dropped once read, as an XML feed's are (its parser reads them first).
  const s = decodeHTML(v.replace(CODE_ELEMENT, ' ').replace(HTML_TAG, ' '))
    .replace(CODE_ELEMENT, ' ')
    .replace(HTML_TAG, ' ')
    .replace(CONTROL_CHARACTERS, ' ')
    .replace(INVISIBLE_FORMATTING, '')
    .replace(/\s+/g, ' ')
    .trim();
  if (s === '') return null;
  if (s.length <= MAX_TITLE_CHARS) return s;
  return s.slice(0, MAX_TITLE_CHARS - 1).trimEnd() + '…';
}

// A feed's period field (periods.ts: "month", "per_month", "Monat", "pcm", "w"). A sale price is
// paid once: for a sale, "once", "total", "one-off" say there is no period ('none'). Undefined: a
// word this does not know.
const ONCE = new Set(['once', 'total', 'one off', 'oneoff', 'one time', 'single']);

function feedPeriod(text: string, type: string): 'month' | 'week' | 'year' | 'none' | undefined {
  if (type === 'SALE' && ONCE.has(text.trim().toLowerCase().replace(/[\s_-]+/g, ' '))) return 'none';
  return periodOfField(text);
}

// A feed's currency field: a code, or the euro written out ("Euro", "euros", "€").
function feedCurrency(text: string): string {
  const t = text.trim().toUpperCase();
  return /^(EUR|EUROS?|€)$/.test(t) ? 'EUR' : t;
}

// Luxembourg as feeds write the country: its names in the country's languages, with or
// without "Grand-Duché de", and the codes LU, LUX and L.
const LUXEMBOURG = /^(grand duche de |grand duchy of |grossherzogtum )?(luxembourg|luxemburg|letzebuerg)$|^(l|lu|lux)$/;
const isLuxembourg = (text: string) => LUXEMBOURG.test(tokens(text).join(' '));

export function normalizeRecord(r: RawRecord, ctx: NormalizeContext): NormalizeResult {
  const fail = (reason: string): NormalizeResult => ({ ok: false, reason });
  const externalId = r.externalId;
  if (!externalId) return fail('no external id (the agency reference is missing)');
  if (externalId.length > MAX_EXTERNAL_ID) return fail(`external id ${show(externalId)} is longer than ${MAX_EXTERNAL_ID} characters`);

  if (!r.listingType) {
    if (r.typeReason) return fail(r.typeReason);
    if (!r.typeText) return fail('the kind of offer (rent, sale, flatshare, sublet) is missing');
    // An office, a garage, a plot, a holiday let, a business or a deal already done.
    if (offerNotAHome(r.typeText)) return fail(`the offer ${show(r.typeText)} is not a home to rent or buy`);
    const two = offerKindsInConflict(r.typeText);
    if (two) return fail(`the offer ${show(r.typeText)} names kinds of offer that exclude each other (${two.map((k) => k.toLowerCase()).join(', ')}): which one is it?`);
    return fail(`unknown kind of offer ${show(r.typeText)}`);
  }

  const title = pickTitle(r.title);
  if (!title) return fail('no title');

  const price = parsePrice(r.price);
  if (!price.ok) return fail(price.reason);
  if (!price.value) return fail('no price');
  const explicit = r.currency ? feedCurrency(r.currency) : null;
  const currency = explicit || price.value.currency || 'EUR';
  if (explicit && price.value.currency && explicit !== price.value.currency) {
    return fail(`price ${show(r.price)} contradicts currency ${explicit}`);
  }
  if (currency !== 'EUR') return fail(`price in ${currency}: only EUR is accepted`);
  let amount = price.value.amount;
  // The period the feed gives, else the one written after the price, else a month.
  const given = r.pricePeriod ? feedPeriod(r.pricePeriod, r.listingType) : 'none';
  if (!given) return fail(`unknown price period ${show(r.pricePeriod)} (expected month or week)`);
  // A year is refused saying so, as a yearly figure written after a price is (an outside probe of stop 49).
  if (given === 'year') {
    return fail(`price period ${show(r.pricePeriod)} is a year: ${r.listingType === 'SALE' ? "a sale's price is given once" : 'a rent is read per month or per week'}`);
  }
  if (given !== 'none' && price.value.period && given !== price.value.period) {
    return fail(`price ${show(r.price)} contradicts period ${show(r.pricePeriod)}`);
  }
  const period = given !== 'none' ? given : (price.value.period ?? 'month');
  // A sale's asking price is paid once: a weekly one is a mistake, not a price to convert.
  if (period === 'week' && r.listingType === 'SALE') return fail(`a sale's price ${show(r.price)} is given per week`);
  if (period === 'week') amount = (amount * 52) / 12;
  const priceEur = Math.round(amount);
  if (priceEur <= 0) return fail(`price ${show(r.price)} is not positive`);
  if (priceEur > MAX_PRICE_EUR) return fail(`price ${show(r.price)} is not plausible`);
  const [floor, what] = r.listingType === 'SALE' ? [MIN_SALE_EUR, 'a sale'] : [MIN_RENT_EUR, "a month's rent"];
  if (priceEur < floor) return fail(`price ${show(r.price)} is not plausible for ${what} (under ${floor} EUR)`);

  const area = parseArea(r.area);
  if (!area.ok) return fail(area.reason);
  const roomsP = parseCount(r.rooms, 'rooms');
  if (!roomsP.ok) return fail(roomsP.reason);
  const bedroomsP = parseCount(r.bedrooms, 'bedrooms');
  if (!bedroomsP.ok) return fail(bedroomsP.reason);
  // A dwelling has at least one room: 0 rooms is the field left at its default, not a count,
  // and reads as not stated. A studio with 0 bedrooms has 1 room.
  const statedRooms = roomsP.value === 0 ? null : roomsP.value;
  const counted = statedRooms ?? (bedroomsP.value !== null ? bedroomsP.value + 1 : null);
  const wholeHome = r.listingType === 'RENT' || r.listingType === 'SALE';
  const rooms = counted !== null && counted > 1 && area.value !== null && area.value / counted < MIN_M2_A_ROOM && wholeHome ? null : counted;

  if (r.country && !isLuxembourg(r.country)) {
    return fail(`country ${show(r.country)} is not Luxembourg`);
  }
  const [lat, lng] = [parseCoordinate(r.lat), parseCoordinate(r.lng)];
  const coords = fixCoordinates(lat, lng);
  const dropped = coords === null && lat !== null && lng !== null && (lat !== 0 || lng !== 0) ? { lat, lng } : null;
  const place = resolvePlace(ctx.gazetteer, { town: r.town, quarter: r.quarter, postcode: r.postcode, coords, given: coords ? null : nearLuxembourg(lat, lng), dropped });
  if (!place.ok) return fail(place.reason);

  const students = parseBool(r.students, 'students');
  if (!students.ok) return fail(students.reason);

  const date = parseFeedDate(r.date);
  if (!date.ok) return fail(date.reason);

  const images: string[] = [];
  for (const u of r.images ?? []) {
    const url = webAddress(u);
    if (url !== null && !images.includes(url)) images.push(url);
    if (images.length === MAX_IMAGES) break;
  }
  const sourceUrl = webAddress(r.sourceUrl);

  const listing: Omit<NormalizedListing, 'content_hash' | 'postcode' | 'charges_included' | 'charges_eur' | 'floor'> = {
    id: ctx.listingId(ctx.source, externalId),
    source: ctx.source,
    external_id: externalId,
    title,
    price_eur: priceEur,
    area_m2: area.value,
    rooms,
    commune: place.commune,
    locality: place.locality,
    lat: place.coords?.lat ?? null,
    lng: place.coords?.lng ?? null,
    listing_type: r.listingType,
    accepts_students: students.value ?? false,
    images,
    source_url: sourceUrl,
    created_at: date.value,
    created_at_kind: date.value ? (r.dateKind ?? 'created') : null,
    stated_at: date.value,
  };
  // The hash takes the date as the feed gives it; only the stored value is capped, so that
  // the hash does not move with the clock. A creation date in the future would sit on top
  // of every newest-first list for ever.
  const hash = contentHash(listing);
  if (date.value && date.value > ctx.now) listing.created_at = ctx.now;
  // The price text's own note first ("1 850 € CC"), else what the format's structure says.
  const charges = r.listingType === 'SALE' ? null : (price.value.chargesIncluded ?? r.chargesIncluded ?? null);
  // The charges stated beside a rent without them: the price text's own, else the format's.
  // Over half the rent (RULE.statedChargesMax), they are not a flat's charges (a slip, or another figure).
  const stated = charges === false && period === 'month' ? (price.value.charges ?? chargesFigure(r.charges)) : null;
  const chargesEur = stated !== null && stated > 0 && stated <= priceEur * RULE.statedChargesMax ? Math.round(stated) : null;
  return { ok: true, listing: { ...listing, postcode: place.postcode, charges_included: charges, charges_eur: chargesEur, floor: floorOf(title), content_hash: hash } };
}

// A format's charges field: a figure, or a text read as a price ("200 €").
function chargesFigure(v: unknown): number | null {
  if (v === undefined || v === null) return null;
  const p = parsePrice(v);
  return p.ok && p.value !== null && p.value.period !== 'week' && (p.value.currency === null || p.value.currency === 'EUR') ? p.value.amount : null;
}

// Everything that, when it changes, makes the listing "updated". A last-change date
// (openimmo stand_vom) is not content: it moves on every edit without saying what changed.
export function contentHash(l: Omit<NormalizedListing, 'content_hash' | 'postcode' | 'charges_included' | 'charges_eur' | 'floor' | 'stated_at'>): string {
  const content = [
    l.title, l.price_eur, l.area_m2, l.rooms, l.commune, l.locality, l.lat, l.lng, l.listing_type,
    l.accepts_students, l.images, l.source_url,
    l.created_at_kind === 'created' && l.created_at ? l.created_at.toISOString() : null,
  ];
  return createHash('sha256').update(JSON.stringify(content)).digest('base64url').slice(0, 32);
}

