import type { Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, rateLimit, type Store } from 'express-rate-limit';
import onHeaders from 'on-headers';
import { DAILY_QUOTA } from '../domain/tiers.js';
import { dailyQuotaKey, secondsUntilUtcMidnight } from '../rate-limit/quota-counters.js';
import { NearLimitGate } from '../rate-limit/near-limit-gate.js';
import { QuotaRefusals } from '../rate-limit/quota-refusals.js';
import { limiterLogger } from '../rate-limit/store.js';
import { isAnyTag } from './conditional.js';
import { ApiError, type ApiErrorInit } from './errors.js';

const DAY_MS = 86_400_000;
const PRIVATE = 'private, max-age=0, must-revalidate';

// The app's replay of repeated answers (src/http/replay.ts, which imports this file), as the
// quota sees it: it keeps the refusals the full path sends.
interface RefusalRecorder {
  recordRefusal(req: Request, res: Response): void;
}

export interface QuotaInfo {
  limit: number;
  used: number;
  remaining: number;
}

function setQuotaHeaders(res: Response, info: QuotaInfo, now: Date): void {
  const reset = secondsUntilUtcMidnight(now);
  // IETF draft-6 RateLimit fields: the policy (quota per 86,400 s window, resetting at
  // 00:00 UTC) and what remains of it.
  res.setHeader('RateLimit-Policy', `${info.limit};w=86400`);
  res.setHeader('RateLimit-Limit', String(info.limit));
  res.setHeader('RateLimit-Remaining', String(Math.max(0, info.limit - info.used)));
  res.setHeader('RateLimit-Reset', String(reset));
}

// Answers that do not count against the daily quota: 429 (refused) and 304 (a revalidation
// that found the client's copy current: not counting it is the incentive to revalidate
// rather than refetch, as GitHub does). The limiter counts every request on arrival and
// takes these back once the response has finished (express-rate-limit's skipFailedRequests),
// so the count stays exact however many requests run at once.
// Only a revalidation naming the tag of a copy the client holds: `If-None-Match: *` needs no
// copy (an outside probe asked for totals over any filter at no cost that way), nor does an
// If-Modified-Since (any date will do), so their 304s count.
function countsAgainstQuota(req: Request, status: number): boolean {
  return status !== 429 && !(status === 304 && namesHeldCopy(req));
}

function namesHeldCopy(req: Request): boolean {
  const tags = req.headers['if-none-match'];
  return tags !== undefined && !isAnyTag(tags);
}

// The refusal of a request over the daily quota: its RateLimit fields on `res`, and the error
// (429 quota_exceeded with Retry-After to 00:00 UTC).
function quotaExceeded(res: Response, limit: number, now: Date): ApiError {
  setQuotaHeaders(res, { limit, used: limit, remaining: 0 }, now);
  // A keyed answer like any other (an outside probe: the 429 had no Cache-Control).
  res.setHeader('Cache-Control', PRIVATE);
  return new ApiError({ ...quotaExceededProblem(limit), headers: { 'Retry-After': String(secondsUntilUtcMidnight(now)) } });
}

// What the refusal says, whatever the time: its Retry-After and RateLimit-Reset are the
// seconds to 00:00 UTC (secondsUntilUtcMidnight), the other fields as setQuotaHeaders sets them.
export function quotaExceededProblem(limit: number): ApiErrorInit {
  return { status: 429, code: 'quota_exceeded', detail: `The daily quota of ${limit} requests for this key is used up; it resets at 00:00 UTC` };
}

// The daily quota per API key: counted per key and per UTC calendar day (the day is part of
// the counter's key, so it resets at 00:00:00 UTC whatever the store's own window says).
// Requests answered 429 or 304 do not count. Pro and Enterprise have no cap and are not counted.
// A key whose quota is used up gets 429 for conditional requests too: the limiter decides
// before the answer (and so its status) exists. A key the store has just refused is refused
// again without asking it for up to a second (src/rate-limit/quota-refusals.ts), and its
// refusals are offered to the replay of repeated answers (src/http/replay.ts). Near its
// limit, a key's requests are decided one at a time in this process, each once the one before
// it has been answered and taken back (src/rate-limit/near-limit-gate.ts), so that
// revalidations in flight do not get other requests refused.
export function dailyQuota(deps: { store: Store; clock: () => Date; refusals?: QuotaRefusals; gate?: NearLimitGate }): RequestHandler {
  const refusals = deps.refusals ?? new QuotaRefusals();
  const gate = deps.gate ?? new NearLimitGate();
  const limiter = rateLimit({
    windowMs: DAY_MS + 3_600_000, // counters outlive their day by an hour, then expire
    limit: (_req: Request, res: Response) => DAILY_QUOTA[res.locals.apiKey!.tier] ?? Number.MAX_SAFE_INTEGER,
    keyGenerator: (_req: Request, res: Response) => dailyQuotaKey(res.locals.apiKey!.id, deps.clock()),
    store: deps.store,
    standardHeaders: false,
    legacyHeaders: false,
    passOnStoreError: true,
    skipFailedRequests: true,
    requestWasSuccessful: (req: Request, res: Response) => countsAgainstQuota(req, res.statusCode),
    validate: { trustProxy: false, xForwardedForHeader: false, ip: false, singleCount: false },
    logger: limiterLogger(deps.store),
    handler: (req: Request, res: Response) => {
      const now = deps.clock();
      const info = (req as Request & { rateLimit: QuotaInfo & { key: string } }).rateLimit;
      refusals.refuse(res.locals.apiKey!.id, info.key, info.limit, now.getTime());
      gate.saw(res.locals.apiKey!.id, 0);
      (req.app.locals.replay as RefusalRecorder | undefined)?.recordRefusal(req, res);
      throw quotaExceeded(res, info.limit, now);
    },
  });
  // After the limiter let a request through: its quota headers, and the Cache-Control of a
  // keyed answer (it depends on the key: caches may keep it only privately, and revalidate;
  // the ETag makes revalidation cheap).
  const passed = (req: Request, res: Response, next: (err?: unknown) => void) => {
    const info = (req as Request & { rateLimit?: QuotaInfo }).rateLimit;
    if (info) {
      const now = deps.clock();
      const keyId = res.locals.apiKey!.id;
      setQuotaHeaders(res, info, now);
      gate.saw(keyId, info.remaining);
      // A 304 is taken back from the count: its headers say what remains without it, and the
      // key may be under its limit again.
      onHeaders(res, () => {
        if (countsAgainstQuota(req, res.statusCode)) return;
        setQuotaHeaders(res, { ...info, used: info.used - 1 }, now);
        refusals.forget(keyId);
        gate.tookBack(keyId);
      });
    } else if (res.locals.apiKey && DAILY_QUOTA[res.locals.apiKey.tier] !== null) {
      // The store did not answer: served without limiting.
      gate.unanswered(res.locals.apiKey.id);
    }
    res.setHeader('Cache-Control', PRIVATE);
    next();
  };
  // Unlimited tiers bypass the limiter altogether: its middleware does per-request work (three
  // listeners, promises, the client address) before it would even consult a skip function.
  return (req, res, next) => {
    const key = res.locals.apiKey!;
    const limit = DAILY_QUOTA[key.tier];
    if (limit === null) return passed(req, res, next);
    const now = deps.clock();
    if (refusals.refuses(key.id, dailyQuotaKey(key.id, now), limit, now.getTime())) return next(quotaExceeded(res, limit, now));
    // Only a revalidation may be taken back (as a 304): it takes the key's turn alone, until it
    // has its answer; plain requests share it (their count is final once the store has answered).
    const revalidation = namesHeldCopy(req);
    gate.enter(key.id, (release) => {
      if (res.destroyed || req.socket.destroyed) return release(); // the client left while it waited
      // (Refused meanwhile by the request before it?)
      const at = deps.clock();
      if (refusals.refuses(key.id, dailyQuotaKey(key.id, at), limit, at.getTime())) {
        release();
        return next(quotaExceeded(res, limit, at));
      }
      // Only a revalidation may be taken back (as a 304): it holds the turn until it has its
      // answer. If that answer counts, the count is final when its headers are written; if it
      // is a 304 (or a 429), once it has been sent, when the limiter has sent its take-back to
      // the store (on 'finish', a few microtasks on), ahead of the next request's increment.
      // Any other request's count is final once the limiter has decided: the turn passes on
      // then, so that slow answers (an outside probe: a /changes page waiting for its turn)
      // hold up nothing.
      if (revalidation) {
        res.once('close', () => setImmediate(release));
        onHeaders(res, () => countsAgainstQuota(req, res.statusCode) && release());
      }
      limiter(req, res, (err?: unknown) => {
        if (!revalidation) setImmediate(release);
        return err ? next(err) : passed(req, res, next);
      });
    }, { exclusive: revalidation });
  };
}

// GET /api/v1/stats needs no key: it is limited per client IP (req.ip honours
// X-Forwarded-For only from the trusted proxies of TRUST_PROXY; IPv6 by /56, as
// express-rate-limit's own key). `statsClientKey` is the client's key in the store, for the
// replay of repeated answers (src/http/replay.ts) too.
export const STATS_WINDOW_MS = 60_000;

export function statsClientKey(ip: string | undefined): string {
  return ipKeyGenerator(ip ?? '');
}

export function statsLimit(deps: { store: Store; perMinute: number }): RequestHandler {
  return rateLimit({
    windowMs: STATS_WINDOW_MS,
    limit: deps.perMinute,
    store: deps.store,
    // ipKeyGenerator named here: express-rate-limit reads a key generator's source and warns
    // about one that uses req.ip without it.
    keyGenerator: (req: Request) => ipKeyGenerator(req.ip ?? ''),
    standardHeaders: 'draft-6',
    legacyHeaders: false,
    passOnStoreError: true,
    validate: { trustProxy: false, xForwardedForHeader: false, singleCount: false },
    logger: limiterLogger(deps.store),
    handler: (_req: Request, res: Response) => {
      const retry = res.getHeader('Retry-After') ?? '60';
      throw new ApiError({
        status: 429,
        code: 'rate_limited',
        detail: `Too many requests from this address: at most ${deps.perMinute} per minute`,
        headers: { 'Retry-After': String(retry) },
      });
    },
  });
}
