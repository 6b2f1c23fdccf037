import { KEY_PREFIX } from '../auth/api-key.js';

// `lfk_` and the rest of the path segment, wherever it stands (a key's own characters are
// letters, digits, `_` and `-`, so anything may precede it).
const KEY_IN_PATH = /lfk_[^/;,?#]*/gi;
// A percent-escape: a path that has one is read as the server reads it before it is looked at.
const ESCAPE = /%[0-9a-f]{2}/i;

// A request's path as the log shows it: without its query string (which may hold anything a
// client typed), and with anything that looks like an API key masked. A key pasted into a URL
// (`/api/v1/listings/lfk_…`) was logged in full (an outside probe of stop 52), and so, until stop
// 57, was one after a percent-escape (`Bearer%20lfk_…`, `%22lfk_…%22`, `listings%2Flfk_…`) or with
// a letter of its own escaped (`%6Cfk_…`), which the pattern took for the middle of a word
// (another probe). A segment with escapes is masked whole when, its escapes read (twice over: a
// `%25` is a `%`), it holds a key.
export function loggedPath(url: string): string {
  const path = url.split('?')[0];
  if (ESCAPE.test(path)) return path.split('/').map(maskEscapedSegment).join('/');
  return /lfk_/i.test(path) ? path.replace(KEY_IN_PATH, `${KEY_PREFIX}[redacted]`) : path;
}

function maskEscapedSegment(segment: string): string {
  if (!ESCAPE.test(segment)) return segment.replace(KEY_IN_PATH, `${KEY_PREFIX}[redacted]`);
  return /lfk_/i.test(unescapeBytes(unescapeBytes(segment))) ? `${KEY_PREFIX}[redacted]` : segment;
}

// Each %XX as the byte it names (as Latin-1: enough to find ASCII), whether or not the bytes
// are UTF-8.
function unescapeBytes(s: string): string {
  return s.replace(/%([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
