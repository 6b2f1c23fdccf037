import { SaxesParser } from 'saxes';
import type { ListingType } from '../../domain/listing.js';
import { FeedParseError, MAX_DEPTH } from '../errors.js';
import type { FeedEvent, ParsedFeed, RawRecord } from '../types.js';
import { parseDecimal } from '../values.js';
import { assertFieldSizes, cleanExternalId, collectFeed, NOT_IMAGE_FILE, SizeGuard, str, TextPosition } from './common.js';
import { titleSaysDone } from './deal-done.js';

// OpenImmo's kinds of property (objektart) that are not homes.
const NOT_HOME_ARTS = new Set([
  'buero_praxen', 'einzelhandel', 'gastgewerbe', 'grundstueck', 'parken', 'hallen_lager_prod', 'land_und_forstwirtschaft',
  'freizeitimmobilie_gewerblich',
  // An outside probe of stop 47: a multi-storey car park (sonstige: PARKHAUS, TANKSTELLE...)
  // and an investment building (as the CSV's "Immeuble de rapport") were imported as homes.
  'sonstige', 'zinshaus_renditeobjekt',
]);

type Node = Record<string, unknown>;

const ARRAYS = new Set(['anbieter', 'immobilie', 'anhang', 'user_defined_simplefield']);
// Attachment groups that are photographs; GRUNDRISS (floor plan), FILM, DOKUMENTE... are not.
const PHOTO_GROUPS = new Set(['BILD', 'TITELBILD', 'INNENANSICHTEN', 'AUSSENANSICHTEN']);

// The XML is read as a stream of SAX events (saxes, a strict well-formedness checker):
// each anbieter/immobilie element is built into a small tree of its own, made into a
// record and dropped; uebertragung/@umfang may come before or after the listings. Only the
// element being read is held. The tree has the shape of a usual XML-to-object mapping:
// attributes as '@_name', an element's text as a string (or '#text' beside attributes or
// children), repeated elements (and those of ARRAYS) as arrays.
export async function* readOpenImmo(text: AsyncIterable<string>): AsyncGenerator<FeedEvent> {
  const events: FeedEvent[] = [];
  const parser = new SaxesParser({ position: true });
  // Element names from the root down to the element being read.
  const path: string[] = [];
  // The immobilie being read: its frames, from the immobilie down to the open element.
  let frames: { name: string; node: Node; text: string }[] | null = null;
  let n = 0;
  let position = '';
  let lastRecord: string | null = null;
  const where = () => (frames ? position : `line ${parser.line}`);
  const guard = new SizeGuard('<', where);

  parser.on('opentag', (tag) => {
    // Elements are read by their local name: a file that writes the OpenImmo namespace with a
    // prefix (<oi:openimmo xmlns:oi="http://www.openimmo.de">) reads as one that does not.
    const name = tag.name.slice(tag.name.indexOf(':') + 1);
    if (path.length === 0 && name !== 'openimmo') throw new FeedParseError(`not an OpenImmo file: the root element is <${name.slice(0, 40)}>, expected <openimmo>`);
    path.push(name);
    if (path.length > MAX_DEPTH) throw new FeedParseError(`the XML is nested more than ${MAX_DEPTH} levels deep at line ${parser.line}: the file is corrupt or not a feed`);
    // No prototype: an element named __proto__ is just a key.
    const node: Node = Object.create(null) as Node;
    const attributes = Object.entries(tag.attributes);
    for (const [k, v] of attributes) node[`@_${k}`] = v;
    if (frames) frames.push({ name, node, text: '' });
    else if (path.length === 3 && name === 'immobilie' && path[1] === 'anbieter') {
      n++;
      position = `immobilie ${n} (line ${parser.line})`;
      frames = [{ name, node, text: '' }];
    } else if (path.length === 2 && name === 'uebertragung') {
      const umfang = str(node['@_umfang'])?.toUpperCase();
      if (umfang === 'TEIL' || umfang === 'VOLL') events.push({ kind: 'mode', mode: umfang === 'TEIL' ? 'delta' : 'full' });
    }
    // Only a record's elements are kept (until it closes): they count against its values.
    if (frames) guard.counted(1 + attributes.length);
    // An element closed in its opening tag (<zimmer/>) gets its closetag event at once.
  });
  const addText = (t: string) => {
    if (frames) frames[frames.length - 1].text += t;
  };
  parser.on('text', addText);
  parser.on('cdata', addText);
  parser.on('closetag', () => {
    path.pop();
    if (!frames) return;
    const frame = frames.pop()!;
    const value = finish(frame.node, frame.text);
    if (frames.length > 0) {
      attach(frames[frames.length - 1].node, frame.name, value);
      return;
    }
    frames = null;
    const node = obj(value) ?? {};
    assertFieldSizes(node, position);
    events.push({ kind: 'record', record: toRecord(node, position) });
    lastRecord = position;
    guard.recordDone();
  });
  parser.on('error', (err) => {
    // Entities that XML does not define without a DTD (&nbsp; &eacute;, common in titles
    // typed in HTML editors) are kept as written rather than refusing the file.
    if (/undefined entity/.test(err.message)) return;
    throw notWellFormed(err.message);
  });
  let ending = false;
  function notWellFormed(message: string): FeedParseError {
    // saxes says "line:column: what"; the position is said again below, in words.
    const what = message.replace(/^(?:[^:]*:)?\d+:\d+: /, '').replace(/\.$/, '');
    const at = `line ${parser.line}, column ${parser.column + 1}`;
    const context = frames ? `in ${position}` : lastRecord ? `after ${lastRecord}` : 'before the first immobilie';
    // A bare "&" before the error (a title "Maison & jardin"): the parser reads an entity
    // from it and may stop far later, or at the end as if the file were cut (an outside probe).
    const amp = bareAmpersand.line();
    const hint = amp !== null ? `; a bare "&" at line ${amp}, which XML does not allow (write &amp;), is the likely cause` : '';
    if (ending) return new FeedParseError(`the XML is not well-formed: it ends unexpectedly at ${at} (${what}, ${context})${hint || '; the file may be truncated'}`);
    return new FeedParseError(`the XML is not well-formed at ${at}: ${what} (${context})${hint}`);
  }
  const bareAmpersand = ampersandScanner();

  for await (const t of text) {
    guard.feed(t);
    bareAmpersand.scan(t, false);
    parser.write(t);
    yield* events.splice(0);
  }
  ending = true;
  bareAmpersand.scan('', true);
  parser.close();
  yield* events.splice(0);
}

// The line of the first "&" that starts no entity or character reference, outside CDATA and
// comments (where a bare "&" is allowed), read chunk by chunk: what may be cut at a chunk's end
// is looked at again with the next. Only a hint for an error.
function ampersandScanner() {
  const OPEN = /<!\[CDATA\[|<!--|&(?!(?:[A-Za-z_][\w.-]{0,40}|#\d{1,8}|#x[0-9A-Fa-f]{1,8});)/g;
  const KEEP = 50;
  let found: number | null = null;
  let inside: ']]>' | '-->' | null = null;
  let held = '';
  // Where the held text begins.
  const heldAt = new TextPosition();
  return {
    scan(chunk: string, last: boolean): void {
      if (found !== null) return;
      const s = held + chunk;
      let pos = 0;
      for (;;) {
        if (inside) {
          const end = s.indexOf(inside, pos);
          if (end === -1) {
            pos = Math.max(pos, s.length - 2);
            break;
          }
          pos = end + 3;
          inside = null;
          continue;
        }
        OPEN.lastIndex = pos;
        const m = OPEN.exec(s);
        if (!m) {
          pos = Math.max(pos, s.length - KEEP);
          break;
        }
        if (!last && s.length - m.index < KEEP) {
          pos = m.index;
          break;
        }
        if (m[0] === '&') {
          found = heldAt.within(s, m.index).line;
          return;
        }
        inside = m[0] === '<!--' ? '-->' : ']]>';
        pos = m.index + m[0].length;
      }
      heldAt.advance(s.slice(0, pos));
      held = s.slice(pos);
    },
    line: () => found,
  };
}

// The OpenImmo feed of a whole file in memory (tests, tools).
export function parseOpenImmo(input: Buffer | string): Promise<ParsedFeed> {
  return collectFeed(readOpenImmo, input);
}

// An element's value once closed: its text alone, or its attributes and children (with the
// text as '#text' when there is some).
function finish(node: Node, rawText: string): unknown {
  const text = rawText.trim();
  if (Object.keys(node).length === 0) return text;
  if (text !== '') node['#text'] = text;
  return node;
}

// A value is never an array itself, so an array here is the list of an element's
// repetitions.
function attach(parent: Node, name: string, value: unknown): void {
  const existing = parent[name];
  if (existing === undefined) parent[name] = ARRAYS.has(name) ? [value] : value;
  else if (Array.isArray(existing)) existing.push(value);
  else parent[name] = [existing, value];
}

function toRecord(node: Node, position: string): RawRecord {
  const techn = obj(node.verwaltung_techn);
  const externalId = cleanExternalId(text(techn?.objektnr_extern));
  const aktion = str(obj(techn?.aktion)?.['@_aktionart'])?.toUpperCase();
  if (aktion === 'DELETE') return { position, externalId, action: 'delete', listingType: null };
  // OpenImmo's sale status (zustand_angaben/verkaufstatus, stand OFFEN, RESERVIERT or VERKAUFT;
  // for a rental too): reserved or sold (let) is no longer on offer, like a JSON record's
  // "reserved" or "sold" (an outside probe: both were published).
  const stand = str(obj(obj(node.zustand_angaben)?.verkaufstatus)?.['@_stand'])?.toUpperCase();
  if (stand === 'RESERVIERT' || stand === 'VERKAUFT') return { position, externalId, action: 'withdraw', listingType: null };

  const kat = obj(node.objektkategorie);
  const fields = new Map<string, string>();
  for (const f of arr(obj(node.verwaltung_objekt)?.user_defined_simplefield)) {
    const name = str(obj(f)?.['@_feldname']);
    if (name) fields.set(name.toLowerCase(), text(f) ?? '');
  }
  const preise = obj(node.preise);
  // The rent: kaltmiete (cold rent), else nettokaltmiete (OpenImmo's net cold rent), else
  // warmmiete (charges included), else pauschalmiete (all-in: furnished flats and rooms).
  // Agency software writes 0 in the elements it does not fill: the first one stated is the
  // rent (all of them 0: the first, for the normalizer to reject).
  const rents = [preise?.kaltmiete, preise?.nettokaltmiete, preise?.warmmiete, preise?.pauschalmiete].map((p, i) => ({ text: text(p), warm: i >= 2 })).filter((p) => p.text !== null);
  const salePrice = text(preise?.kaufpreis);
  const { listingType, why } = kindOf(kat, fields, rents.some((p) => !isZero(p.text!)), salePrice !== null && !isZero(salePrice));
  // A title that says so (`VERKAUFT - Wohnung`, `LOUÉ - Appartement`): the same.
  if (titleSaysDone(text(obj(node.freitexte)?.objekttitel), listingType)) return { position, externalId, action: 'withdraw', listingType: null };
  const rent = rents.find((p) => !isZero(p.text!)) ?? rents[0] ?? null;
  const price = listingType === 'SALE' ? salePrice : (rent?.text ?? null);
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
    typeReason: why,
    title: text(obj(node.freitexte)?.objekttitel),
    price,
    // The rent as warmmiete: with its charges.
    chargesIncluded: listingType === 'SALE' || rent === null ? null : rent.warm,
    // Beside a cold rent, its charges: nebenkosten, else what warmmiete adds to it.
    charges: listingType === 'SALE' || rent === null || rent.warm ? null : (nonZero(text(preise?.nebenkosten)) ?? warmAbove(rent.text!, text(preise?.warmmiete))),
    currency: str(obj(preise?.waehrung)?.['@_iso_waehrung']),
    area: text(flaechen?.wohnflaeche),
    // 0 rooms is the software's "not filled in": the normalizer reads it so, and bedrooms + 1.
    rooms: text(flaechen?.anzahl_zimmer),
    bedrooms: text(flaechen?.anzahl_schlafzimmer),
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

// "0", "0.00", "0,0": a figure the agency left at its default.
// The kind of offer, from the kind of property (objektart), the flags of a sublet, and
// vermarktungsart; with both KAUF and MIETE_PACHT set, the price given decides. `why` says
// what is wrong when there is no kind.
function kindOf(
  kat: Node | null,
  fields: Map<string, string>,
  hasRent: boolean,
  hasSalePrice: boolean,
): { listingType: ListingType | null; why: string | null } {
  const art = obj(kat?.objektart);
  const verm = obj(kat?.vermarktungsart);
  // Offices, shops, restaurants, plots, parking, halls, farms: no homes, no listings of this feed.
  const otherArt = Object.keys(art ?? {}).find((k) => NOT_HOME_ARTS.has(k));
  if (otherArt) return { listingType: null, why: `objektart ${otherArt} is not a home` };
  // A use stated as business and not as living (nutzungsart WOHNEN="false" GEWERBE="true").
  const use = obj(kat?.nutzungsart);
  if (use && no(use['@_WOHNEN']) && yes(use['@_GEWERBE'])) return { listingType: null, why: 'nutzungsart is GEWERBE, not WOHNEN: not a home' };
  if (art?.zimmer !== undefined) return { listingType: 'FLATSHARE', why: null };
  if (yes(fields.get('untervermietung'))) return { listingType: 'SUBLET', why: null };
  const sale = yes(verm?.['@_KAUF']);
  const rent = yes(verm?.['@_MIETE_PACHT']);
  if (sale && rent) {
    if (hasRent !== hasSalePrice) return { listingType: hasRent ? 'RENT' : 'SALE', why: null };
    return { listingType: null, why: 'both MIETE_PACHT and KAUF are set in vermarktungsart, with a rent and a sale price (or neither)' };
  }
  if (sale || rent) return { listingType: sale ? 'SALE' : 'RENT', why: null };
  return { listingType: null, why: 'neither MIETE_PACHT nor KAUF is set in vermarktungsart' };
}

function isZero(s: string | null): boolean {
  return s !== null && /^\s*0+(?:[.,]0*)?\s*$/.test(s);
}

function nonZero(s: string | null): string | null {
  return isZero(s) ? null : s;
}

// What a warmmiete stated beside the cold rent adds to it: the charges.
function warmAbove(cold: string, warm: string | null): number | null {
  if (warm === null || isZero(warm)) return null;
  const [c, w] = [parseDecimal(cold.trim(), true), parseDecimal(warm.trim(), true)];
  return c !== null && w !== null && w > c ? w - c : null;
}

function yes(v: unknown): boolean {
  const s = str(v)?.trim().toLowerCase();
  return s === 'true' || s === '1';
}

function no(v: unknown): boolean {
  const s = str(v)?.trim().toLowerCase();
  return s === 'false' || s === '0';
}
