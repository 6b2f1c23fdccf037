import type { Request, RequestHandler } from 'express';
import { hasControlCharacter } from '../lib/text.js';
import { backFor, messagePage } from './layout.js';

function decoded(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path; // a malformed escape: the router answers it (400)
  }
}

// The names and values of a parsed query or form (flat with our parsers; nested handled too).
function collectStrings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) collectStrings(x, out);
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.push(k);
      collectStrings(x, out);
    }
  }
  return out;
}

// Every string a page or a form hands on (the path, the query, the form fields) is refused
// at the edge when it holds a control character: it could only be an attack or a broken
// client, and NUL would otherwise reach PostgreSQL (22021) or cut a password short in bcrypt.
// Mounted after the body parser of the forms.
function controlCharactersIn(req: Request): boolean {
  if (hasControlCharacter(decoded(req.path))) return true;
  return collectStrings(req.query).some(hasControlCharacter) || collectStrings(req.body).some(hasControlCharacter);
}

export const refuseControlCharacters: RequestHandler = (req, res, next) => {
  if (!controlCharactersIn(req)) return next();
  res
    .status(400)
    .type('html')
    .send(
      messagePage({
        title: 'Bad request',
        message: 'The address or the form contained control characters (invisible characters such as NUL), which cannot be used here. Go back and try again.',
        back: backFor(req.originalUrl),
      }),
    );
};
