import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

// A client-sent id is kept when it is sane (short, printable, no spaces): it ends up in
// our logs, so it must not be able to forge log lines.
const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

export const requestId: RequestHandler = (req, res, next) => {
  const given = req.get('x-request-id');
  const id = given && SANE.test(given) ? given : randomUUID();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
};
