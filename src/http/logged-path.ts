import { KEY_PREFIX } from '../auth/api-key.js';

// What follows a key's prefix in a key: 43 characters of base64url.
const KEY_BODY = 43;
// `lfk_` and the rest of the path segment, wherever it stands (a key's own characters are
// letters, digits, `_` and `-`, so anything may precede it).
const KEY_IN_SEGMENT = /lfk_[^/;,?#]*/gi;
const ESCAPE = /%[0-9a-f]{2}/i;
const MASK = `${KEY_PREFIX}[redacted]`;
// A key's characters without its prefix (left out, or mistyped: `lfk-…`, `lfk\_…`, a look-alike
// letter; an outside probe of stop 58), as the text reads (readAs): 28 or more letters and
// digits in all, of any script, holding both capitals and small letters, whatever stands
// between them (a key with spaces, dots, a line break or combining marks slipped in, or cut in
// three: its two re-checks). 28 of a key's 43 characters leave 90 bits to guess; 256 random bits
// all but surely hold both capitals and small letters (a body without one or the other: 2 in
// 10^10), and hex ids, UUIDs and the service's own paths never do.
const KEY_CHARS = 28;
const BARE_MASK = '[redacted]';

// A text's letters and digits as holdsKeyBody counts them (marks on letters left out). Left out:
// hex numbers of 4 digits or more written in one case (a UUID's parts, a trace id), and ULIDs
// (26 capitals and digits of their alphabet): a service name before such an id is a request id,
// not a key. Until stop 59 any run of 10 or more capitals and digits was left out, and a piece of a
// key between its own `-` and `_` is one often enough that its outside re-check found keys
// logged in the clear (a whole key without its prefix 9 times in 200,000, 4 characters short 109
// times; bench/key-masking.ts). Null: escapes left after 16 rounds of decoding, which no path
// of the service's has, or escapes that spell no UTF-8 (overlong forms of a key's letters: the
// same re-check), then masked whole.
function keyChars(s: string): string | null {
  const text = readAs(s);
  if (text === null || text.includes('\uFFFD')) return null;
  return text
    .replace(/\p{M}/gu, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((run) => !/^(?:[0-9a-f]{4,}|[0-9A-F]{4,})$/.test(run) && !/^[0-9A-HJKMNP-TV-Z]{26}$/.test(run))
    .join('');
}

const keyLike = (chars: string) => chars.length >= KEY_CHARS && /\p{Lu}/u.test(chars) && /\p{Ll}/u.test(chars);

// Whether a text may hold a key's characters, with or without its prefix.
export function holdsKeyBody(s: string): boolean {
  const chars = keyChars(s);
  return chars === null || keyLike(chars);
}

// A text as a reader of the log would take it: its escapes decoded (UTF-8 where the bytes form
// it), again while any are left (16 rounds at most: null past that); compatibility forms as their
// letters (NFKC: a fullwidth ｌ is l). Letters of other scripts that look like Latin ones count as
// letters (keyChars).
function readAs(s: string): string | null {
  const decoded = unescapeAll(s, 16);
  return ESCAPE.test(decoded) ? null : decoded.normalize('NFKC');
}

// Each run of %XX as the UTF-8 its bytes spell (a byte that is not, U+FFFD), again while any are
// left, `rounds` times at most.
const decoder = new TextDecoder('utf-8');
function unescapeAll(s: string, rounds: number): string {
  for (let i = 0; i < rounds && ESCAPE.test(s); i++) s = s.replace(/(?:%[0-9a-f]{2})+/gi, (run) => decoder.decode(Buffer.from(run.replace(/%/g, ''), 'hex')));
  return s;
}

// The service's own paths are under 120 characters. Masking reads every segment's escapes and
// letters: an outside re-check of stop 59 sent 16 KB paths of nested escapes and one-letter
// segments, each 26-45 ms of CPU to log, and four clients sending them held /healthz at 0.3 s.
const MAX_LOGGED_PATH = 512;

// A request's path as the log shows it: without its query string (which may hold anything a
// client typed), and with anything that looks like an API key masked. A key pasted into a URL
// (`/api/v1/listings/lfk_…`) was logged in full (an outside probe of stop 52), and so, until stop
// 57, was one after a percent-escape (`Bearer%20lfk_…`, `%22lfk_…%22`, `listings%2Flfk_…`) or with
// a letter of its own escaped (`%6Cfk_…`), which the pattern took for the middle of a word
// (another probe). A segment is read with its escapes decoded (again while any are left: a `%25`
// is a `%`, and its re-check encoded a key three times); one that holds a key is masked, whole
// when it has escapes; and when the key there is cut short (`lfk_…/…`), so is the rest of the
// path, where the rest of it may be (the re-check again). A segment holding a key's characters
// without its prefix is masked whole (`[redacted]`, holdsKeyBody), and so are two segments that
// hold them together. A path longer than MAX_LOGGED_PATH is logged up to the last `/` within
// it: no segment is logged in part (a part of a key's, escaped, would not be recognised).
export function loggedPath(url: string): string {
  const path = url.split('?')[0];
  if (path.length <= MAX_LOGGED_PATH) return maskedPath(path);
  const kept = path.slice(0, Math.max(0, path.lastIndexOf('/', MAX_LOGGED_PATH)));
  return `${maskedPath(kept)}/...[${path.length - kept.length - 1} more characters not logged]`;
}

function maskedPath(path: string): string {
  const plain = !/lfk|%|[^\x00-\x7f]/i.test(path);
  if (plain && !(/[A-Z]/.test(path) && path.replace(/[^A-Za-z0-9_-]/g, '').length >= KEY_CHARS)) return path;
  const segments = path.split('/');
  for (let i = 0; i < segments.length; i++) {
    const decoded = unescapeAll(segments[i], 8);
    const at = decoded.search(/lfk_/i);
    if (at >= 0) {
      const body = /^[A-Za-z0-9_-]*/.exec(decoded.slice(at + 4))![0];
      if (body.length < KEY_BODY) return [...segments.slice(0, i), MASK].join('/');
      segments[i] = ESCAPE.test(segments[i]) ? MASK : segments[i].replace(KEY_IN_SEGMENT, MASK);
    }
  }
  // Each segment's characters, read once (an outside re-check of stop 58: reading them again for
  // every pair made a crafted 15 KB path cost 110 ms of CPU). A key in one segment, or cut by `/`
  // into pieces (`//`, `/./`, four or five parts): consecutive segments that each hold a capital,
  // or at most 3 letters and digits (the service's own path words hold no capital and are
  // longer), hold it together. (A segment that holds one alone holds a capital.)
  const chars = segments.map((segment) => (segment === MASK ? '' : keyChars(segment)));
  const piece = (c: string | null) => c !== null && (/\p{Lu}/u.test(c) || c.length <= 3);
  for (let i = 0; i < segments.length; i++) {
    if (chars[i] === null) segments[i] = BARE_MASK;
    if (!piece(chars[i])) continue;
    let j = i;
    while (j + 1 < segments.length && piece(chars[j + 1])) j++;
    if (keyLike(chars.slice(i, j + 1).join(''))) for (let k = i; k <= j; k++) if (chars[k] !== '') segments[k] = BARE_MASK;
    i = j;
  }
  return segments.join('/');
}
