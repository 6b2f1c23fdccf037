import { createHash } from 'node:crypto';

// A JSON answer kept ready to send: serialized once, its ETag computed once, and each
// compressed form made on first demand (by src/http/send-cached-body.ts). Cached answers
// then cost no serialization, hashing or compression per request.
export interface CachedBody {
  json: string;
  etag: string;
  total?: number; // for list answers: the Link header needs it
  gzip?: Buffer;
  br?: Buffer;
  deflate?: Buffer; // for a client that accepts nothing else
}

export function cachedBody(value: unknown, extra: { total?: number } = {}): CachedBody {
  return cachedJson(JSON.stringify(value), extra);
}

// The same for an answer already written as JSON text.
export function cachedJson(json: string, extra: { total?: number } = {}): CachedBody {
  // The same weak ETag format Express uses for its own responses.
  const digest = createHash('sha1').update(json, 'utf8').digest('base64').slice(0, 27);
  return { json, etag: `W/"${Buffer.byteLength(json).toString(16)}-${digest}"`, ...extra };
}

// Bytes held, counting the compressed forms it may gain later (about 40% of the JSON).
export function cachedBodyWeight(b: CachedBody): number {
  return Math.ceil(b.json.length * 1.4);
}
