import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import { holdsKeyBody } from './logged-path.js';

// A client-sent id is kept when it is sane (short, printable, no spaces): it ends up in
// our logs, so it must not be able to forge log lines.
const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

// One that holds an API key's prefix, or what may be a key's characters without it, is
// replaced too: it would be logged, and echoed, as sent (an outside probe of stop 57 sent its
// key as its request id).
const KEY_LIKE = /lfk_/i;

export function requestIdFor(given: string | string[] | undefined): string {
  return typeof given === 'string' && SANE.test(given) && !KEY_LIKE.test(given) && !holdsKeyBody(given) ? given : randomUUID();
}

export const requestId: RequestHandler = (req, res, next) => {
  const id = requestIdFor(req.headers['x-request-id']);
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
};
