import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response } from 'express';
import type { Store } from 'express-rate-limit';
import type { Logger } from 'pino';
import onHeaders from 'on-headers';
import { hashApiKey } from '../auth/api-key.js';
import type { KeyUsageTracker } from '../auth/key-usage.js';
import { cachedBodyWeight, type CachedBody } from '../cache/cached-body.js';
import type { LiveState } from '../cache/live-state.js';
import { DAILY_QUOTA } from '../domain/tiers.js';
import type { Metrics } from '../metrics.js';
import { dailyQuotaKey, secondsUntilUtcMidnight } from '../rate-limit/quota-counters.js';
import type { QuotaRefusals } from '../rate-limit/quota-refusals.js';
import { requestKey } from './auth.js';
import { ApiError, problemJson } from './errors.js';
import { quotaExceededProblem } from './quota.js';
import { requestIdFor } from './request-id.js';
import { loggedPath } from './logged-path.js';

// The lean path of a repeated request (issue 15): an answer the API has sent once is sent
// again, byte for byte and header for header, without Express (no router, no middleware, no
// prototype swap of req and res), while what it depends on is unchanged. Answers qualify when
// nothing about them varies per request:
// - a GET (not HEAD) without If-None-Match / If-Modified-Since (those go through Express,
//   which answers 304 when due);
// - with a key this process verified before and still holds (src/cache/live-state.ts: trusted
//   only while the database's notifications are known to arrive, so a revoked key falls
//   through to the full path, and its 401, at once);
// - of an unlimited tier (Pro, Enterprise): no quota to count, no RateLimit fields that change;
// - at the same data version (and, for answers read from the market snapshots, the same
//   snapshots' version and UTC day), for the same kind of key (tier) and the same URL;
// - with an Accept-Encoding value the full path has negotiated already.
// Anything else, and every first request, goes through Express, which records what it sent
// (src/http/send-cached-body.ts). Per request the replay still gives the answer its own
// X-Request-Id, records the key's use, counts it in the request metrics (under the route the
// full path matched) and, while request logs are on (LOG_LEVEL info or lower), writes its log
// line with pino-http's fields and message, as the full path does.
//
// The refusal of a key over its daily quota is sent again the same way (a Free key over its
// quota may send little else): once the full path has refused a URL for a tier, a key of that
// tier that the quota's refusals hold (src/rate-limit/quota-refusals.ts: refused by the store
// within the last second, nothing taken back since) gets the same 429 for that URL, with its
// own X-Request-Id, request_id and the seconds to 00:00 UTC (Retry-After, RateLimit-Reset)
// computed as the full path computes them, and no ETag (no error answer carries one:
// src/http/conditional.ts, settleValidators).

export interface ReplayScope {
  // An answer that needs no key (GET /api/v1/stats): sent again to any request of that URL,
  // each counted in the per-IP limit (`open` of the replay's dependencies).
  open?: boolean;
  // The data version the answer was read at, when no key's lookup set it (res.locals).
  version?: number;
  // The market snapshots' version the answer was read at (the history), if any.
  snapshots?: number;
  // The answer depends on the UTC day (a default date range): replayed only until its end.
  untilMs?: number;
}

interface Entry {
  tier: string;
  data: number;
  snapshots: number | null;
  untilMs: number;
  body: CachedBody;
  jsonBytes: number;
  // Flat [name, value, ...]: the headers sent, without X-Request-Id and the per-encoding ones.
  headers: string[];
  weight: number;
  route: string;
}

// Headers that differ per request or per encoding, written by serve() itself.
const OWN = new Set(['x-request-id', 'content-encoding', 'content-length']);
// ... and those of an answer under the per-IP limit (its RateLimit fields, counted per request).
const OWN_OPEN = new Set([...OWN, 'ratelimit-policy', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']);
// ... and those of a refusal (the seconds to 00:00 UTC), and the ETag res.send set on its body,
// which the full path drops as its headers are written (src/http/conditional.ts).
const OWN_REFUSAL = new Set([...OWN, 'etag', 'retry-after', 'ratelimit-reset']);

interface Refusal {
  // Flat [name, value, ...], without OWN_REFUSAL.
  headers: string[];
  route: string;
}
const MIN_COMPRESS = 1024;

export class AnswerReplay {
  private entries = new Map<string, Entry>();
  // The quota refusals sent by the full path, by tier and URL.
  private refusals = new Map<string, Refusal>();
  private problems = new Map<number, ApiError>();
  private weight = 0;
  private version = -1;
  // Answers sent by the replay (tests and diagnostics read it).
  served = 0;

  constructor(
    private readonly deps: {
      live: LiveState;
      usage?: KeyUsageTracker;
      clock: () => Date;
      metrics?: Metrics;
      // The encoding negotiated before for an Accept-Encoding value (src/http/send-cached-body.ts).
      encodingFor: (acceptEncoding: string) => string | false | undefined;
      // Keys refused over their daily quota within the last second (src/http/quota.ts).
      refusals?: QuotaRefusals;
      // The per-IP limit of the answers that need no key (src/http/quota.ts, statsLimit).
      open?: OpenLimit;
      // Where each answer's log line goes, while request logs are on.
      logger?: Logger;
    },
    private readonly maxWeight = 8 * 1024 * 1024,
    private readonly maxEntries = 5_000,
  ) {}

  // Keeps what the full path is about to send (status 200, its headers set, before the
  // per-encoding ones), when the answer qualifies.
  record(req: Request, res: Response, body: CachedBody, scope: ReplayScope = {}): void {
    const key = res.locals.apiKey;
    const data = scope.version ?? res.locals.dataVersion;
    if (req.method !== 'GET' || res.statusCode !== 200 || data === undefined) return;
    const open = scope.open === true;
    if (open ? !this.deps.open : !key || DAILY_QUOTA[key.tier] !== null) return;
    if (data !== this.deps.live.currentVersion()) return; // read at an older version than the one now current
    if (data > this.version) {
      this.entries.clear();
      this.weight = 0;
      this.version = data;
    }
    const headers = headersOf(res, open ? OWN_OPEN : OWN);
    const id = open ? `* ${req.originalUrl}` : `${key!.tier} ${req.originalUrl}`;
    const previous = this.entries.get(id);
    if (previous) {
      this.entries.delete(id);
      this.weight -= previous.weight;
    }
    const entry: Entry = { tier: open ? '*' : key!.tier, data, snapshots: scope.snapshots ?? null, untilMs: scope.untilMs ?? Infinity, body, jsonBytes: Buffer.byteLength(body.json), headers, weight: cachedBodyWeight(body) + 64 * headers.length, route: this.deps.metrics?.routeOf(req) ?? 'unmatched' };
    this.entries.set(id, entry);
    this.weight += entry.weight;
    while (this.entries.size > this.maxEntries || (this.weight > this.maxWeight && this.entries.size > 1)) {
      const [oldestId, oldest] = this.entries.entries().next().value as [string, Entry];
      this.entries.delete(oldestId);
      this.weight -= oldest.weight;
    }
  }

  // Sends the recorded answer and returns true, or returns false (and touches nothing) when
  // the request must go through the full path.
  // `fullPath` answers a request the replay took but cannot finish itself (over the per-IP limit).
  serve(req: IncomingMessage, res: ServerResponse, fullPath: () => void): boolean {
    if ((this.entries.size === 0 && this.refusals.size === 0) || req.method !== 'GET') return false;
    const startedAt = this.deps.metrics || this.deps.logger ? performance.now() : 0;
    const h = req.headers;
    if (h['if-none-match'] !== undefined || h['if-modified-since'] !== undefined) return false;
    const open = this.entries.get(`* ${req.url}`);
    if (open) return this.serveOpen(req, res, open, startedAt, fullPath);
    const raw = requestKey(req);
    if (typeof raw !== 'string') return false;
    const live = this.deps.live;
    const key = live.key(hashApiKey(raw));
    if (!key) return false;
    const limit = DAILY_QUOTA[key.tier];
    if (limit !== null) return this.refuse(req, res, key.id, key.tier, limit, startedAt);
    const entry = this.entries.get(`${key.tier} ${req.url}`);
    if (!entry || entry.data !== live.currentVersion()) return false;
    if (entry.snapshots !== null && entry.snapshots !== live.currentSnapshotVersion()) return false;
    const now = this.deps.clock();
    if (entry.untilMs !== Infinity && now.getTime() >= entry.untilMs) return false;
    const out = this.bodyFor(req, entry);
    if (!out) return false;
    this.deps.usage?.record(key.id, now);
    this.send(req, res, entry, out, [], startedAt, key.id);
    return true;
  }

  // The recorded body in the encoding the client takes, with its per-request headers; null when
  // the full path must make that encoding first.
  private bodyFor(req: IncomingMessage, entry: Entry): Out | null {
    const body = entry.body;
    let bytes: Buffer | string = body.json;
    let length = entry.jsonBytes;
    let encoding: string | null = null;
    if (body.json.length >= MIN_COMPRESS) {
      const chosen = this.deps.encodingFor(req.headers['accept-encoding'] ?? '');
      if (chosen === undefined) return null;
      if (chosen === 'br' || chosen === 'gzip' || chosen === 'deflate') {
        const compressed = body[chosen];
        if (compressed === undefined) return null; // the full path makes it (once)
        bytes = compressed;
        length = compressed.length;
        encoding = chosen;
      }
    }
    const requestId = requestIdFor(req.headers['x-request-id']);
    const headers = ['X-Request-Id', requestId];
    if (encoding !== null) headers.push('Content-Encoding', encoding);
    headers.push('Content-Length', String(length));
    return { bytes, headers, requestId };
  }

  private send(req: IncomingMessage, res: ServerResponse, entry: Entry, out: Out, more: string[], startedAt: number, keyId?: string): void {
    res.writeHead(200, [...entry.headers, ...more, ...out.headers]);
    res.end(out.bytes);
    this.sent(req, 200, entry.route, startedAt, out.requestId, keyId);
  }

  // What the full path does once an answer is sent: the request metrics, the request's log line
  // (pino-http's fields and message, src/app.ts) while request logs are on.
  private sent(req: IncomingMessage, status: number, route: string, startedAt: number, requestId: string, keyId?: string, rejection?: 'daily_quota'): void {
    this.deps.metrics?.observe('GET', route, status, startedAt, rejection);
    const logger = this.deps.logger;
    if (logger) {
      const path = loggedPath(req.url ?? '');
      const ms = Math.round(performance.now() - startedAt);
      logger.info({ req: { method: 'GET', path }, request_id: requestId, key_id: keyId, res: { status }, responseTime: ms }, `GET ${path} ${status} ${ms}ms`);
    }
    this.served++;
  }

  // An answer that needs no key, counted in the per-IP limit as the full path counts it (the
  // same store and client key); the full path answers a request over the limit (after this count
  // is taken back, so the request is counted once). When the store fails the answer is sent
  // without RateLimit fields, as the full path does (the store has logged and counted the error).
  private serveOpen(req: IncomingMessage, res: ServerResponse, entry: Entry, startedAt: number, fullPath: () => void): boolean {
    const limiter = this.deps.open;
    if (!limiter || entry.data !== this.deps.live.currentVersion()) return false;
    const out = this.bodyFor(req, entry);
    if (!out) return false;
    const client = limiter.keyOf(req);
    new Promise<Awaited<ReturnType<Store['increment']>>>((resolve) => resolve(limiter.store.increment(client))).then(
      ({ totalHits, resetTime }) => {
        if (totalHits > limiter.limit) {
          void Promise.resolve(limiter.store.decrement(client)).catch(() => undefined).then(fullPath);
          return;
        }
        this.send(req, res, entry, out, rateLimitFields(limiter, totalHits, resetTime), startedAt);
      },
      () => this.send(req, res, entry, out, [], startedAt),
    );
    return true;
  }

  // Keeps the headers of a quota refusal the full path is about to send (called by the
  // quota's limiter when it refuses; the headers are read when they are written).
  recordRefusal(req: Request, res: Response): void {
    const key = res.locals.apiKey;
    if (req.method !== 'GET' || !key) return;
    const id = `${key.tier} ${req.originalUrl}`;
    onHeaders(res, () => {
      if (res.statusCode !== 429) return;
      if (this.refusals.size >= this.maxEntries && !this.refusals.has(id)) this.refusals.clear();
      this.refusals.set(id, { headers: headersOf(res, OWN_REFUSAL), route: this.deps.metrics?.routeOf(req) ?? 'unmatched' });
    });
  }

  // Sends the refusal of a key held over its daily quota, as the full path would; false when
  // the key is not held or the full path has not refused this URL for the tier yet.
  private refuse(req: IncomingMessage, res: ServerResponse, keyId: string, tier: string, limit: number, startedAt: number): boolean {
    const refusal = this.refusals.get(`${tier} ${req.url}`);
    if (!refusal || !this.deps.refusals) return false;
    const now = this.deps.clock();
    if (!this.deps.refusals.refuses(keyId, dailyQuotaKey(keyId, now), limit, now.getTime())) return false;
    const headers = refusal.headers.slice();
    const reset = String(secondsUntilUtcMidnight(now));
    const requestId = requestIdFor(req.headers['x-request-id']);
    // One error object per limit (an Error captures a stack trace when made).
    let problem = this.problems.get(limit);
    if (!problem) this.problems.set(limit, (problem = new ApiError(quotaExceededProblem(limit))));
    const body = problemJson(problem, requestId);
    headers.push('RateLimit-Reset', reset, 'Retry-After', reset, 'X-Request-Id', requestId, 'Content-Length', String(Buffer.byteLength(body)));
    this.deps.usage?.record(keyId, now);
    res.writeHead(429, headers);
    res.end(body);
    this.sent(req, 429, refusal.route, startedAt, requestId, keyId, 'daily_quota');
    return true;
  }

  get size(): number {
    return this.entries.size;
  }
}

// A recorded body as one request gets it.
interface Out {
  bytes: Buffer | string;
  headers: string[];
  requestId: string;
}

// The per-IP limit of the answers that need no key, as the full path applies it.
export interface OpenLimit {
  store: Store;
  limit: number;
  windowMs: number;
  // The client's key in the store (the limiter's keyGenerator).
  keyOf(req: IncomingMessage): string;
}

// express-rate-limit's draft-6 fields (standardHeaders: 'draft-6'), as it computes them.
function rateLimitFields(l: OpenLimit, totalHits: number, resetTime: Date | undefined): string[] {
  const reset = resetTime ? Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000)) : Math.ceil(l.windowMs / 1000);
  return [
    'RateLimit-Policy', `${l.limit};w=${Math.ceil(l.windowMs / 1000)}`,
    'RateLimit-Limit', String(l.limit),
    'RateLimit-Remaining', String(Math.max(l.limit - totalHits, 0)),
    'RateLimit-Reset', String(reset),
  ];
}

// The headers set on `res` (names as they were set: node:http has getRawHeaderNames on every
// outgoing message, its types only on ClientRequest), as a flat [name, value, ...], without those in `skip`.
function headersOf(res: ServerResponse, skip: ReadonlySet<string>): string[] {
  const headers: string[] = [];
  for (const name of (res as unknown as { getRawHeaderNames(): string[] }).getRawHeaderNames()) {
    if (skip.has(name.toLowerCase())) continue;
    const value = res.getHeader(name);
    if (Array.isArray(value)) for (const v of value) headers.push(name, v);
    else if (value !== undefined) headers.push(name, String(value));
  }
  return headers;
}
