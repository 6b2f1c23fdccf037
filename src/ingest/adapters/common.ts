import { CONTROL_CHARACTERS } from '../../lib/text.js';
import { FeedParseError, MAX_DEPTH, MAX_FIELD_CHARS, MAX_RECORD_CHARS, MAX_RECORD_VALUES, tooLong } from '../errors.js';
import { type FeedInput, openInput } from '../input.js';
import type { FeedEvent, ParsedFeed } from '../types.js';

// The kind of offer: offer-words.ts (moved there, as this file grew).
export { NOT_HOME_WORDS, offerForDone, offerKindsInConflict, offerNotAHome, offerType } from './offer-words.js';

// A streaming adapter: text in (pieces of any size, in order), events out, in file order.
export type FeedReader = (text: AsyncIterable<string>) => AsyncIterable<FeedEvent>;

// Feeds are UTF-8, perhaps with a byte-order mark. Anything else (Latin-1 exports, binary
// garbage, a zip sent by mistake) is refused whole rather than imported as mojibake, with one
// exception: an XML file that declares a Latin encoding (see declaredDecoder). The bytes are
// decoded as they come (a character cut between two pieces is put together); the first NUL
// or invalid sequence stops the reading.
export async function* decodeText(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
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
  for await (const s of decodeBytes(chunks)) {
    const t = accept(s);
    if (t) yield t;
  }
  if (blank) throw new FeedParseError('the file is empty');
}

// Bytes to text. The decoder is chosen from the first bytes (held until the XML declaration,
// if there is one, is complete); text already decoded passes as it is.
async function* decodeBytes(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  let decoder: Decoder | null = null;
  let head = Buffer.alloc(0);
  // Where the text decoded so far ends, to say where the first byte that is not UTF-8 is (an
  // outside probe: a Windows-1252 CSV was refused without a place to look).
  const decoded = new TextPosition();
  const decode = (bytes?: Uint8Array) => {
    try {
      const text = bytes ? decoder!.decode(bytes, { stream: true }) : decoder!.decode();
      decoded.advance(text);
      return text;
    } catch (e) {
      if (e instanceof FeedParseError) throw e;
      const lenient = bytes ? new TextDecoder('utf-8').decode(bytes) : '';
      const { line } = decoded.within(lenient, Math.max(0, lenient.indexOf('\uFFFD')));
      throw new FeedParseError(`the file is not UTF-8 text (binary data or another encoding): the first byte that is not UTF-8 is on line ${line}`);
    }
  };
  // The bytes held so far decoded, once the decoder is known (or must be: final).
  const start = (final: boolean): string => {
    decoder = declaredDecoder(head, final);
    if (!decoder) return '';
    const held = head;
    head = Buffer.alloc(0);
    return decode(held);
  };
  for await (const chunk of chunks) {
    if (typeof chunk === 'string') {
      if (!decoder && head.length > 0) yield start(true);
      yield chunk;
      continue;
    }
    if (decoder) yield decode(chunk);
    else {
      head = Buffer.concat([head, chunk]);
      yield start(false);
    }
  }
  if (!decoder) yield start(true);
  yield decode();
}

// An XML parser must read a document in the encoding its declaration names, and OpenImmo
// exports of older agency software declare ISO-8859-1 or Windows-1252. Only these Latin
// encodings are honoured (a file that declares one is not UTF-8: its accented letters would
// not decode), and only in a declaration at the very first byte: a byte-order mark says
// UTF-8, and a CSV or JSON file cannot begin with one, so they stay UTF-8 only. Labels that
// the WHATWG decoder would also map to Windows-1252 but that typists write for UTF-8 text
// (US-ASCII) keep the UTF-8 reading.
const DECLARED_LATIN: Record<string, string> = {
  'iso-8859-1': 'windows-1252', 'iso8859-1': 'windows-1252', latin1: 'windows-1252', 'latin-1': 'windows-1252',
  'windows-1252': 'windows-1252', cp1252: 'windows-1252', 'iso-8859-15': 'iso-8859-15', 'latin-9': 'iso-8859-15',
};
const XML_START = Buffer.from('<?xml');
// A declaration is short: a file whose first kilobyte does not close one is read as UTF-8
// (and the XML parser says what is wrong with it).
const MAX_DECLARATION_BYTES = 1024;

// What decodes the bytes: a TextDecoder, or the SniffingDecoder below.
type Decoder = Pick<TextDecoder, 'decode'>;

// The decoder for a file from its first bytes; null while they cannot tell yet (more are
// needed), unless final.
function declaredDecoder(head: Buffer, final: boolean): Decoder | null {
  const utf8 = () => new TextDecoder('utf-8', { fatal: true });
  const n = Math.min(head.length, XML_START.length);
  if (!head.subarray(0, n).equals(XML_START.subarray(0, n))) return utf8();
  const end = head.indexOf('?>');
  if (end === -1) return final || head.length >= MAX_DECLARATION_BYTES ? utf8() : null;
  const declaration = head.subarray(0, end).toString('latin1');
  const label = /\sencoding\s*=\s*["']([^"']*)["']/.exec(declaration)?.[1].trim().toLowerCase();
  const latin = label ? DECLARED_LATIN[label] : undefined;
  return latin ? new SniffingDecoder(latin) : utf8();
}

// Agency software often writes a Latin declaration over text it wrote in UTF-8. The first
// letter outside ASCII tells: a valid UTF-8 sequence means the file is UTF-8 (strictly, from
// then on), anything else the declared encoding. ASCII before it reads the same either way.
class SniffingDecoder implements Decoder {
  private pending = Buffer.alloc(0);
  private chosen: TextDecoder | null = null;
  private isLatin = false;
  private last = 0;

  constructor(private readonly latin: string) {}

  decode(bytes?: Uint8Array, opts?: { stream?: boolean }): string {
    if (this.chosen) {
      if (bytes) this.checkLatin(bytes);
      return bytes ? this.chosen.decode(bytes, opts) : this.chosen.decode();
    }
    const all = bytes ? Buffer.concat([this.pending, bytes]) : this.pending;
    const k = all.findIndex((b) => b >= 0x80);
    if (k === -1) {
      this.pending = Buffer.alloc(0);
      return all.toString('latin1');
    }
    const verdict = utf8SequenceAt(all, k);
    if (verdict === 'short' && bytes && opts?.stream) {
      this.pending = all.subarray(k);
      return all.subarray(0, k).toString('latin1');
    }
    this.isLatin = verdict !== 'valid';
    this.chosen = this.isLatin ? new TextDecoder(this.latin) : new TextDecoder('utf-8', { fatal: true });
    if (this.isLatin) this.checkLatin(all.subarray(k));
    const head = all.subarray(0, k).toString('latin1');
    return head + (bytes && opts?.stream ? this.chosen.decode(all.subarray(k), { stream: true }) : this.chosen.decode(all.subarray(k)));
  }

  // Read as Latin, a file must not hold the UTF-8 form of an accented letter further on (Ã
  // then a byte 0x80-0xBF: "Ã©" for é), which Latin text never writes: a file in two
  // encodings is refused rather than imported as "PÃ©tange".
  private checkLatin(bytes: Uint8Array): void {
    if (!this.isLatin) return;
    for (const b of bytes) {
      if (this.last === 0xc3 && b >= 0x80 && b <= 0xbf) {
        throw new FeedParseError('the file mixes two encodings: it declares a Latin encoding and is read so, but also holds UTF-8 text');
      }
      this.last = b;
    }
  }
}

// Whether a valid UTF-8 sequence of more than one byte starts at k ('short': cut off).
function utf8SequenceAt(b: Buffer, k: number): 'valid' | 'invalid' | 'short' {
  const lead = b[k];
  const n = lead >= 0xc2 && lead <= 0xdf ? 1 : lead >= 0xe0 && lead <= 0xef ? 2 : lead >= 0xf0 && lead <= 0xf4 ? 3 : -1;
  if (n === -1) return 'invalid';
  for (let i = 1; i <= n; i++) {
    if (k + i >= b.length) return 'short';
    if ((b[k + i] & 0xc0) !== 0x80) return 'invalid';
  }
  return 'valid';
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
  // (The readers refuse a file nested deeper than MAX_DEPTH as they read it; this holds a
  // record given otherwise to the same bound.)
  if (depth > MAX_DEPTH) throw new FeedParseError(`the record at ${where} is nested more than ${MAX_DEPTH} levels deep`);
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
// characters (a value being read) longer than a field may be, and no more text, nor more
// values (`counted`), between two records than a record may hold. A parser that buffers a
// value until its end would otherwise hold a whole hostile file (a title of 500 MB, a tag that
// never closes), and one that builds a record's objects gigabytes of them.
export class SizeGuard {
  private run = 0;
  private sinceRecord = 0;
  private values = 0;

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

  // `n` more values read (the reader says what it counts: MAX_RECORD_VALUES); past the limit, the
  // file is refused, with `message` when the reader knows better what is wrong.
  counted(n: number, message?: string): void {
    this.values += n;
    if (this.values > MAX_RECORD_VALUES) {
      throw new FeedParseError(
        message ?? `the record at ${this.where()} (or the text before it) holds more than ${MAX_RECORD_VALUES.toLocaleString('en')} values: the file is corrupt or not a feed`,
      );
    }
  }

  // A record ended: what the parser holds starts again from nothing.
  recordDone(): void {
    this.sinceRecord = 0;
    this.values = 0;
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
  // (One longer than MAX_EXTERNAL_ID is kept here so that the record is rejected for that,
  // normalize.ts, not as one without an id.)
  return s === '' ? null : s;
}

// Attachments that are no pictures, by their file name: videos, documents, archives.
export const NOT_IMAGE_FILE = /\.(pdf|mp4|mov|avi|webm|mkv|doc|docx|txt|zip)(\?|#|$)/i;

// The texts of a title as an adapter hands it on: a string, or an object of language versions
// (JSON's list of {lang, text} is made one first: json.ts, titleVersions).
export function titleTexts(title: unknown): string[] {
  const all = typeof title === 'string' ? [title] : title && typeof title === 'object' ? Object.values(title) : [];
  return all.filter((v): v is string => typeof v === 'string' && v.trim() !== '');
}
