import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, Request, RequestHandler } from 'express';

// Conditional GET as RFC 9110 says an origin server evaluates it (§13.1.2, §13.2.1):
// If-None-Match is checked whatever the request's Cache-Control says. Express's req.fresh
// (the `fresh` package) answers "stale" to any request carrying `Cache-Control: no-cache`,
// and fetch() (Node's and the browsers') adds exactly that header to every request that
// sets If-None-Match itself, so such clients never got a 304.

// The opaque part of each entity-tag in an If-None-Match list (RFC 9110 §8.8.3:
// entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE; a list is comma-separated, and a comma may
// appear inside the quotes). Unquoted tokens are taken as they are, as the `fresh` package
// does, so a client that dropped the quotes still matches. Empty elements (`, "a"`, `"a",,"b"`,
// two headers of which one is empty, which Node joins with a comma) are skipped, as §5.6.1.2
// asks of a recipient (an outside probe of stop 55: a leading one lost the 304, and its quota).
function opaqueTags(header: string): string[] {
  const tags: string[] = [];
  const re = /\s*(?:(?:W\/)?(?:"([^"]*)"|([^,\s]+)))?\s*(?:,|$)/gy;
  let m: RegExpExecArray | null;
  while (re.lastIndex < header.length && (m = re.exec(header)) !== null) {
    const tag = m[1] ?? m[2];
    if (tag !== undefined) tags.push(tag);
    if (m[0] === '') break;
  }
  return tags;
}

function opaque(etag: string): string {
  const s = etag.trim().replace(/^W\//, '');
  return s.length >= 2 && s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1) : s;
}

// If-None-Match: `*` (any representation), empty list elements aside (`*,`, `, *`: the re-check of
// stop 55).
export function isAnyTag(header: string): boolean {
  return header.replace(/[\s,]/g, '') === '*';
}

// True when If-None-Match names the current representation: `*`, or any listed tag equal to
// `etag` under the weak comparison (W/ prefixes ignored).
export function ifNoneMatchHits(header: string, etag: string | undefined): boolean {
  if (isAnyTag(header)) return true;
  if (!etag) return false;
  const current = opaque(etag);
  return opaqueTags(header).some((t) => t === current);
}

// Whether a GET or HEAD about to be answered with `res`'s status and validators may be
// answered 304 instead. Only 2xx answers are ever replaced (§13.2.1); If-Modified-Since is
// looked at only without If-None-Match (§13.1.3).
export function isFresh(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const status = res.statusCode;
  if (!((status >= 200 && status < 300) || status === 304)) return false;
  const noneMatch = req.headers['if-none-match'];
  if (noneMatch !== undefined) {
    const etag = res.getHeader('ETag');
    return ifNoneMatchHits(noneMatch, typeof etag === 'string' ? etag : undefined);
  }
  const since = req.headers['if-modified-since'];
  const lastModified = res.getHeader('Last-Modified');
  if (since === undefined || typeof lastModified !== 'string') return false;
  const a = Date.parse(lastModified);
  const b = Date.parse(since);
  return Number.isFinite(a) && Number.isFinite(b) && a <= b;
}

// Headers that describe a body: a 304 has none, and carries only what its 200 would for
// caching (RFC 9110 §15.4.5: ETag, Cache-Control, Vary, Expires, Date, and our own fields).
const CONTENT_METADATA = ['Content-Type', 'Content-Length', 'Content-Encoding', 'Transfer-Encoding'];

// What the status of an answer allows of the headers set on it, when they are written:
// - a 304 carries no content metadata, whichever path made it (res.send strips Content-Type
//   and Content-Length but not Content-Encoding; a handler or a middleware may have set them
//   before the answer turned into a 304);
// - only a 2xx answer (and its 304) carries an ETag: res.send tags every body it sends, and an
//   error's body names its request (request_id), so its tag differed on every answer (an
//   outside probe) while naming no representation a client could revalidate.
function settleValidators(res: ServerResponse, status: number): void {
  if (status === 304) {
    for (const h of CONTENT_METADATA) res.removeHeader(h);
  } else if (status < 200 || status >= 300) {
    res.removeHeader('ETag');
  }
}

// Replaces req.fresh on this app's request prototype (app.request, Express's documented
// place to extend req), which res.send() consults: every answer Express itself tags with an
// ETag (communes, the OpenAPI document, HTML pages, assets) follows the rule above too.
// And settles the validators and content metadata of every answer of the app as its headers
// are written (settleValidators): res.writeHead on the app's response prototype (app.response),
// which node:http calls for an answer whose headers were not written yet (res.end() too), after
// the listeners of on-headers (compression, the quota) have run. Answers written without
// Express (src/http/replay.ts, src/http/raw-responses.ts) set their headers themselves.
export function useConditionalGet(app: Express): void {
  Object.defineProperty(app.request, 'fresh', {
    configurable: true,
    enumerable: true,
    get(this: Request) {
      return isFresh(this, this.res!);
    },
  });
  const writeHead = app.response.writeHead as (this: ServerResponse, ...args: unknown[]) => ServerResponse;
  Object.defineProperty(app.response, 'writeHead', {
    configurable: true,
    writable: true,
    value: function settledWriteHead(this: ServerResponse, ...args: unknown[]): ServerResponse {
      if (typeof args[0] === 'number') settleValidators(this, args[0]);
      return writeHead.apply(this, args);
    },
  });
}

// express.static (the `send` package) checks freshness with the `fresh` package directly, so
// the override above does not reach it: for the static folders, a conditional request's
// Cache-Control is dropped before `send` sees it (nothing else reads it there).
// Also: a Range whose If-Range names a weak entity tag is served whole (RFC 9110 section 13.1.5:
// a weak tag never validates a range; `send` answered 206: an outside probe of stop 56).
export const conditionalDespiteNoCache: RequestHandler = (req, _res, next) => {
  if (req.headers['if-none-match'] !== undefined || req.headers['if-modified-since'] !== undefined) delete req.headers['cache-control'];
  if (req.headers.range !== undefined && /^\s*W\//.test(String(req.headers['if-range'] ?? ''))) delete req.headers.range;
  next();
};
