import { brotliCompressSync, constants, deflateSync, gzipSync } from 'node:zlib';
import type { Request, Response } from 'express';
import Negotiator from 'negotiator';
import type { CachedBody } from '../cache/cached-body.js';
import { isFresh } from './conditional.js';
import type { AnswerReplay, ReplayScope } from './replay.js';

const MIN_COMPRESS = 1024;

// Each compressed form of a cached answer, made once (body.br, body.gzip, body.deflate).
const COMPRESS = {
  br: (json: string) => brotliCompressSync(json, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } }),
  gzip: (json: string) => gzipSync(json, { level: 3 }), // for throughput: about 30% less CPU than 6, a few % larger
  deflate: (json: string) => deflateSync(json, { level: 3 }),
};

// The encoding chosen for each Accept-Encoding header seen (clients send a handful of
// distinct values): negotiated once, not per request. As the compression middleware chooses for
// the answers it compresses: brotli before gzip when the client weighs them alike, deflate
// when it takes nothing else (an outside probe of stop 58: `gzip;q=1, br;q=1` was gzip here and
// br on /changes, and a client taking only deflate got deflate there and nothing here).
const chosen = new Map<string, string | false>();
function encodingFor(req: Request): string | false {
  const header = req.headers['accept-encoding'] ?? '';
  let e = chosen.get(header);
  if (e === undefined) {
    e = new Negotiator(req).encoding(['br', 'gzip', 'deflate', 'identity'], { preferred: ['br', 'gzip'] }) ?? false;
    if (chosen.size >= 256) chosen.clear();
    chosen.set(header, e);
  }
  return e;
}

// The encoding negotiated before for an Accept-Encoding value, if it was.
export function negotiatedEncoding(acceptEncoding: string): string | false | undefined {
  return chosen.get(acceptEncoding);
}

// Sends a cached answer with its ETag (304 when the client's copy is current), compressed
// with brotli or gzip as the client prefers; each compressed form is made once and kept.
// A full answer is also offered to the app's replay of repeated requests (src/http/replay.ts),
// with what it depends on beyond the URL, the key's tier and the data version (`scope`).
export function sendCachedBody(req: Request, res: Response, body: CachedBody, scope?: ReplayScope): void {
  res.setHeader('ETag', body.etag);
  res.setHeader('Vary', 'Accept-Encoding');
  // A 304 carries the validators and Vary of the 200, no content metadata (RFC 9110 §15.4.5).
  if (isFresh(req, res)) {
    res.status(304).end();
    return;
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  (req.app.locals.replay as AnswerReplay | undefined)?.record(req, res, body, scope);
  if (body.json.length >= MIN_COMPRESS) {
    const encoding = encodingFor(req);
    if (encoding === 'br' || encoding === 'gzip' || encoding === 'deflate') {
      const bytes = (body[encoding] ??= COMPRESS[encoding](body.json));
      res.setHeader('Content-Encoding', encoding);
      res.setHeader('Content-Length', bytes.length);
      res.end(bytes);
      return;
    }
  }
  res.setHeader('Content-Length', Buffer.byteLength(body.json));
  res.end(body.json);
}
