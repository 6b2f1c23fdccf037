import type { ListingType } from '../../domain/listing.js';
import { CONTROL_CHARACTERS } from '../../lib/text.js';
import { placeKey } from '../../reference/gazetteer.js';
import { FeedParseError, MAX_FIELD_CHARS, MAX_RECORD_CHARS, tooLong } from '../errors.js';
import { type FeedInput, openInput } from '../input.js';
import type { FeedEvent, ParsedFeed } from '../types.js';

// A streaming adapter: text in (pieces of any size, in order), events out, in file order.
export type FeedReader = (text: AsyncIterable<string>) => AsyncIterable<FeedEvent>;

// Feeds are UTF-8, perhaps with a byte-order mark. Anything else (Latin-1 exports, binary
// garbage, a zip sent by mistake) is refused whole rather than imported as mojibake. The
// bytes are decoded as they come (a character cut between two pieces is put together);
// the first NUL or invalid sequence stops the reading.
export async function* decodeText(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const decode = (bytes?: Uint8Array) => {
    try {
      return bytes ? utf8.decode(bytes, { stream: true }) : utf8.decode();
    } catch {
      throw new FeedParseError('the file is not UTF-8 text (binary data or another encoding)');
    }
  };
  let first = true;
  let blank = true;
  const accept = (s: string): string => {
    if (first && s.length > 0) {
      first = false;
      if (s.charCodeAt(0) === 0xfeff) s = s.slice(1);
    }
    if (s.includes('\u0000')) throw new FeedParseError('the file contains NUL bytes: it is binary, not a text feed');
    if (blank && s.trim() !== '') blank = false;
    return s;
  };
  for await (const chunk of chunks) {
    const s = accept(typeof chunk === 'string' ? chunk : decode(chunk));
    if (s) yield s;
  }
  const tail = accept(decode());
  if (tail) yield tail;
  if (blank) throw new FeedParseError('the file is empty');
}

// A whole feed in memory, for tests and tools: the same streaming adapter, fed the bytes
// in pieces as a file would be read.
export async function collectFeed(read: FeedReader, input: Buffer | string): Promise<ParsedFeed> {
  const source: FeedInput = typeof input === 'string' ? { text: input } : input;
  const { chunks } = await openInput(source, Number.MAX_SAFE_INTEGER);
  const feed: ParsedFeed = { mode: null, records: [], rejects: [] };
  for await (const e of read(decodeText(chunks))) {
    if (e.kind === 'record') feed.records.push(e.record);
    else if (e.kind === 'reject') feed.rejects.push(e.reject);
    else feed.mode = e.mode;
  }
  return feed;
}

// A field of a megabyte is not a listing but a corrupt or hostile file: refuse it whole.
export function assertFieldSizes(value: unknown, where: string, depth = 0): void {
  if (typeof value === 'string') {
    if (value.length > MAX_FIELD_CHARS) throw tooLong('a field', where);
    return;
  }
  if (depth > 20) throw new FeedParseError(`the record at ${where} is nested too deeply`);
  if (Array.isArray(value)) {
    for (const v of value) assertFieldSizes(v, where, depth + 1);
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.length > MAX_FIELD_CHARS) throw tooLong('a field name', where);
      assertFieldSizes(v, where, depth + 1);
    }
  }
}

// Where the reading stands, as a person counts: line and column (both from 1) of the next
// character, moved on by each piece of text read.
export class TextPosition {
  line = 1;
  column = 1;

  advance(text: string): void {
    const last = text.lastIndexOf('\n');
    if (last === -1) {
      this.column += text.length;
      return;
    }
    let n = 0;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
    this.line += n;
    this.column = text.length - last;
  }

  // The position of a character of the piece about to be read (offset into it).
  within(text: string, offset: number): { line: number; column: number } {
    const p = new TextPosition();
    p.line = this.line;
    p.column = this.column;
    p.advance(text.slice(0, offset));
    return { line: p.line, column: p.column };
  }
}

// What a streaming parser may hold is bounded: no run of text between two markup
// characters (a value being read) longer than a field may be, and no more text between two
// records than a record may hold. A parser that buffers a value until its end would
// otherwise hold a whole hostile file (a title of 500 MB, a tag that never closes).
export class SizeGuard {
  private run = 0;
  private sinceRecord = 0;

  constructor(
    // The character that ends a value ('<' for XML, '"' for JSON).
    private readonly mark: string,
    private readonly where: () => string,
  ) {}

  feed(text: string): void {
    // Slack for the markup around a value: the field itself is checked exactly when its
    // record is complete.
    const limit = MAX_FIELD_CHARS + 4096;
    let from = 0;
    for (let i = text.indexOf(this.mark); i !== -1; i = text.indexOf(this.mark, i + 1)) {
      if (this.run + (i - from) > limit) throw tooLong('a field', this.where());
      this.run = 0;
      from = i + 1;
    }
    this.run += text.length - from;
    if (this.run > limit) throw tooLong('a field', this.where());
    this.sinceRecord += text.length;
    if (this.sinceRecord > MAX_RECORD_CHARS) {
      throw new FeedParseError(
        `the record at ${this.where()} (or the text before it) is longer than ${MAX_RECORD_CHARS.toLocaleString('en')} characters: the file is corrupt or not a feed`,
      );
    }
  }

  // A record ended: what the parser holds starts again from nothing.
  recordDone(): void {
    this.sinceRecord = 0;
  }
}

export function str(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
}

// The record's id in its source: a number or a string, control characters removed, at most
// 200 characters; null if there is none.
export function cleanExternalId(v: unknown): string | null {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v !== 'string') return null;
  const s = v.replace(CONTROL_CHARACTERS, '').trim();
  return s === '' || s.length > 200 ? null : s;
}

// The kind of offer, in the words of each format (the CSV's French, the JSON's English) and of
// the other languages agencies here write in, any letter case, accents, spaces or hyphens.
const OFFERS: Record<string, ListingType> = {
  location: 'RENT', vente: 'SALE', colocation: 'FLATSHARE', souslocation: 'SUBLET',
  rent: 'RENT', rental: 'RENT', sale: 'SALE', flatshare: 'FLATSHARE', sublet: 'SUBLET', sublease: 'SUBLET',
  miete: 'RENT', kauf: 'SALE', wg: 'FLATSHARE', wohngemeinschaft: 'FLATSHARE', untermiete: 'SUBLET',
};

export function offerType(text: string): ListingType | null {
  return OFFERS[placeKey(text)] ?? null;
}
