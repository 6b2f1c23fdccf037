import { createHash } from 'node:crypto';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { Request, Response } from 'express';
import { isFresh } from './conditional.js';

// A JSON answer kept ready to send: serialized once, its ETag computed once, and each
// compressed form made on first demand. Cached answers then cost no serialization,
// hashing or compression per request.
export interface CachedBody {
  json: string;
  etag: string;
  total?: number; // for list answers: the Link header needs it
  gzip?: Buffer;
  br?: Buffer;
}

export function cachedBody(value: unknown, extra: { total?: number } = {}): CachedBody {
  const json = JSON.stringify(value);
  // The same weak ETag format Express uses for its own responses.
  const hash = createHash('sha1').update(json, 'utf8').digest('base64').slice(0, 27);
  return { json, etag: `W/"${Buffer.byteLength(json).toString(16)}-${hash}"`, ...extra };
}

// Bytes held, counting the compressed forms it may gain later (about 40% of the JSON).
export function cachedBodyWeight(b: CachedBody): number {
  return Math.ceil(b.json.length * 1.4);
}

const MIN_COMPRESS = 1024;

export function sendCachedBody(req: Request, res: Response, body: CachedBody): void {
  res.setHeader('ETag', body.etag);
  res.setHeader('Vary', 'Accept-Encoding');
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  if (isFresh(req, res)) {
    res.status(304).end();
    return;
  }
  if (body.json.length >= MIN_COMPRESS) {
    const encoding = req.acceptsEncodings('br', 'gzip', 'identity');
    if (encoding === 'br') {
      body.br ??= brotliCompressSync(body.json, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } });
      res.setHeader('Content-Encoding', 'br');
      res.setHeader('Content-Length', body.br.length);
      res.end(body.br);
      return;
    }
    if (encoding === 'gzip') {
      body.gzip ??= gzipSync(body.json, { level: 6 });
      res.setHeader('Content-Encoding', 'gzip');
      res.setHeader('Content-Length', body.gzip.length);
      res.end(body.gzip);
      return;
    }
  }
  res.setHeader('Content-Length', Buffer.byteLength(body.json));
  res.end(body.json);
}
