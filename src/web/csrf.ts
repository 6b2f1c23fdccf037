import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import cookieParser from 'cookie-parser';
import { doubleCsrf } from 'csrf-csrf';
import type { Request, RequestHandler } from 'express';

export const CSRF_COOKIE = 'lf_csrf';

// CSRF protection without server state (csrf-csrf: the signed double-submit cookie pattern),
// so that showing a form to an anonymous visitor writes nothing: no session row for every
// GET /api-keys. Every form carries a token that must equal the HttpOnly
// cookie `lf_csrf`, and both carry an HMAC, under the service's own secret, of a random
// value and of the visitor's session id once signed in. A site elsewhere can neither read
// the cookie nor make one the HMAC accepts, so it cannot forge a form post; that includes the
// sign-in and sign-up forms (login CSRF), which have no session to tie a token to. A token
// minted before sign-in is not accepted after it (the session id is part of the HMAC).
// Whether the form's token is the cookie's, in constant time. csrf-csrf (4.0.3, the latest)
// compares the two with !== and the HMAC with ===, which returns at the first differing
// character; a cross-site page controls the form's token but not the cookie, so that is the
// comparison where its guesses meet the secret. It is made here first, over fixed-length
// digests (timingSafeEqual needs equal lengths, and the lengths must not leak either); the
// library's own comparisons then only ever see a token its sender already holds whole.
export function sameCsrfToken(fromCookie: unknown, fromForm: unknown): boolean {
  if (typeof fromCookie !== 'string' || typeof fromForm !== 'string' || fromCookie === '' || fromForm === '') return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(fromCookie), digest(fromForm));
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']); // csrf-csrf's default ignoredMethods

export function csrfProtection(deps: { secrets: () => Promise<string[]>; secureCookie: boolean; path: string }): RequestHandler[] {
  let secrets: string[] | null = null;
  const { doubleCsrfProtection: library, invalidCsrfTokenError } = doubleCsrf({
    getSecret: () => secrets!,
    getSessionIdentifier: (req: Request) => (req.session?.accountId ? req.sessionID : ''),
    cookieName: CSRF_COOKIE,
    cookieOptions: { httpOnly: true, sameSite: 'strict', path: deps.path, secure: deps.secureCookie },
    getCsrfTokenFromRequest: (req) => (typeof req.body?._csrf === 'string' ? req.body._csrf : undefined),
  });
  const doubleCsrfProtection: RequestHandler = (req, res, next) => {
    if (!SAFE_METHODS.has(req.method) && !sameCsrfToken(req.cookies?.[CSRF_COOKIE], req.body?._csrf)) return next(invalidCsrfTokenError);
    library(req, res, next);
  };
  const protect: RequestHandler = (req, res, next) => {
    if (secrets) return doubleCsrfProtection(req, res, next);
    deps.secrets().then((all) => {
      // A key of its own, derived from each cookie-signing secret (rotation carries over).
      secrets = all.map((s) => createHmac('sha256', s).update('lf-csrf-token').digest('base64url'));
      doubleCsrfProtection(req, res, next);
    }, next);
  };
  return [cookieParser(), protect];
}
