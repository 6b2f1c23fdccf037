import { Tokenizer, TokenParser, TokenType } from '@streamparser/json';
import { FeedParseError, MAX_DEPTH, MAX_RECORD_VALUES } from '../errors.js';
import type { FeedEvent, ParsedFeed, RawRecord, Reject } from '../types.js';
import { show } from '../values.js';
import { assertFieldSizes, cleanExternalId, collectFeed, NOT_IMAGE_FILE, offerForDone, offerType, SizeGuard, str, TextPosition } from './common.js';
import { saysDone, titleSaysDone } from './deal-done.js';
import { notAHome, titleNotAHome } from './property-type.js';

type Obj = Record<string, unknown>;

// The statuses of a listing on offer (CRMs say it their own way); the GONE ones, and any that
// says the deal is done (saysDone: `sold STC`, `let agreed`), mean the listing is no longer on
// offer (under offer, an option taken: reserved; past its date, archived, taken off the market;
// not yet on it: a draft, coming soon). Written with '_', '-' or spaces alike. A status this
// does not know is a rejected record, whose listing stays as it was.
const AVAILABLE = new Set([
  'available', 'active', 'published', 'online', 'live', 'open', 'current', 'on market', 'for rent', 'for sale', 'to let', 'new',
  'price reduced', 'reduced', 'price changed', 'updated', 'available now', 'disponible', 'verfugbar', 'verfuegbar', 'frei',
  // An outside probe of stop 49: French and German words, and a listing on offer for a later date.
  'actif', 'active listing', 'en ligne', 'publie', 'publiee', 'en vente', 'en location', 'a louer', 'a vendre', 'libre', 'aktiv',
  'veroffentlicht', 'available soon', 'available from', 'disponible prochainement', 'bientot disponible',
  // An outside probe of stop 50: a home empty and ready to let or sell, a listing listed.
  'vacant', 'ready', 'free', 'listed',
]);
// The statuses on offer that name the kind of offer.
const SALE_STATUSES = new Set(['for sale', 'en vente', 'a vendre']);
const RENT_STATUSES = new Set(['for rent', 'to let', 'en location', 'a louer']);
// "pending": a sale pending (an offer accepted), or a listing waiting to be published; not on offer either way.
const GONE = new Set([
  'reserved', 'let', 'sold', 'rented', 'withdrawn', 'inactive', 'under offer', 'option', 'expired', 'archived', 'off market',
  'unavailable', 'not available', 'closed', 'suspended', 'paused', 'hidden', 'draft', 'coming soon', 'unpublished', 'offline',
  'pending', 'sale pending', 'inactif', 'hors ligne', 'archive', 'archivee', 'retire', 'retiree',
]);

const NO_LISTINGS = `the JSON has no "listings" array within its first ${MAX_RECORD_VALUES.toLocaleString('en')} values; expected { "mode": ..., "listings": [...] }`;

const TOP_LEVEL: Partial<Record<TokenType, string>> = {
  [TokenType.LEFT_BRACKET]: 'an array',
  [TokenType.STRING]: 'string',
  [TokenType.NUMBER]: 'number',
  [TokenType.TRUE]: 'boolean',
  [TokenType.FALSE]: 'boolean',
  [TokenType.NULL]: 'null',
};

// The JSON is read as a stream of tokens (@streamparser/json): each element of "listings"
// is assembled on its own and handed over, then dropped; "mode" may come before or after
// the listings. Only the element being read is held.
export async function* readJsonFeed(text: AsyncIterable<string>): AsyncGenerator<FeedEvent> {
  const events: FeedEvent[] = [];
  const pos = new TextPosition();
  let piece = '';
  let pieceBytes = 0;
  let bytesBefore = 0;
  let lastRecord: string | null = null;
  const after = () => (lastRecord ? ` (after ${lastRecord})` : ' (before the first listing)');
  const where = () => (lastRecord ? `the listing after ${lastRecord}` : 'the first listing');
  const guard = new SizeGuard('"', where);

  // Line and column of a byte offset of the stream, when it falls in the piece being read.
  const at = (offset: number) => {
    const inPiece = Math.min(Math.max(offset - bytesBefore, 0), pieceBytes);
    const p = pos.within(piece, Buffer.from(piece).subarray(0, inPiece).toString().length);
    return `line ${p.line}, column ${p.column}`;
  };
  let lastOffset = 0;
  const invalid = (what: string, offset = lastOffset) => new FeedParseError(`the file is not valid JSON: ${what} at ${at(offset)}${after()}`);

  const tokenizer = new Tokenizer();
  const parser = new TokenParser({ paths: ['$.listings.*', '$.mode'], keepStack: false });
  let depth = 0;
  let first = true;
  let keyExpected = false;
  let key: string | null = null;
  let valueExpected = false;
  let listings = false;
  let ended = false;

  tokenizer.onToken = (t) => {
    lastOffset = t.offset;
    if (first) {
      first = false;
      if (t.token !== TokenType.LEFT_BRACE) {
        throw new FeedParseError(`the JSON is not an object (found ${TOP_LEVEL[t.token] ?? 'something else'}); expected { "mode": ..., "listings": [...] }`);
      }
    }
    if (ended) throw invalid('unexpected data after the end of the JSON document', t.offset);
    // The top-level object's keys and the kind of value each one starts.
    if (depth === 1) {
      if (valueExpected) {
        valueExpected = false;
        if (key === 'listings') {
          if (t.token !== TokenType.LEFT_BRACKET) throw new FeedParseError('the JSON has no "listings" array ("listings" is not an array)');
          listings = true;
        }
      } else if (keyExpected && t.token === TokenType.STRING) {
        key = t.value as string;
        keyExpected = false;
      } else if (t.token === TokenType.COLON) valueExpected = true;
      else if (t.token === TokenType.COMMA) keyExpected = true;
    }
    if (t.token === TokenType.LEFT_BRACE || t.token === TokenType.LEFT_BRACKET) {
      depth++;
      if (depth === 1) keyExpected = true;
      if (depth > MAX_DEPTH) throw new FeedParseError(`the JSON is nested more than ${MAX_DEPTH} levels deep at ${at(t.offset)}: the file is corrupt or not a feed`);
    } else if (t.token === TokenType.RIGHT_BRACE || t.token === TokenType.RIGHT_BRACKET) depth--;
    // Every key and value the parser builds counts (not the punctuation between them); before
    // "listings", a file of another shape is most likely (`{"properties": [...]}`).
    if (t.token !== TokenType.COLON && t.token !== TokenType.COMMA && t.token !== TokenType.RIGHT_BRACE && t.token !== TokenType.RIGHT_BRACKET) guard.counted(1, listings ? undefined : NO_LISTINGS);
    parser.write(t);
  };
  tokenizer.onError = (err) => {
    throw describe(err);
  };
  tokenizer.onEnd = () => {
    if (!parser.isEnded) parser.end();
  };
  parser.onError = (err) => {
    throw describe(err);
  };
  parser.onEnd = () => {
    ended = true;
  };
  parser.onValue = ({ value, key: k, stack }) => {
    if (stack.length === 1 && k === 'mode') {
      if (value === null) return;
      // "FULL", "Delta": any letter case.
      const mode = typeof value === 'string' ? value.trim().toLowerCase() : value;
      if (mode !== 'full' && mode !== 'delta') throw new FeedParseError(`"mode" must be "full" or "delta", not ${JSON.stringify(value).slice(0, 40)}`);
      events.push({ kind: 'mode', mode });
    } else if (stack.length === 2 && typeof k === 'number') {
      const position = `listings[${k}]`;
      events.push(toEvent(value, position));
      lastRecord = position;
      guard.recordDone();
    }
  };
  // The library's own words name its internal states; say where the text broke instead.
  function describe(err: Error): Error {
    if (err instanceof FeedParseError) return err;
    const m = /Unexpected "(.*?)" at chunk position "(\d+)"/.exec(err.message) ?? /Unexpected \w+ \((".*?"|[^)]*)\)/.exec(err.message);
    if (m && m[2] !== undefined) return invalid(`unexpected ${JSON.stringify(m[1])}`, bytesBefore + Number(m[2]));
    if (m) return invalid(`unexpected ${m[1]}`);
    if (/ended in the middle|ended in mid-parsing/i.test(err.message)) return truncated();
    return invalid('unexpected text');
  }
  const truncated = () => new FeedParseError(`the file is not valid JSON: it ends unexpectedly at ${at(bytesBefore + pieceBytes)}${after()}; the file may be truncated`);

  for await (const t of text) {
    guard.feed(t);
    piece = t;
    pieceBytes = Buffer.byteLength(t);
    tokenizer.write(t);
    bytesBefore += pieceBytes;
    pos.advance(t);
    piece = '';
    pieceBytes = 0;
    yield* events.splice(0);
  }
  tokenizer.end();
  yield* events.splice(0);
  if (!ended) throw truncated();
  if (!listings) throw new FeedParseError('the JSON has no "listings" array');
}

// The JSON feed of a whole file in memory (tests, tools).
export function parseJsonFeed(input: Buffer | string): Promise<ParsedFeed> {
  return collectFeed(readJsonFeed, input);
}

function toEvent(item: unknown, position: string): FeedEvent {
  assertFieldSizes(item, position);
  if (!isObj(item)) return { kind: 'reject', reject: { external_id: null, position, reason: 'the record is not an object' } };
  const record = toRecord(item, position);
  return 'reason' in record ? { kind: 'reject', reject: record } : { kind: 'record', record };
}

const PROPERTY_TYPE_KEYS = ['property_type', 'propertyType', 'type', 'category', 'kind', 'object_type'];
// The keys read, by groups of keys that say one thing (see documentedKeys).
const ITEM_KEYS = [
  ['ref', 'id'], ['status'], ['offer'], ['title'], PROPERTY_TYPE_KEYS, ['price'], ['charges_included', 'includes_charges'],
  ['surface_m2', 'area_m2', 'surface', 'area'], ['rooms'], ['bedrooms'], ['address'], ['geo'], ['media'], ['students'], ['published_at'], ['link'],
];
const PRICE_KEYS = [['amount', 'value', 'rent'], ['currency'], ['period'], ['charges_included', 'includes_charges']];
const RENT_KEYS = [['net', 'amount', 'value'], ['charges']];
// The place as towns and villages are named, and the quarter under the names mapping services and CRMs
// give it (`neighbourhood`, `suburb`, `Ortsteil`): read where the documented keys give
// none (the town where they give no place at all) (an outside probe of stop 50: `{"town": "Strassen"}`
// was refused as giving no place, and the quarter of `{"city": "Luxembourg", "neighbourhood": "Kirchberg"}` lost).
const TOWN_KEYS = ['municipality', 'town', 'village', 'ville', 'gemeinde', 'ort'];
// (Not `district`: in Luxembourg also the former administrative districts, Diekirch or Grevenmacher, or a
// canton; read as a quarter it moved records to another commune: the re-check of stop 50.)
const QUARTER_KEYS = ['quarter', 'neighbourhood', 'neighborhood', 'quartier', 'suburb', 'ortsteil', 'stadtteil'];
const ADDRESS_KEYS = [['commune', 'city', 'locality', 'quarter'], ['postcode', 'zip', 'zipcode', 'postal_code'], ['country'], TOWN_KEYS, QUARTER_KEYS.slice(1)];
const GEO_KEYS = [['lat', 'latitude', 'y'], ['lon', 'lng', 'long', 'longitude', 'x'], ['coordinates', 'position', 'location'], ['type'], ['geometry']];

// A key as it may be written: any letter case, with or without '_', '-' or spaces.
const looseKey = (k: string) => k.toLowerCase().replace(/[_\s-]/g, '');

// Keys written in another letter case or without their underscores (`Lat`, `LNG`, `PostalCode`,
// `PublishedAt`, as .NET CRMs write them: an outside probe of stop 50) read as the documented ones.
// For each group of keys that say one thing (`lat`, `latitude`), only when no key of the group is
// written as documented, so that a record read until now reads the same; two spellings of one key
// (`Lat` and `LAT`) are none.
function documentedKeys(o: Obj, groups: string[][]): Obj {
  const written = new Map<string, string[]>();
  for (const k of Object.keys(o)) written.set(looseKey(k), [...(written.get(looseKey(k)) ?? []), k]);
  const read: Obj = { ...o };
  for (const group of groups) {
    if (group.some((k) => Object.hasOwn(o, k))) continue;
    for (const k of group) {
      const found = written.get(looseKey(k));
      if (found?.length === 1) read[k] = o[found[0]];
    }
  }
  return read;
}

// The first of the keys that holds a text, a number or a boolean that is not blank.
const firstText = (o: Obj, keys: string[]) => keys.map((k) => str(o[k])).find((v) => v !== null && v.trim() !== '') ?? null;
const filled = (s: string | null) => (s !== null && s.trim() !== '' ? s : null);

function toRecord(given: Obj, position: string): RawRecord | Reject {
  const item = documentedKeys(given, ITEM_KEYS);
  const ref = item.ref ?? item.id;
  // A reference that is there but no text or number (["EX-805"], {}) is not "missing".
  if (ref !== undefined && ref !== null && typeof ref !== 'string' && typeof ref !== 'number') {
    return { external_id: null, position, reason: `ref ${show(ref)} is not a text or a number` };
  }
  const externalId = cleanExternalId(ref);
  const status = (str(item.status) ?? 'available').trim().toLowerCase().replace(/[\s_-]+/g, ' ');
  if (status === 'deleted') return { position, externalId, action: 'delete', listingType: null };
  const plain = status.normalize('NFKD').replace(/\p{M}+/gu, '');
  const offer = str(item.offer);
  const offerKind = offer === null ? null : offerType(offer);
  // A status says the listing's state, nothing else: any deal word withdraws it, whatever the kind of
  // offer (`sold` on a rent, as `Bail signé` on a sale: a record the CRM says is done is not on offer).
  // Read for the kind, a regression probe's wish of stop 49, its re-check found `Vendu` on a rent
  // rejected while `sold` withdrew it; an offer or a title, which also describe, are read for the kind.
  if (GONE.has(plain) || saysDone(status)) return { position, externalId, action: 'withdraw', listingType: null };
  if (!AVAILABLE.has(plain)) return { external_id: externalId, position, reason: `unknown status ${JSON.stringify(item.status).slice(0, 40)}` };
  // A status on offer that names the other kind (`à vendre` on a rent) contradicts the offer.
  const statusKind = SALE_STATUSES.has(plain) ? 'SALE' : RENT_STATUSES.has(plain) ? 'RENT' : null;
  if (statusKind && offerKind && (statusKind === 'SALE') !== (offerKind === 'SALE')) {
    return { external_id: externalId, position, reason: `status ${JSON.stringify(item.status).slice(0, 40)} contradicts offer ${show(offer)}` };
  }
  const title = Array.isArray(item.title) ? titleVersions(item.title) : item.title;
  // An offer or a title that says the deal is done (`"offer": "sold"`, `"title": "LOUÉ - …"`).
  if ((offer !== null && saysDone(...offerForDone(offer, offerKind))) || titleSaysDone(title, offerKind)) return { position, externalId, action: 'withdraw', listingType: null };
  // The kind of property, where a CRM states it (not in the documented format): an office, a
  // parking space or a plot is no listing of this feed (an outside probe of stop 47: imported
  // as homes, and visible to every tier).
  const kind = firstText(item, PROPERTY_TYPE_KEYS);
  const typeReason = kind === null ? titleNotAHome(title) : notAHome(kind) ? `property type ${show(kind.trim())} is not a home` : null;
  const listingType = offer && !typeReason ? offerKind : null;
  const price = item.price;
  const priceObj = isObj(price) ? documentedKeys(price, PRICE_KEYS) : null;
  if (priceObj && isObj(priceObj.rent)) priceObj.rent = documentedKeys(priceObj.rent, RENT_KEYS);
  const address = isObj(item.address) ? documentedKeys(item.address, ADDRESS_KEYS) : {};
  // An address as one line ("12 rue de la Poste, L-4410 Belvaux"): read as a CSV's Localité is
  // (an outside probe: it was ignored, and without coordinates the record was refused as
  // giving no place).
  const addressLine = typeof item.address === 'string' ? item.address : null;
  const { lat, lng } = coordinates(item.geo);
  const town = str(address.commune) ?? str(address.city) ?? str(address.locality) ?? addressLine;
  const quarter = str(address.commune) || str(address.city) ? str(address.locality) : str(address.quarter);
  // A place named under the documented keys, else the town under another key.
  const named = filled(town) ?? filled(quarter);
  return {
    position,
    externalId,
    action: 'upsert',
    listingType,
    typeText: offer,
    typeReason,
    title,
    price: priceObj ? priceAmount(priceObj) : price,
    currency: priceObj ? str(priceObj.currency) : null,
    pricePeriod: priceObj ? str(priceObj.period) : null,
    chargesIncluded: chargesIncluded(priceObj, item),
    charges: priceObj && isObj(priceObj.rent) && priceObj.rent.net !== undefined && priceObj.rent.net !== null ? priceObj.rent.charges : undefined,
    area: item.surface_m2 ?? item.area_m2 ?? squareMetres(item.surface) ?? squareMetres(item.area),
    rooms: item.rooms,
    bedrooms: item.bedrooms,
    town: named !== null ? town : (firstText(address, TOWN_KEYS) ?? town),
    quarter: filled(quarter) ?? firstText(address, QUARTER_KEYS) ?? quarter,
    postcode: str(address.postcode) ?? str(address.zip) ?? str(address.zipcode) ?? str(address.postal_code),
    country: str(address.country),
    lat,
    lng,
    images: photos(item.media),
    students: item.students,
    date: item.published_at,
    dateKind: 'created',
    sourceUrl: str(item.link),
  };
}

// The CRM's words, put in those the normalizer reads: what it cannot place is passed on as
// given, for it to reject with the text quoted.

// The amount of a price object: "amount", or "value", or the rent without charges of
// { "rent": { "net": 1700, "charges": 200 } }.
function priceAmount(p: Obj): unknown {
  const rent = isObj(p.rent) ? p.rent : null;
  return p.amount ?? p.value ?? (rent ? (rent.net ?? rent.amount ?? rent.value) : undefined);
}

// Whether the rent includes its charges, where a CRM says so: { "rent": { "net": 1700 } } is
// without them; "charges_included" (or "includes_charges") true or false, in the price object
// or the listing.
function chargesIncluded(p: Obj | null, item: Obj): boolean | null {
  if (p && isObj(p.rent) && p.rent.net !== undefined && p.rent.net !== null) return false;
  for (const o of [p, item]) {
    const said = o?.charges_included ?? o?.includes_charges;
    if (typeof said === 'boolean') return said;
  }
  return null;
}

// An area under another name: a figure, or { "value": 85, "unit": "m2" } (square metres only).
function squareMetres(v: unknown): unknown {
  if (typeof v === 'number' || typeof v === 'string') return v;
  if (!isObj(v)) return undefined;
  const unit = str(v.unit)?.trim().toLowerCase() ?? 'm2';
  return ['m2', 'm²', 'sqm', 'qm'].includes(unit) ? v.value : `${str(v.value) ?? ''} ${unit}`;
}

// A title as a list of language versions, [{ "lang": "fr", "text": "…" }] (or "language",
// "value"): the object of versions the normalizer picks from (en, else fr, else de, else any).
function titleVersions(list: unknown[]): Obj {
  // No prototype: a language written "__proto__" is just a key.
  const versions = Object.create(null) as Obj;
  list.forEach((v, i) => {
    const lang = isObj(v) ? (str(v.lang) ?? str(v.language)) : null;
    const text = isObj(v) ? (v.text ?? v.value) : v;
    // The first version of a language that has a text wins; one without a language is "any".
    const key = lang?.trim() || `#${i}`;
    if (typeof text === 'string' && text.trim() !== '' && !(key in versions)) versions[key] = text;
  });
  return versions;
}

// lat and lon (or lng, long, latitude, longitude), or a GeoJSON Point ([lng, lat]), bare or
// as a Feature's geometry.
function coordinates(v: unknown, depth = 0): { lat: unknown; lng: unknown } {
  // A bare pair is GeoJSON's order, [lng, lat] (a pair the other way round is put right
  // later, as swapped coordinates are).
  if (Array.isArray(v) && v.length === 2) return { lat: v[1], lng: v[0] };
  // A pair written as text, latitude first as people write it ("49.62,6.07", "49.62 6.07"),
  // and the pair nested one level down ({ "coordinates": { "lat", "lon" } }): an outside probe
  // of stop 46 found both dropped without a word.
  if (typeof v === 'string') {
    const pair = /^\s*([+-]?\d{1,3}\.\d+)\s*[,; ]\s*([+-]?\d{1,3}\.\d+)\s*$/.exec(v);
    return pair ? { lat: pair[1], lng: pair[2] } : { lat: null, lng: null };
  }
  const geo = isObj(v) ? documentedKeys(v, GEO_KEYS) : {};
  const nested = geo.coordinates ?? geo.position ?? geo.location;
  if (depth === 0 && isObj(nested) && geo.lat === undefined && geo.latitude === undefined) return coordinates(nested, 1);
  const point = String(geo.type).toLowerCase() === 'feature' && isObj(geo.geometry) ? documentedKeys(geo.geometry, GEO_KEYS) : geo;
  if (String(point.type).toLowerCase() === 'point' && Array.isArray(point.coordinates)) {
    return { lat: point.coordinates[1], lng: point.coordinates[0] };
  }
  // x and y: a plane's axes, x the longitude (an outside probe of stop 50).
  const lat = geo.lat ?? geo.latitude ?? geo.y;
  const lng = geo.lon ?? geo.lng ?? geo.long ?? geo.longitude ?? geo.x;
  // A pair under `coordinates` without a GeoJSON type (`{"coordinates": [49.61, 6.13]}`): a bare pair, in
  // GeoJSON's order and put right later if swapped (an outside probe of stop 50 found it dropped).
  if (depth === 0 && Array.isArray(nested) && lat === undefined && lng === undefined) return coordinates(nested, 1);
  return { lat, lng };
}

// The media that are photographs: "photo", "image", "picture" or a MIME type image/*
// (not videos, floor plans or documents); a bare string is a photo's URL.
function photos(media: unknown): string[] {
  const images: string[] = [];
  if (!Array.isArray(media)) return images;
  for (const m of media) {
    if (typeof m === 'string') images.push(m);
    else if (isObj(m) && isPhotoType(String(m.type ?? 'photo'))) {
      const url = str(m.url);
      // Untyped media: a video or a document by its file name is no photo.
      if (url && (m.type !== undefined || !NOT_IMAGE_FILE.test(url))) images.push(url);
    }
  }
  return images;
}

function isPhotoType(type: string): boolean {
  const t = type.trim().toLowerCase();
  return ['photo', 'image', 'picture'].includes(t) || t.startsWith('image/');
}

function isObj(v: unknown): v is Obj {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}
