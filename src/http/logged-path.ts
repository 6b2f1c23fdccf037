import { KEY_PREFIX } from '../auth/api-key.js';

// What follows a key's prefix in a key: 43 characters of base64url.
const KEY_BODY = 43;
// `lfk_` and the rest of the path segment, wherever it stands (a key's own characters are
// letters, digits, `_` and `-`, so anything may precede it).
const KEY_IN_SEGMENT = /lfk_[^/;,?#]*/gi;
const ESCAPE = /%[0-9a-f]{2}/i;
const MASK = `${KEY_PREFIX}[redacted]`;
// A key's 43 characters without its prefix (left out, or mistyped: `lfk-…`, `lfk\_…`, a
// look-alike letter; an outside probe of stop 58): a run of 43 or more base64url characters
// holding both capitals and small letters, as 256 random bits all but surely do (a body
// without one or the other: 2 in 10^10) and hex ids and UUIDs never do.
const LONG_RUN = /[A-Za-z0-9_-]{43,}/g;
const BARE_MASK = '[redacted]';
const keyLike = (run: string) => /[A-Z]/.test(run) && /[a-z]/.test(run);

// Whether a text holds what may be a key's 43 characters, with or without its prefix.
export function holdsKeyBody(s: string): boolean {
  for (const [run] of s.matchAll(LONG_RUN)) if (keyLike(run)) return true;
  return false;
}

// A request's path as the log shows it: without its query string (which may hold anything a
// client typed), and with anything that looks like an API key masked. A key pasted into a URL
// (`/api/v1/listings/lfk_…`) was logged in full (an outside probe of stop 52), and so, until stop
// 57, was one after a percent-escape (`Bearer%20lfk_…`, `%22lfk_…%22`, `listings%2Flfk_…`) or with
// a letter of its own escaped (`%6Cfk_…`), which the pattern took for the middle of a word
// (another probe). A segment is read with its escapes decoded (again while any are left: a `%25`
// is a `%`, and its re-check encoded a key three times); one that holds a key is masked, whole
// when it has escapes; and when the key there is cut short (`lfk_…/…`), so is the rest of the
// path, where the rest of it may be (the re-check again). A key's characters without its
// prefix are masked too (`[redacted]`, the segment whole when it has escapes).
export function loggedPath(url: string): string {
  const path = url.split('?')[0];
  if (!/lfk|%|[A-Za-z0-9_-]{43}/i.test(path)) return path;
  const segments = path.split('/');
  for (let i = 0; i < segments.length; i++) {
    const decoded = unescapeAll(segments[i]);
    const at = decoded.search(/lfk_/i);
    if (at >= 0) {
      const body = /^[A-Za-z0-9_-]*/.exec(decoded.slice(at + 4))![0];
      if (body.length < KEY_BODY) return [...segments.slice(0, i), MASK].join('/');
      segments[i] = ESCAPE.test(segments[i]) ? MASK : segments[i].replace(KEY_IN_SEGMENT, MASK);
    }
    if (!holdsKeyBody(unescapeAll(segments[i]))) continue;
    segments[i] = ESCAPE.test(segments[i]) ? BARE_MASK : segments[i].replace(LONG_RUN, (run) => (keyLike(run) ? BARE_MASK : run));
  }
  return segments.join('/');
}

// Each %XX as the byte it names (as Latin-1: enough to find ASCII), again while any are left (at
// most 8 times), whether or not the bytes are UTF-8.
function unescapeAll(s: string): string {
  for (let i = 0; i < 8 && ESCAPE.test(s); i++) s = s.replace(/%([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return s;
}
