import { FeedParseError, MAX_FIELD_CHARS, tooLong } from '../errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

// Feeds are UTF-8, perhaps with a byte-order mark. Anything else (Latin-1 exports, binary
// garbage, a zip sent by mistake) is refused whole rather than imported as mojibake.
export function decodeFeed(input: Buffer | string): string {
  let text: string;
  if (typeof input === 'string') text = input;
  else {
    try {
      text = utf8.decode(input);
    } catch {
      throw new FeedParseError('the file is not UTF-8 text (binary data or another encoding)');
    }
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.includes('\u0000')) throw new FeedParseError('the file contains NUL bytes: it is binary, not a text feed');
  if (text.trim() === '') throw new FeedParseError('the file is empty');
  return text;
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

// Line number of a character offset, by binary search over the line starts.
export function lineIndex(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

export function str(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return null;
}
