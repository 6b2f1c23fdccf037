import { createHash } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { normalizeEmail } from '../domain/email.js';
import { utcDay } from '../rate-limit/quota-counters.js';
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

// The client's address as the limits count it: req.ip (X-Forwarded-For only from the proxies
// of TRUST_PROXY), an IPv6 address by its /56 as express-rate-limit's own key does, so that one
// host cannot take a fresh bucket for each of its addresses.
function clientKey(req: Request): string {
  return ipKeyGenerator(req.ip ?? '');
}

// One bucket per email address and client address: a digest of both.
function emailAndClientKey(req: Request): string | null {
  const email = emailKey(req);
  return email === null ? null : createHash('sha256').update(`${email} ${clientKey(req)}`).digest('hex').slice(0, 32);
}

// Whole seconds until the limiter's window for this client ends.
function retryAfterSeconds(req: Request, windowMs: number): number {
  const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
  return Math.max(1, Math.ceil(((reset?.getTime() ?? Date.now() + windowMs) - Date.now()) / 1000));
}

function throttled(what: 'address' | 'account from here' | 'account') {
  return (req: Request, res: Response) => {
    const seconds = retryAfterSeconds(req, 15 * 60_000);
    const minutes = Math.ceil(seconds / 60);
    const about = `about ${minutes} minute${minutes === 1 ? '' : 's'}`;
    res.setHeader('Retry-After', String(seconds));
    res
      .status(429)
      .type('html')
      .send(
        messagePage({
          title: 'Too many attempts',
          message:
            what === 'account from here'
              ? `There have been too many unsuccessful sign-ins to this account from your network. To protect it, signing in to it from your network is paused for ${about}. Try again after that.`
              : what === 'account'
                ? `There have been too many unsuccessful sign-ins to this account, from many networks. To protect it, signing in is paused for ${about}. Try again after that.`
                : `There have been too many sign-in attempts from your network. Please wait ${about} and try again.`,
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

// Attempts are limited per client IP (every sign-in and sign-up counts), and failed
// sign-ins per email address twice: per address and client IP (5 in 15 minutes), and per
// address from all clients together (100). The first holds back a guesser at one address
// without locking the owner out from theirs: counted per address alone, 5 failures from
// anywhere locked the owner out of the key page, where a leaked key is revoked (an outside
// probe of stop 47). The second holds back guessing spread over many addresses; someone with
// that many addresses can still pause an account, which is the price of limiting them at all.
// The counters live in Redis when it is configured, like the API's quotas; if Redis is down
// the attempts pass (logged and counted by the store): an outage never locks people out.
//
// Per email, express-rate-limit counts every attempt first (so parallel guesses cannot
// outrun the count) and takes back, when the answer is sent, those the route did not settle:
// a 503 while the database is down, a form error, the 429 itself. The route settles a failed
// sign-in by keeping it counted (`failedSignIn`), and a successful one (`signedIn`) by
// clearing the count of its email and client address, and by taking back its own count from
// the address's count across clients (cleared, it would give a guesser spread over many
// addresses a fresh allowance each time the owner signs in). Against a hung Redis the counts
// of attempts that passed land late (with rate-limit-redis's retry) and nothing would take
// them back: the clearing is what keeps them from locking out a person who signs in
// correctly afterwards (the count across clients is too high for them to matter). The
// clearing is sent after the attempt's own count, which the limiter awaited, and nothing is
// taken back after it.
export interface SignInThrottles {
  perIp: RequestHandler;
  perEmail: RequestHandler[];
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
  const pairStore = createStore(deps.redis, `${deps.redisPrefix}web-failures-email-ip:`, deps.storeHealth, deps.logger);
  const emailStore = createStore(deps.redis, `${deps.redisPrefix}web-failures-email:`, deps.storeHealth, deps.logger);
  const perIp = rateLimit({
    ...common,
    limit: options.attemptsPerIp,
    store: ipStore,
    logger: limiterLogger(ipStore),
    handler: throttled('address'),
  });
  // Failed sign-ins of an email address (a form without one is not counted here).
  const failures = { ...common, skip: (req: Request) => emailKey(req) === null, skipSuccessfulRequests: true } as const;
  const perEmailAndIp = rateLimit({
    ...failures,
    limit: options.failuresPerEmailPerIp,
    store: pairStore,
    logger: limiterLogger(pairStore),
    keyGenerator: (req) => emailAndClientKey(req) ?? '',
    // Taken back unless settled, failed or successful (whose count is then cleared).
    requestWasSuccessful: (_req, res) => res.locals.signIn === undefined,
    handler: throttled('account from here'),
  });
  const perEmail = rateLimit({
    ...failures,
    limit: options.failuresPerEmail,
    store: emailStore,
    logger: limiterLogger(emailStore),
    keyGenerator: (req) => emailKey(req) ?? '',
    // Only a failed sign-in stays counted.
    requestWasSuccessful: (_req, res) => res.locals.signIn !== 'failed',
    handler: throttled('account'),
  });
  return {
    perIp,
    perEmail: [perEmailAndIp, perEmail],
    failedSignIn(res) {
      res.locals.signIn = 'failed';
    },
    signedIn(req, res) {
      res.locals.signIn = 'succeeded';
      const key = emailAndClientKey(req);
      // Counted and logged by the store when it fails; the answer does not wait for it.
      if (key !== null) Promise.resolve(perEmailAndIp.resetKey(key)).catch(() => undefined);
    },
  };
}

// Free keys created on the page per client IP and UTC day, for all accounts together. A
// quota counts per key, and an account costs a sign-up: 5 keys per account and 10 a day did
// not stop one address from making 29 accounts and 134 Free keys in 2 minutes (an outside
// probe of stop 47). Keys made with the admin command line are not counted. Like the
// sign-in throttles: every form sent is counted first (parallel forms cannot outrun the count)
// and taken back when its answer is sent unless it made a key (`created`); kept in Redis when it
// is configured, and if Redis is down keys are created without the limit (an outage never
// locks people out). The day is part of the counter's key, as for the API's daily quota: the
// count starts again at 00:00 UTC.
export interface FreeKeysPerIp {
  limit: number;
  // Before the route: counts the form; over the limit, marks the request (`reached`).
  count: RequestHandler;
  reached(res: Response): boolean;
  created(res: Response): void;
  // The client address's count today, for the page; null when the store does not answer.
  today(req: Request): Promise<number | null>;
}

const DAY_MS = 86_400_000;

export function freeKeysPerIp(deps: ThrottleDeps & { clock: () => Date }): FreeKeysPerIp {
  const store = createStore(deps.redis, `${deps.redisPrefix}web-free-keys-ip:`, deps.storeHealth, deps.logger);
  const keyOf = (req: Request) => `${clientKey(req)}:${utcDay(deps.clock())}`;
  const limit = deps.options.freeKeysPerIpPerDay;
  const count = rateLimit({
    windowMs: DAY_MS + 3_600_000, // counters outlive their day by an hour, then expire
    limit,
    store,
    logger: limiterLogger(store),
    keyGenerator: keyOf,
    standardHeaders: false,
    legacyHeaders: false,
    passOnStoreError: true,
    skipSuccessfulRequests: true,
    requestWasSuccessful: (_req, res) => res.locals.freeKeyCreated !== true,
    validate: { trustProxy: false, xForwardedForHeader: false, singleCount: false },
    // The route says so on the key page, as it does for the account's own daily limit.
    handler: (_req, res, next) => {
      res.locals.freeKeysPerIpReached = true;
      next();
    },
  });
  return {
    limit,
    count,
    reached: (res) => res.locals.freeKeysPerIpReached === true,
    created(res) {
      res.locals.freeKeyCreated = true;
    },
    async today(req) {
      try {
        const hits = (await store.get?.(keyOf(req)))?.totalHits;
        // Nothing counted yet: undefined from the memory store, NaN from rate-limit-redis.
        return typeof hits === 'number' && Number.isSafeInteger(hits) && hits > 0 ? hits : 0;
      } catch {
        return null;
      }
    },
  };
}
