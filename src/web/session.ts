import connectPgSimple from 'connect-pg-simple';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import session from 'express-session';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { SESSION_TABLE, sessionStorePool } from '../repositories/web-sessions.js';
import type { WebOptions } from './options.js';

declare module 'express-session' {
  interface SessionData {
    accountId?: number;
    email?: string;
    notice?: string; // shown once on the next page
    createNonce?: string; // makes the create-key form single-use (see keys-router.ts)
    signedInAt?: number; // ms since the epoch: a session lasts sessionTtlMs from it, used or not
  }
}

export const SESSION_COOKIE = 'lf_session';
export const SESSION_PATH = '/api-keys';

export function sessionMiddleware(deps: { db: Knex; logger: Logger; secureCookie: boolean; options: WebOptions; secrets: () => Promise<string[]> }): RequestHandler {
  const PgStore = connectPgSimple(session);
  const store = new PgStore({
    pool: sessionStorePool(deps.db) as never,
    tableName: SESSION_TABLE,
    createTableIfMissing: false, // the migration made it
    pruneSessionInterval: deps.options.sessionPruneIntervalS,
    errorLog: (...args: unknown[]) => deps.logger.error({ err: args.find((a) => a instanceof Error) }, String(args[0])),
  });

  // A session past its lifetime from sign-in is read as none: the visitor is signed out, and, as
  // for any visitor without a session, nothing is written until they sign in (ending it in the
  // request instead made a new, empty session row and cookie: the regression check of stop 52).
  const ttlMs = deps.options.sessionTtlMs;
  const get = store.get.bind(store);
  store.get = (sid, cb) =>
    get(sid, (err, sess) => {
      const at = (sess as { signedInAt?: unknown } | null | undefined)?.signedInAt;
      if (err || typeof at !== 'number' || at + ttlMs > Date.now()) return cb(err, sess);
      // Its row deleted without waiting: a row another request holds locked would hold this one
      // (the second regression check of stop 52: 503s after 10 s); read as expired meanwhile.
      store.destroy(sid, () => undefined);
      cb(null, null);
    });

  let ready: Promise<RequestHandler> | null = null;
  const build = async (): Promise<RequestHandler> =>
    session({
      name: SESSION_COOKIE,
      secret: await deps.secrets(),
      store,
      resave: false,
      // A visitor gets a session (a row and a cookie) only when signing in or up: the forms
      // of an anonymous visitor need none (their CSRF tokens are stateless, csrf.ts).
      saveUninitialized: false,
      rolling: false,
      unset: 'destroy',
      cookie: {
        path: SESSION_PATH, // never sent to the API or the listing pages
        httpOnly: true,
        sameSite: 'lax',
        secure: deps.secureCookie,
        maxAge: deps.options.sessionTtlMs,
      },
    });

  let warned = false;
  return (req, res, next) => {
    if (deps.secureCookie && !req.secure && !warned) {
      // express-session will not send a Secure cookie over what it sees as plain HTTP.
      warned = true;
      deps.logger.warn('PUBLIC_BASE_URL is https but a web page request arrived over plain HTTP: the session cookie cannot be set; behind a TLS proxy, set TRUST_PROXY');
    }
    ready ??= build().catch((err) => {
      ready = null; // try again on the next request
      throw err;
    });
    ready.then(
      (mw) =>
        mw(req, res, (err?: unknown) => {
          if (!err) {
            saveBeforeRedirect(req, res, next);
            return withinLifetime(req, deps.options.sessionTtlMs, next);
          }
          // The store could not read the session (the database unavailable): nothing is known
          // of it, so nothing may be done to it. Without its id, express-session neither deletes
          // it as the 503 ends (unset: 'destroy' reads an unread session as one signed out) nor
          // sets a cookie; the user is still signed in once the database is back.
          delete (req as { sessionID?: string }).sessionID;
          next(err);
        }),
      next,
    );
  };
}

// express-session saves a changed session while the response ends, but writes the headers
// before its store has answered: a browser follows a 303 at once, reads the session as it
// was (the notice is missing) and may overwrite the save still running. So a redirect waits
// for the save of a session the request changed (express-session then has nothing left to
// save); an unchanged session is not written.
function saveBeforeRedirect(req: Request, res: Response, next: NextFunction): void {
  const loaded = JSON.stringify(req.session ?? null);
  const redirect = res.redirect.bind(res) as (...args: unknown[]) => void;
  res.redirect = ((...args: unknown[]) => {
    if (!req.session || JSON.stringify(req.session) === loaded) return redirect(...args);
    req.session.save((err) => (err ? next(err) : redirect(...args)));
  }) as Response['redirect'];
}

// A session lasts its lifetime from sign-in, however often it is used: express-session moves
// its expiry on every request that changes it (each keys page does), which made it an idle
// timeout (an outside probe of stop 52). Past it, the store reads it as none (above). A session
// from before signedInAt was kept counts from the first request that sees it.
function withinLifetime(req: Request, ttlMs: number, next: NextFunction): void {
  const s = req.session;
  if (!s?.accountId) return next();
  const now = Date.now();
  s.signedInAt ??= now;
  // express-session sets the expiry to now + originalMaxAge as the response goes out.
  const left = Math.max(1000, s.signedInAt + ttlMs - now);
  s.cookie.originalMaxAge = left;
  s.cookie.maxAge = left;
  next();
}

function promisify(fn: (cb: (err?: unknown) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => fn((err) => (err ? reject(err) : resolve())));
}

// A new session id at sign-in: whatever id the visitor had before (perhaps one an attacker
// planted) is dropped with its data.
export async function startSignedInSession(req: Request, account: { id: number; email: string }, notice?: string): Promise<void> {
  await promisify((cb) => req.session.regenerate(cb));
  req.session.accountId = account.id;
  req.session.email = account.email;
  req.session.signedInAt = Date.now();
  if (notice) req.session.notice = notice;
  await promisify((cb) => req.session.save(cb));
}

export async function endSession(req: Request): Promise<void> {
  await promisify((cb) => req.session.destroy(cb));
}
