import { KEY_PREFIX } from '../auth/api-key.js';

// `lfk_`, its `_` percent-encoded or not, and the rest of the path segment.
const KEY_IN_PATH = /(?<![a-z0-9])lfk(?:_|%5f)[^/;,?#]*/gi;

// A request's path as the log shows it: without its query string (which may hold anything a
// client typed), and with anything that looks like an API key masked. A key pasted into a URL
// (`/api/v1/listings/lfk_…`, percent-encoded or not) was logged in full (an outside probe of stop 52).
export function loggedPath(url: string): string {
  const path = url.split('?')[0];
  return /lfk/i.test(path) ? path.replace(KEY_IN_PATH, `${KEY_PREFIX}[redacted]`) : path;
}
