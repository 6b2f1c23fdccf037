import compression from 'compression';
import cors from 'cors';
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express, type NextFunction, type RequestHandler } from 'express';
import type { Store } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { loggedPath } from './http/logged-path.js';
import proxyAddr from 'proxy-addr';
import type { KeyUsageTracker } from './auth/key-usage.js';
import { createApiCaches } from './cache/api-caches.js';
import type { LiveState } from './cache/live-state.js';
import { NO_ANSWER_MARGIN_MS } from './db/knex.js';
import type { ReadsAt } from './db/read-replica.js';
import type { Config } from './config.js';
import { requireApiKey } from './http/auth.js';
import { useConditionalGet } from './http/conditional.js';
import { describeCompressedGet } from './http/head-encoding.js';
import { errorHandler, methodNotAllowed, notFoundHandler } from './http/errors.js';
import { parseQuery } from './http/query-string.js';
import { dailyQuota, STATS_WINDOW_MS, statsClientKey, statsLimit } from './http/quota.js';
import { AnswerReplay } from './http/replay.js';
import { QuotaRefusals } from './rate-limit/quota-refusals.js';
import { requestId } from './http/request-id.js';
import { negotiatedEncoding } from './http/send-cached-body.js';
import { buildOpenApiDocument } from './http/openapi.js';
import { changesRouter } from './http/routes/changes.js';
import { exportRoute } from './http/routes/export.js';
import { communesRouter } from './http/routes/communes.js';
import { docsRouter, openApiRoute } from './http/routes/docs.js';
import { healthRouter } from './http/routes/health.js';
import { listingsRouter } from './http/routes/listings.js';
import { marketRouter } from './http/routes/market.js';
import { statsRouter } from './http/routes/stats.js';
import { createMetrics, type Metrics } from './metrics.js';
import type { Gazetteer } from './reference/gazetteer.js';
import { createStore, newStoreHealth, type StoreHealth } from './rate-limit/store.js';
import type { ReadModel } from './read-model/queries.js';
import { createListingRows } from './services/listing-rows.js';
import { createListingSearch } from './services/listing-search.js';
import { createMarketPrices } from './services/market-prices.js';
import type { WebOptions } from './web/options.js';
import { webRouter } from './web/index.js';

export interface AppDeps {
  config: Pick<Config, 'PUBLIC_BASE_URL' | 'TRUST_PROXY' | 'STATS_RATE_LIMIT_PER_MINUTE'> & Partial<Pick<Config, 'PAGES_RATE_LIMIT_PER_MINUTE' | 'DB_STATEMENT_TIMEOUT_MS' | 'EXPORT_CLIENT_TIMEOUT_MS' | 'DB_POOL_MAX'>>;
  db: Knex;
  redis: Redis | null;
  logger: Logger;
  gazetteer: Gazetteer;
  clock?: () => Date;
  keyUsage?: KeyUsageTracker;
  // Tests may inject stores; by default Redis when configured, else in-process memory.
  quotaStore?: Store;
  statsStore?: Store;
  redisPrefix?: string;
  // The in-memory read model of active listings (server.ts creates it unless turned off).
  readModel?: ReadModel;
  // The data version and verified keys kept in memory, invalidated by the database's
  // notifications (server.ts starts one; without it every request asks the database).
  live?: LiveState;
  // DATABASE_READ_URL: where reads at a data version go (src/db/read-replica.ts); else `db`.
  reads?: ReadsAt;
  // Per database (the primary, the replica), the small pool its page rows are read on
  // (server.ts, DB_ROWS_POOL_MAX); a database not in it reads them on its own pool.
  rowPools?: ReadonlyMap<Knex, Knex>;
  // Whether request metrics are collected (server.ts: only when METRICS_PORT serves them).
  metrics?: boolean;
  // Web pages: bcrypt cost, sign-in throttling limits, session lifetime (tests tune them).
  web?: Partial<WebOptions>;
}

export interface App extends Express {
  locals: Express['locals'] & { storeHealth: StoreHealth; metrics: Metrics; replay?: AnswerReplay };
}

// The path as logged (src/http/logged-path.ts); originalUrl because routers rewrite req.url while
// they run.
function pathOf(req: { url?: string; originalUrl?: string }): string {
  return loggedPath(String(req.originalUrl ?? req.url));
}

// What a request's line says of its answer. A request whose client went away before its answer
// was sent has no status (it was logged as a 200 never sent: an outside probe of stop 57), and one
// cut while its answer was being sent (an export, a page of changes) is said to be cut.
type Answered = { statusCode: number; headersSent: boolean; writableEnded: boolean };

function answerOf(res: Answered): { status: number | null; aborted?: true } {
  if (!res.headersSent) return { status: null, aborted: true };
  return res.writableEnded ? { status: res.statusCode } : { status: res.statusCode, aborted: true };
}

// The same, as the line's message says it.
function statusText(res: Answered): string {
  const { status, aborted } = answerOf(res);
  if (status === null) return 'aborted (no answer sent)';
  return aborted ? `${status} aborted (cut while sent)` : String(status);
}

// Paths whose answers are sent by src/http/send-cached-body.ts, already compressed (not the
// export, a stream that the middleware compresses).
const SELF_COMPRESSED = /^\/api\/v1\/(?:listings(?!\/export(?:[/?]|$))|market\/prices|stats)(?:[/?]|$)/;

// Builds the Express application; never listens (server.ts does, tests use supertest).
export function buildApp(deps: AppDeps): App {
  const clock = deps.clock ?? (() => new Date());
  const prefix = deps.redisPrefix ?? 'lf:';
  const storeHealth: StoreHealth = newStoreHealth();
  const quotaStore = deps.quotaStore ?? createStore(deps.redis, `${prefix}quota:`, storeHealth, deps.logger);
  const statsStore = deps.statsStore ?? createStore(deps.redis, `${prefix}stats-ip:`, storeHealth, deps.logger);

  const caches = createApiCaches();
  const app = express() as App;
  app.locals.storeHealth = storeHealth;
  const metrics = createMetrics({ db: deps.db, rowsDb: deps.rowPools?.get(deps.db), storeHealth });
  app.locals.metrics = metrics;
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.TRUST_PROXY);
  app.set('query parser', parseQuery); // repeated parameters arrive as arrays and are refused
  app.set('json spaces', 0);
  // If-None-Match is honoured even when the request also says Cache-Control: no-cache; a 304 sheds
  // its content headers, and an answer that is not 2xx its ETag (src/http/conditional.ts).
  useConditionalGet(app);

  // Every answer, API and pages alike, errors and 304s included: a browser must never sniff
  // a body into another type than the one sent (an error echoing input, read as HTML).
  app.use((req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    requestId(req, res, next);
  });
  // Request metrics only when something serves them (METRICS_PORT): the per-request
  // bookkeeping is wasted otherwise.
  if (deps.metrics !== false) app.use(metrics.middleware);
  // gzip or brotli (whichever the client prefers) for bodies over 1 KB. The answers kept ready
  // to send (listings, market prices, stats) carry their compressed forms already
  // (src/http/send-cached-body.ts): the compression middleware stays out of their way.
  // NDJSON (the export) too, which the default filter does not know as compressible.
  const compressionOptions = {
    threshold: 1024,
    filter: (req: express.Request, res: express.Response) => /^application\/x-ndjson\b/.test(String(res.getHeader('Content-Type') ?? '')) || compression.filter(req, res),
  };
  const compress = compression(compressionOptions);
  // Vary: Accept-Encoding on every answer the middleware may compress, 304s included (RFC 9110
  // §15.4.5: a 304 carries the Vary its 200 would). The middleware adds it only to answers of
  // a compressible type, and Express strips a 304's Content-Type before the middleware looks.
  app.use((req, res, next) => {
    if (SELF_COMPRESSED.test(req.url)) return next();
    res.vary('Accept-Encoding');
    if (req.method === 'HEAD') describeCompressedGet(req, res, compressionOptions);
    compress(req, res, next);
  });
  const withIds = (line: object, res: express.Response) => ({ ...line, request_id: res.locals.requestId, key_id: res.locals.apiKey?.id });
  // One log line per request at level info; when the level is higher nothing would be
  // written, so the per-request logging machinery is left out of the hot path.
  const logsRequests = deps.logger.isLevelEnabled('info');
  if (logsRequests) app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId: (_req, res) => (res as express.Response).locals.requestId ?? '',
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
      serializers: {
        req: (req) => ({ method: req.method, path: pathOf(req) }),
        res: (res) => answerOf(res),
      },
      // The request's id and key added to the finished line only: pino-http's customProps are
      // bound twice (at the start, when no key is known yet, and at the end), which wrote
      // request_id twice on every line of a request with a key.
      customSuccessObject: (_req, res, line) => withIds(line, res as express.Response),
      // Without pino-http's own `err`: for an answer of 500 or more it makes up an Error ("failed
      // with status code 503") whose stack is pino-http's; the error handler logs the real one.
      customErrorObject: (_req, res, _err, { err: _made, ...line }) => withIds(line, res as express.Response),
      customSuccessMessage: (req, res, ms) => `${req.method} ${pathOf(req)} ${statusText(res)} ${Math.round(ms)}ms`,
      customErrorMessage: (req, res) => `${req.method} ${pathOf(req)} ${res.statusCode}`,
      wrapSerializers: false,
    }),
  );

  // Browsers may call the API from any origin: no cookies are involved (keys travel in
  // Authorization), so a wildcard is safe. Not applied to the HTML pages.
  app.use(
    '/api/v1',
    cors({
      origin: '*',
      // As strings: the cors package joins arrays again on every request.
      methods: 'GET,HEAD,OPTIONS',
      allowedHeaders: 'Authorization,If-None-Match,X-Request-Id,Content-Type',
      exposedHeaders: 'RateLimit-Policy,RateLimit-Limit,RateLimit-Remaining,RateLimit-Reset,RateLimit,Retry-After,ETag,Link,X-Request-Id,WWW-Authenticate,X-Changes-Cursor',
      maxAge: 600,
    }),
  );

  // The API is read-only: anything but GET/HEAD is refused before authentication.
  const readOnly: RequestHandler = (req, _res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    next(methodNotAllowed(req.method, 'the API'));
  };
  app.use('/api/v1', readOnly);

  app.get('/api/v1/openapi.json', openApiRoute(buildOpenApiDocument({ serverUrl: deps.config.PUBLIC_BASE_URL })));
  app.use('/docs', docsRouter({ https: deps.config.PUBLIC_BASE_URL.startsWith('https:') }));
  app.use('/api/v1/stats', statsLimit({ store: statsStore, perMinute: deps.config.STATS_RATE_LIMIT_PER_MINUTE }), statsRouter({ db: deps.db, reads: deps.reads, caches, live: deps.live }));

  // Keys the quota store has just refused, shared by the quota and the replay.
  const refusals = new QuotaRefusals();
  const keyed = express.Router();
  // How long a request waits for PostgreSQL before it is answered 503 (src/db/knex.ts).
  const databaseBoundMs = (deps.config.DB_STATEMENT_TIMEOUT_MS ?? 10_000) + NO_ANSWER_MARGIN_MS;
  // The key, then its daily quota (which also marks keyed answers private: src/http/quota.ts).
  // Requests pipelined on one connection one after the other (src/http/one-answer-at-a-time.ts).
  keyed.use(requireApiKey({ db: deps.db, live: deps.live, usage: deps.keyUsage, clock }), dailyQuota({ store: quotaStore, clock, refusals }));
  const rowPools = deps.rowPools;
  const rows = createListingRows(rowPools ? { poolFor: (db) => rowPools.get(db) ?? db } : {});
  const search = createListingSearch({ db: deps.db, reads: deps.reads, caches, readModel: deps.readModel, rows });
  keyed.get(
    '/listings/export',
    exportRoute({
      db: deps.db,
      baseUrl: deps.config.PUBLIC_BASE_URL,
      stallMs: databaseBoundMs,
      clientTimeoutMs: deps.config.EXPORT_CLIENT_TIMEOUT_MS ?? 30_000,
      // Half the pool, so that exports never take the connections every other request needs.
      maxExports: Math.max(1, Math.floor((deps.config.DB_POOL_MAX ?? 10) / 2)),
      logger: deps.logger,
      live: deps.live,
    }),
  );
  keyed.use('/listings', listingsRouter({ db: deps.db, reads: deps.reads, search, rows, gazetteer: deps.gazetteer, baseUrl: deps.config.PUBLIC_BASE_URL, caches }));
  keyed.use('/changes', changesRouter({ db: deps.db, baseUrl: deps.config.PUBLIC_BASE_URL, caches, waitMs: databaseBoundMs }));
  const prices = createMarketPrices({ db: deps.db, reads: deps.reads, logger: deps.logger, waitMs: deps.config.DB_STATEMENT_TIMEOUT_MS ?? 10_000 });
  keyed.use('/market', marketRouter({ db: deps.db, reads: deps.reads, gazetteer: deps.gazetteer, caches, clock, live: deps.live, prices }));
  keyed.use('/communes', communesRouter(deps));
  keyed.use(notFoundHandler);
  app.use('/api/v1', keyed);

  // /healthz and /readyz (after the API: its requests need not pass them); other methods are
  // refused as on the API, as the OpenAPI document says (an outside probe: 404, and OPTIONS
  // answered by Express in plain text).
  app.use(['/healthz', '/readyz'], readOnly);
  app.use(healthRouter({ ...deps, redisPrefix: prefix }));

  // The HTML pages: /api-keys (accounts and keys), /listings/:id, /web/* assets. They read
  // today's quota counts from the same store the API counts in.
  app.use(webRouter({ ...deps, clock, redisPrefix: prefix, storeHealth, quotaStore }));

  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));

  // Repeated answers sent again without Express, while what they depend on is unchanged
  // (src/http/replay.ts): needs the keys and data version held in memory.
  if (deps.live) {
    // The client address as Express gives it (req.ip: proxy-addr with the app's trusted proxies).
    const trust = app.get('trust proxy fn') as Parameters<typeof proxyAddr>[1];
    const open = { store: statsStore, limit: deps.config.STATS_RATE_LIMIT_PER_MINUTE, windowMs: STATS_WINDOW_MS, keyOf: (req: IncomingMessage) => statsClientKey(proxyAddr(req, trust)) };
    const replay = new AnswerReplay({ live: deps.live, usage: deps.keyUsage, clock, metrics: deps.metrics !== false ? metrics : undefined, encodingFor: negotiatedEncoding, refusals, open, logger: logsRequests ? deps.logger : undefined });
    app.locals.replay = replay;
    // Express's own entry point (express.js: app(req, res) calls app.handle), so supertest and
    // node:http reach the replay alike.
    const entry = app as unknown as { handle: (req: IncomingMessage, res: ServerResponse, next?: NextFunction) => void };
    const handle = entry.handle.bind(app);
    entry.handle = (req, res, next) => {
      if (!replay.serve(req, res, () => handle(req, res, next))) handle(req, res, next);
    };
  }
  return app;
}
