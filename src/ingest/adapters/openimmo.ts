import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { ListingType } from '../../domain/listing.js';
import { FeedParseError } from '../errors.js';
import { cleanExternalId } from '../normalize.js';
import type { FeedMode, ParsedFeed, RawRecord } from '../types.js';
import { assertFieldSizes, decodeFeed, lineIndex, str } from './common.js';

type Node = Record<string, unknown>;

const ARRAYS = new Set(['anbieter', 'immobilie', 'anhang', 'user_defined_simplefield']);
// Attachment groups that are photographs; GRUNDRISS (floor plan), FILM, DOKUMENTE... are not.
const PHOTO_GROUPS = new Set(['BILD', 'TITELBILD', 'INNENANSICHTEN', 'AUSSENANSICHTEN']);
const NOT_IMAGE_FILE = /\.(pdf|mp4|mov|avi|webm|mkv|doc|docx|txt|zip)(\?|#|$)/i;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  captureMetaData: true,
  // Entity expansion stays on (titles contain &amp;) within the library's limits, which
  // stop "billion laughs" documents.
  processEntities: true,
  isArray: (name) => ARRAYS.has(name),
});
const META = XMLParser.getMetaDataSymbol();

export function parseOpenImmo(input: Buffer | string): ParsedFeed {
  const text = decodeFeed(input);
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    const { line, col, msg } = valid.err;
    throw new FeedParseError(`the XML is not well-formed (line ${line}, column ${col}: ${msg}); the file may be truncated`);
  }
  let doc: Node;
  try {
    doc = parser.parse(text) as Node;
  } catch (e) {
    throw new FeedParseError(`the XML cannot be read: ${(e as Error).message}`);
  }
  const root = obj(doc.openimmo);
  if (!root) {
    const first = Object.keys(doc).find((k) => !k.startsWith('?'));
    throw new FeedParseError(`not an OpenImmo file: the root element is <${first ?? '?'}>, expected <openimmo>`);
  }
  const umfang = str(obj(root.uebertragung)?.['@_umfang'])?.toUpperCase();
  const mode: FeedMode | null = umfang === 'TEIL' ? 'delta' : umfang === 'VOLL' ? 'full' : null;

  const lineOf = lineIndex(text);
  const records: RawRecord[] = [];
  let n = 0;
  for (const anbieter of arr(root.anbieter)) {
    for (const raw of arr(obj(anbieter)?.immobilie)) {
      n++;
      const node = obj(raw) ?? {};
      const start = (raw as Record<symbol, { startIndex?: number }>)?.[META as unknown as symbol]?.startIndex;
      const position = start !== undefined ? `immobilie ${n} (line ${lineOf(start)})` : `immobilie ${n}`;
      assertFieldSizes(node, position);
      records.push(toRecord(node, position));
    }
  }
  return { mode, records, rejects: [] };
}

function toRecord(node: Node, position: string): RawRecord {
  const techn = obj(node.verwaltung_techn);
  const externalId = cleanExternalId(text(techn?.objektnr_extern));
  const aktion = str(obj(techn?.aktion)?.['@_aktionart'])?.toUpperCase();
  if (aktion === 'DELETE') return { position, externalId, action: 'delete', listingType: null };

  const kat = obj(node.objektkategorie);
  const verm = obj(kat?.vermarktungsart);
  const fields = new Map<string, string>();
  for (const f of arr(obj(node.verwaltung_objekt)?.user_defined_simplefield)) {
    const name = str(obj(f)?.['@_feldname']);
    if (name) fields.set(name.toLowerCase(), text(f) ?? '');
  }
  const isZimmer = obj(kat?.objektart)?.zimmer !== undefined;
  const sale = yes(verm?.['@_KAUF']);
  const rent = yes(verm?.['@_MIETE_PACHT']);
  let listingType: ListingType | null = null;
  if (isZimmer) listingType = 'FLATSHARE';
  else if (yes(fields.get('untervermietung'))) listingType = 'SUBLET';
  else if (sale) listingType = 'SALE';
  else if (rent) listingType = 'RENT';

  const preise = obj(node.preise);
  const price = listingType === 'SALE' ? text(preise?.kaufpreis) : (text(preise?.kaltmiete) ?? text(preise?.warmmiete));
  const flaechen = obj(node.flaechen);
  const geo = obj(node.geo);
  const koord = obj(geo?.geokoordinaten);
  const images: string[] = [];
  for (const a of arr(obj(node.anhaenge)?.anhang)) {
    const gruppe = str(obj(a)?.['@_gruppe'])?.toUpperCase();
    const pfad = text(obj(obj(a)?.daten)?.pfad);
    if (gruppe && PHOTO_GROUPS.has(gruppe) && pfad && !NOT_IMAGE_FILE.test(pfad)) images.push(pfad);
  }
  return {
    position,
    externalId,
    action: 'upsert',
    listingType,
    typeText: listingType ? null : 'neither MIETE_PACHT nor KAUF is set in vermarktungsart',
    title: text(obj(node.freitexte)?.objekttitel),
    price,
    currency: str(obj(preise?.waehrung)?.['@_iso_waehrung']),
    area: text(flaechen?.wohnflaeche),
    rooms: text(flaechen?.anzahl_zimmer),
    town: text(geo?.ort),
    quarter: text(geo?.regionaler_zusatz),
    postcode: text(geo?.plz),
    country: str(obj(geo?.land)?.['@_iso_land']),
    lat: str(koord?.['@_breitengrad']),
    lng: str(koord?.['@_laengengrad']),
    images,
    students: fields.has('studenten') ? fields.get('studenten') : null,
    date: text(techn?.stand_vom),
    dateKind: 'changed',
    sourceUrl: null,
  };
}

function obj(v: unknown): Node | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Node) : null;
}

function arr(v: unknown): unknown[] {
  if (v === undefined || v === null || v === '') return [];
  return Array.isArray(v) ? v : [v];
}

// An element's text, whether it came as a plain value or beside attributes.
function text(v: unknown): string | null {
  const s = str(v) ?? str(obj(v)?.['#text']);
  return s === null || s.trim() === '' ? null : s;
}

function yes(v: unknown): boolean {
  const s = str(v)?.trim().toLowerCase();
  return s === 'true' || s === '1';
}
