import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { rateLimit } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { normalizeEmail } from '../domain/email.js';
import { createStore, limiterLogger, type StoreHealth } from '../rate-limit/store.js';
import { backFor, messagePage } from './layout.js';
import type { WebOptions } from './options.js';

export interface ThrottleDeps {
  redis: Redis | null;
  redisPrefix: string;
  storeHealth: StoreHealth;
  logger: Logger;
  options: WebOptions;
}

// The address in the form accounts are keyed by: every spelling of one address counts
// against one bucket, the bucket of the account it can sign into.
function emailKey(req: Request): string | null {
  const email = typeof req.body?.email === 'string' ? normalizeEmail(req.body.email) : '';
  // A digest, so the counters in Redis do not list the addresses people sign in with.
  return email ? createHash('sha256').update(email).digest('hex').slice(0, 32) : null;
}

// Whole seconds until the limiter's window for this client ends.
function retryAfterSeconds(req: Request, windowMs: number): number {
  const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
  return Math.max(1, Math.ceil(((reset?.getTime() ?? Date.now() + windowMs) - Date.now()) / 1000));
}

function throttled(what: 'address' | 'account') {
  return (req: Request, res: Response) => {
    const seconds = retryAfterSeconds(req, 15 * 60_000);
    const minutes = Math.ceil(seconds / 60);
    res.setHeader('Retry-After', String(seconds));
    res
      .status(429)
      .type('html')
      .send(
        messagePage({
          title: 'Too many attempts',
          message:
            what === 'account'
              ? `There have been too many unsuccessful sign-ins to this account. To protect it, signing in is paused for about ${minutes} minute${minutes === 1 ? '' : 's'}. Try again after that.`
              : `There have been too many sign-in attempts from your network. Please wait about ${minutes} minute${minutes === 1 ? '' : 's'} and try again.`,
        }),
      );
  };
}

// The public HTML pages need no key, so they are limited per client IP (req.ip honours
// X-Forwarded-For only from the proxies of TRUST_PROXY), like /api/v1/stats: one counter per
// address over the listing pages, the key page and its forms (not the stylesheet and script,
// which a browser caches). The counters live in Redis when it is configured; if it is down,
// pages are served unlimited (counted and logged by the store).
export function pagesLimit(deps: ThrottleDeps & { perMinute: number }): RequestHandler {
  const store = createStore(deps.redis, `${deps.redisPrefix}pages-ip:`, deps.storeHealth, deps.logger);
  return rateLimit({
    windowMs: 60_000,
    limit: deps.perMinute,
    store,
    logger: limiterLogger(store),
    standardHeaders: false,
    legacyHeaders: false,
    passOnStoreError: true,
    validate: { trustProxy: false, xForwardedForHeader: false, singleCount: false },
    handler: (req: Request, res: Response) => {
      const seconds = retryAfterSeconds(req, 60_000);
      res.setHeader('Retry-After', String(seconds));
      res
        .status(429)
        .type('html')
        .send(
          messagePage({
            title: 'Too many requests',
            message: `There have been too many requests for pages from your network. Please wait about ${seconds} second${seconds === 1 ? '' : 's'} and try again.`,
            back: backFor(req.originalUrl),
          }),
        );
    },
  });
}

// Attempts are limited per client IP (every sign-in and sign-up counts) and per email
// address (failed sign-ins only, so a person who gets in is not held back by earlier typos).
// The counters live in Redis when it is configured, like the API's quotas; if Redis is down
// the attempts pass (logged and counted by the store): an outage never locks people out.
//
// Per email, express-rate-limit counts every attempt first (so parallel guesses cannot
// outrun the count) and takes back, when the answer is sent, those the route did not settle:
// a 503 while the database is down, a form error, the 429 itself. The route settles a failed
// sign-in by keeping it counted (`failedSignIn`), and a successful one by clearing the
// address's count (`signedIn`): against a hung Redis the counts of attempts that passed
// land late (with rate-limit-redis's retry) and nothing would take them back, so a person
// who signs in correctly is not locked out by them afterwards. The clearing is sent after
// the attempt's own count, which the limiter awaited, and nothing is taken back after it.
export interface SignInThrottles {
  perIp: RequestHandler;
  perEmail: RequestHandler;
  failedSignIn(res: Response): void;
  signedIn(req: Request, res: Response): void;
}

export function signInThrottles(deps: ThrottleDeps): SignInThrottles {
  const { options } = deps;
  const common = {
    windowMs: options.throttleWindowMs,
    standardHeaders: false,
    legacyHeaders: false,
    passOnStoreError: true,
    validate: { trustProxy: false, xForwardedForHeader: false, singleCount: false },
  } as const;
  const ipStore = createStore(deps.redis, `${deps.redisPrefix}web-attempts-ip:`, deps.storeHealth, deps.logger);
  const emailStore = createStore(deps.redis, `${deps.redisPrefix}web-failures-email:`, deps.storeHealth, deps.logger);
  const perIp = rateLimit({
    ...common,
    limit: options.attemptsPerIp,
    store: ipStore,
    logger: limiterLogger(ipStore),
    handler: throttled('address'),
  });
  const perEmail = rateLimit({
    ...common,
    limit: options.failuresPerEmail,
    store: emailStore,
    logger: limiterLogger(emailStore),
    keyGenerator: (req) => emailKey(req) ?? '',
    skip: (req) => emailKey(req) === null,
    skipSuccessfulRequests: true,
    requestWasSuccessful: (_req, res) => res.locals.signInSettled !== true,
    handler: throttled('account'),
  });
  return {
    perIp,
    perEmail,
    failedSignIn(res) {
      res.locals.signInSettled = true;
    },
    signedIn(req, res) {
      res.locals.signInSettled = true;
      const key = emailKey(req);
      // Counted and logged by the store when it fails; the answer does not wait for it.
      if (key !== null) Promise.resolve(perEmail.resetKey(key)).catch(() => undefined);
    },
  };
}
