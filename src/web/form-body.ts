import { isUtf8 } from 'node:buffer';
import type { RequestHandler } from 'express';
import qs from 'qs';
import getRawBody from 'raw-body';

// A form's fields (application/x-www-form-urlencoded) in `req.body`, exactly as
// express.urlencoded({ extended: false }) parses them (qs, with body-parser's options: UTF-8 or
// ISO-8859-1, a field sent twice an array, no nesting), read with raw-body, body-parser's own
// reader. Not express.urlencoded itself: it takes a request whose socket is no longer readable
// for one already read, so a form sent by a client that closed its sending side once the form
// was sent (`nc -N`, a script's shutdown(SHUT_WR); RFC 9112, section 9.6, allows it) was left
// unread, whenever anything asynchronous ran before it (the pages' rate limit in Redis), and the
// form was refused as expired (an outside probe, stop 40). The body is in the request's buffer
// all the same.
const httpError = (status: number, message: string) => Object.assign(new Error(message), { status, expose: true });

export function formBody(opts: { limit: number; parameterLimit: number }): RequestHandler {
  return (req, _res, next) => {
    // A request without a body, or with another kind of body, is left alone (req.is: null
    // without a body, false for another type).
    // A form sent in another body format (multipart/form-data, JSON) is no form of ours: told so,
    // not "expired" nor "control characters" (an outside probe of stop 51).
    // A body without a type is told so too (an outside probe of stop 52: "expired", which a reload
    // never mends). (An empty body is left to the CSRF check as before.)
    const kind = req.is('application/x-www-form-urlencoded');
    if (kind === false && req.method === 'POST' && req.headers['content-length'] !== '0') {
      const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      const sent = type ? `as ${type}` : 'without a Content-Type';
      return next(Object.assign(httpError(415, `unsupported form type "${type || 'none'}"`), { detail: `The form was sent ${sent}; the pages' forms are sent as application/x-www-form-urlencoded, as a browser sends them. Go back and try again` }));
    }
    if (!kind) return next();
    const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase() ?? 'utf-8';
    if (charset !== 'utf-8' && charset !== 'iso-8859-1') return next(httpError(415, `unsupported charset "${charset.toUpperCase()}"`));
    const coding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (coding !== 'identity') return next(httpError(415, `unsupported content encoding "${coding}"`));
    getRawBody(req, { length: req.headers['content-length'], limit: opts.limit }).then(
      (bytes) => {
        // Bytes that are not UTF-8 (a raw é in Latin-1) became U+FFFD, so that distinct passwords
        // were one (an outside probe of stop 57): refused, as a %-escape that is not UTF-8 is.
        if (charset === 'utf-8' && !isUtf8(bytes)) return next(notUtf8());
        const text = bytes.toString(charset === 'utf-8' ? 'utf8' : 'latin1');
        const fields = text.split('&').length;
        if (fields > opts.parameterLimit) return next(httpError(413, 'too many parameters'));
        // A `%` escape that is not UTF-8 (`a%FFb`, `50%`) would be kept as written (qs leaves what
        // it cannot decode): refused, as the API refuses it (an outside probe of stop 52).
        if (charset === 'utf-8' && !decodesAsUtf8(text)) return next(notUtf8());
        req.body = text === '' ? {} : qs.parse(text, { allowPrototypes: true, arrayLimit: fields, depth: 0, charset: charset as qs.IParseOptions['charset'], parameterLimit: opts.parameterLimit, strictDepth: true });
        next();
      },
      (err: unknown) => next(err),
    );
  };
}

const notUtf8 = () => Object.assign(httpError(400, 'a form that is not UTF-8'), { detail: 'A field of the form holds bytes or a %-escape that are not UTF-8 text, which a browser does not send. Go back and try again' });

function decodesAsUtf8(text: string): boolean {
  if (!text.includes('%')) return true;
  try {
    decodeURIComponent(text.replace(/\+/g, ' '));
    return true;
  } catch {
    return false;
  }
}
