import type { Request, RequestHandler, Response } from 'express';
import { MemoryStore, rateLimit, type IncrementResponse, type Options, type Store } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import onHeaders from 'on-headers';
import type { Logger } from 'pino';
import { RedisStore } from 'rate-limit-redis';
import { DAILY_QUOTA } from '../domain/tiers.js';
import { ApiError } from './errors.js';

const DAY_MS = 86_400_000;

export function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

export function secondsUntilUtcMidnight(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

export interface StoreHealth {
  errors: number;
  lastError: Date | null;
}

// Wraps the real store (Redis, or memory when no Redis is configured) so that a store
// error is counted and logged (throttled) before express-rate-limit lets the request pass.
// Each store operation also gets one overall deadline: rate-limit-redis retries a failed
// EVALSHA with SCRIPT LOAD + EVALSHA whatever the error was, so against a hung Redis one
// increment would cost two or three command timeouts; the deadline keeps it to one.
class GuardedStore implements Store {
  localKeys: boolean;
  prefix?: string;
  constructor(
    private readonly inner: Store,
    private readonly health: StoreHealth,
    private readonly logger: Logger,
    private readonly label: string,
    private readonly deadlineMs: number | null = null,
  ) {
    this.localKeys = inner.localKeys ?? false;
    this.prefix = inner.prefix;
  }
  init(options: Options): void {
    this.inner.init?.(options);
  }
  // express-rate-limit's own logger: store errors reach it only after fail() has counted
  // and logged them (throttled), so they are dropped here instead of being written to the
  // console once per request; anything else goes to the service's log.
  readonly limiterLogger = {
    error: (err: unknown, message?: string) => {
      if (typeof message === 'string' && message.includes('error from store')) return;
      this.logger.error({ err: { message: (err as Error)?.message ?? String(err) }, store: this.label }, message ?? 'express-rate-limit error');
    },
    warn: (err: unknown, message?: string) => {
      this.logger.warn({ err: { message: (err as Error)?.message ?? String(err) }, store: this.label }, message ?? 'express-rate-limit warning');
    },
  };
  private lastLog = 0;
  private fail(err: unknown): never {
    this.health.errors++;
    this.health.lastError = new Date();
    const now = Date.now();
    if (now - this.lastLog > 10_000) {
      this.lastLog = now;
      this.logger.error({ err: { message: (err as Error)?.message }, store: this.label, errors: this.health.errors }, 'rate-limit store unavailable: request served without limiting');
    }
    throw err;
  }
  private bounded<T>(op: () => T | Promise<T>): Promise<T> {
    const run = new Promise<T>((resolve) => resolve(op())); // a synchronous throw rejects too
    const ms = this.deadlineMs;
    if (ms === null) return run;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`rate-limit store did not answer within ${ms} ms`)), ms);
    });
    // Promise.race subscribes to op's promise, so its late rejection is never unhandled.
    return Promise.race([run, deadline]).finally(() => clearTimeout(timer));
  }
  async increment(key: string): Promise<IncrementResponse> {
    try {
      return await this.bounded(() => this.inner.increment(key));
    } catch (err) {
      this.fail(err);
    }
  }
  async decrement(key: string): Promise<void> {
    try {
      await this.bounded(() => this.inner.decrement(key));
    } catch (err) {
      this.fail(err);
    }
  }
  async resetKey(key: string): Promise<void> {
    await this.bounded(() => this.inner.resetKey(key));
  }
  async get(key: string) {
    return this.bounded(() => this.inner.get?.(key));
  }
}

// The logger to give express-rate-limit for a store (its default writes to the console).
function limiterLogger(store: Store) {
  return store instanceof GuardedStore ? store.limiterLogger : undefined;
}

export function createStore(redis: Redis | null, prefix: string, health: StoreHealth, logger: Logger): Store {
  if (!redis) return new GuardedStore(new MemoryStore(), health, logger, 'memory');
  const store = new RedisStore({
    prefix,
    sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<never>,
  });
  // rate-limit-redis loads its Lua scripts in its constructor; with Redis down that promise
  // rejects before anyone awaits it. Mark it handled: the store reloads the script on the
  // next increment, which is how limiting resumes once Redis is back.
  const s = store as unknown as { incrementScriptSha: Promise<string>; getScriptSha: Promise<string> };
  s.incrementScriptSha.catch(() => undefined);
  s.getScriptSha.catch(() => undefined);
  // One store operation is at most one round trip over a few ms in health, three when the
  // script must be reloaded (after a Redis restart): bound the whole by the client's
  // command timeout plus a little, so a hung Redis costs a request about one timeout.
  const commandTimeout = redis.options.commandTimeout ?? 500;
  return new GuardedStore(store, health, logger, 'redis', commandTimeout + 50);
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
function countsAgainstQuota(status: number): boolean {
  return status !== 429 && status !== 304;
}

// The daily quota per API key: counted per key and per UTC calendar day (the day is part of
// the counter's key, so it resets at 00:00:00 UTC whatever the store's own window says).
// Requests answered 429 or 304 do not count. Pro and Enterprise have no cap and are not counted.
// A key whose quota is used up gets 429 for conditional requests too: the limiter decides
// before the answer (and so its status) exists.
export function dailyQuota(deps: { store: Store; clock: () => Date }): RequestHandler[] {
  const limiter = rateLimit({
    windowMs: DAY_MS + 3_600_000, // counters outlive their day by an hour, then expire
    limit: (_req: Request, res: Response) => DAILY_QUOTA[res.locals.apiKey!.tier] ?? Number.MAX_SAFE_INTEGER,
    skip: (_req: Request, res: Response) => DAILY_QUOTA[res.locals.apiKey!.tier] === null,
    keyGenerator: (_req: Request, res: Response) => `${res.locals.apiKey!.id}:${utcDay(deps.clock())}`,
    store: deps.store,
    standardHeaders: false,
    legacyHeaders: false,
    passOnStoreError: true,
    skipFailedRequests: true,
    requestWasSuccessful: (_req: Request, res: Response) => countsAgainstQuota(res.statusCode),
    validate: { trustProxy: false, xForwardedForHeader: false, ip: false, singleCount: false },
    logger: limiterLogger(deps.store),
    handler: (req: Request, res: Response) => {
      const now = deps.clock();
      const info = (req as Request & { rateLimit: QuotaInfo }).rateLimit;
      setQuotaHeaders(res, info, now);
      throw new ApiError({
        status: 429,
        code: 'quota_exceeded',
        detail: `The daily quota of ${info.limit} requests for this key is used up; it resets at 00:00 UTC`,
        headers: { 'Retry-After': String(secondsUntilUtcMidnight(now)) },
      });
    },
  });
  const headers: RequestHandler = (req, res, next) => {
    const info = (req as Request & { rateLimit?: QuotaInfo }).rateLimit;
    if (info) {
      const now = deps.clock();
      setQuotaHeaders(res, info, now);
      // A 304 is taken back from the count: its headers say what remains without it.
      onHeaders(res, () => {
        if (!countsAgainstQuota(res.statusCode)) setQuotaHeaders(res, { ...info, used: info.used - 1 }, now);
      });
    }
    next();
  };
  return [limiter, headers];
}

// GET /api/v1/stats needs no key: it is limited per client IP (req.ip honours
// X-Forwarded-For only from the trusted proxies of TRUST_PROXY).
export function statsLimit(deps: { store: Store; perMinute: number }): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit: deps.perMinute,
    store: deps.store,
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
