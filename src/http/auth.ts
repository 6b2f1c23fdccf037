import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import type { Knex } from 'knex';
import { hashApiKey, KEY_PATTERN } from '../auth/api-key.js';
import type { KeyUsageTracker } from '../auth/key-usage.js';
import type { LiveState } from '../cache/live-state.js';
import { findActiveKeyByHash, type AuthenticatedKey } from '../repositories/api-keys.js';
import { ApiError } from './errors.js';
import { headerCount } from './raw-headers.js';

const CHALLENGE = 'Bearer realm="api"';
const INVALID_TOKEN_CHALLENGE = 'Bearer realm="api", error="invalid_token"';

declare module 'express-serve-static-core' {
  interface Locals {
    requestId?: string;
    apiKey?: AuthenticatedKey;
    // The data version read with the key: routes check their caches against it.
    dataVersion?: number;
  }
}

function unauthorized(detail: string): ApiError {
  return new ApiError({ status: 401, code: 'unauthorized', detail, headers: { 'WWW-Authenticate': CHALLENGE } });
}

export function invalidKey(detail: string): ApiError {
  return new ApiError({ status: 401, code: 'invalid_key', detail, headers: { 'WWW-Authenticate': INVALID_TOKEN_CHALLENGE } });
}

// The key of a request's Authorization header, or why there is none: Bearer <key>, the
// scheme name case-insensitive (RFC 7235). Shared with the replay of repeated answers
// (src/http/replay.ts). A request with several Authorization headers is refused: Node keeps
// the first and drops the others, and a proxy in front may have read another one.
export function requestKey(req: IncomingMessage): string | ApiError {
  if (headerCount(req.rawHeaders, 'authorization') > 1) return unauthorized('Send one Authorization header, not several');
  // Spaces and tabs only separate the scheme from the key (RFC 9110's whitespace): not a
  // non-breaking space or another character JavaScript's \s and trim() take (an outside probe).
  const header = req.headers.authorization;
  if (header === undefined || /^[ \t]*$/.test(header)) {
    return unauthorized('Send your API key in the Authorization header: "Authorization: Bearer <key>"');
  }
  const m = /^[ \t]*([^ \t]+)(?:[ \t]+(.*))?$/.exec(header);
  if (!m || m[1].toLowerCase() !== 'bearer') {
    return unauthorized('Use the Bearer scheme: "Authorization: Bearer <key>"');
  }
  const key = (m[2] ?? '').replace(/[ \t]+$/, '');
  return KEY_PATTERN.test(key) ? key : invalidKey('The API key is malformed');
}

// With a LiveState, a key verified before (and not revoked or changed since, as the database's
// notifications say) is answered from memory together with the data version: no round trip.
export function requireApiKey(deps: { db: Knex; live?: LiveState; usage?: KeyUsageTracker; clock: () => Date }): RequestHandler {
  const live = deps.live;
  return async (req, res, next) => {
    const key = requestKey(req);
    if (key instanceof ApiError) throw key;
    const hash = hashApiKey(key);
    const known = live?.key(hash);
    const version = known && live!.currentVersion();
    if (known && version !== undefined) {
      res.locals.apiKey = known;
      res.locals.dataVersion = version;
      deps.usage?.record(known.id, deps.clock());
      return next();
    }
    const token = live ? live.lookupToken() : null;
    const { key: found, dataVersion } = await findActiveKeyByHash(deps.db, hash);
    if (!found) throw invalidKey('The API key is unknown or has been revoked');
    live?.remember(hash, found, token);
    res.locals.apiKey = found;
    // The newer of the two: the notification of a commit may arrive before or after the read.
    res.locals.dataVersion = Math.max(dataVersion, live?.currentVersion() ?? 0);
    deps.usage?.record(found.id, deps.clock());
    next();
  };
}
