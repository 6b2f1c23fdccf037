import type { RequestHandler } from 'express';
import type { Knex } from 'knex';
import { hashApiKey, KEY_PATTERN } from '../auth/api-key.js';
import type { KeyUsageTracker } from '../auth/key-usage.js';
import { findActiveKeyByHash, type AuthenticatedKey } from '../repositories/api-keys.js';
import { ApiError } from './errors.js';

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

function invalidKey(detail: string): ApiError {
  return new ApiError({ status: 401, code: 'invalid_key', detail, headers: { 'WWW-Authenticate': INVALID_TOKEN_CHALLENGE } });
}

// Authorization: Bearer <key>. The scheme name is case-insensitive (RFC 7235).
export function requireApiKey(deps: { db: Knex; usage?: KeyUsageTracker; clock: () => Date }): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('authorization');
    if (header === undefined || header.trim() === '') {
      throw unauthorized('Send your API key in the Authorization header: "Authorization: Bearer <key>"');
    }
    const m = /^\s*(\S+)(?:\s+(.*))?$/.exec(header);
    if (!m || m[1].toLowerCase() !== 'bearer') {
      throw unauthorized('Use the Bearer scheme: "Authorization: Bearer <key>"');
    }
    const key = (m[2] ?? '').trim();
    if (!KEY_PATTERN.test(key)) throw invalidKey('The API key is malformed');
    const { key: found, dataVersion } = await findActiveKeyByHash(deps.db, hashApiKey(key));
    if (!found) throw invalidKey('The API key is unknown or has been revoked');
    res.locals.apiKey = found;
    res.locals.dataVersion = dataVersion;
    deps.usage?.record(found.id, deps.clock());
    next();
  };
}
