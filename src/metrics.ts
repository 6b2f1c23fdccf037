import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import type { Knex } from 'knex';
import client from 'prom-client';
import type { StoreHealth } from './rate-limit/store.js';
import { countImportRunsBySourceAndStatus } from './repositories/import-runs.js';

const ROUTE = Symbol('route');
const LABEL = Symbol('route label');
const START = Symbol('request start');
const tracked = new WeakSet<object>();

// The route template, not the raw path, keeps label values bounded ('unmatched': rejected
// before any route matched, e.g. 401, 429, unknown paths). Express sets req.route when a route
// matches, while req.baseUrl still holds the routers' mount path (it is reset by the time the
// response finishes), so the label is taken at that moment: by an accessor installed once on
// the app's request prototype.
function trackRoutes(proto: object): void {
  if (tracked.has(proto)) return;
  tracked.add(proto);
  Object.defineProperty(proto, 'route', {
    configurable: true,
    get(this: { [ROUTE]?: unknown }) {
      return this[ROUTE];
    },
    set(this: { [ROUTE]?: unknown; [LABEL]?: string; baseUrl: string }, v: { path: string }) {
      this[ROUTE] = v;
      this[LABEL] = `${this.baseUrl}${v.path}`;
    },
  });
}

// Prometheus metrics, on their own registry (one per app, so tests can build many) and
// served by a separate listener (METRICS_PORT), never on the public API port.
export interface Metrics {
  registry: client.Registry;
  middleware: RequestHandler;
  // For answers sent without Express (src/http/replay.ts): the route label the full path gave
  // a request, and the count and latency of an answer sent under that label.
  routeOf(req: Request): string | undefined;
  // `rejection`: the answer is a 429 of that limit (counted in quota_rejections_total too).
  observe(method: string, route: string, status: number, startedAt: number, rejection?: 'daily_quota' | 'stats_ip_limit'): void;
}

// `rowsDb`: the primary's pool kept for page rows (server.ts), when there is one.
export function createMetrics(deps: { db: Knex; rowsDb?: Knex; storeHealth: StoreHealth }): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });

  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new client.Counter({ name: 'http_requests_total', help: 'HTTP requests', labelNames, registers: [registry] });
  const latency = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency',
    labelNames,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const quotaRejections = new client.Counter({
    name: 'quota_rejections_total',
    help: 'Requests refused with 429 (daily quota or /stats per-IP limit)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  // Counters read from the stores' health at each scrape.
  const fromHealth = (name: string, help: string, read: () => number) => {
    let seen = 0;
    new client.Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const now = read();
        if (now > seen) this.inc(now - seen);
        seen = now;
      },
    });
  };
  fromHealth('rate_limit_store_errors_total', 'Errors of the quota store (Redis): requests served without limiting', () => deps.storeHealth.errors);
  fromHealth('rate_limit_store_timeouts_total', 'Quota store operations ended by their deadline (Redis hung), counted in the errors too', () => deps.storeHealth.timeouts);
  // A pool's connections by state (knex's tarn pool).
  const poolGauge = (name: string, help: string, db: Knex) =>
    new client.Gauge({
      name,
      help,
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const p = (db.client as { pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number } }).pool;
        if (!p) return;
        this.set({ state: 'used' }, p.numUsed());
        this.set({ state: 'free' }, p.numFree());
        this.set({ state: 'pending' }, p.numPendingAcquires());
      },
    });
  poolGauge('db_pool_connections', 'Database pool connections by state', deps.db);
  if (deps.rowsDb) poolGauge('db_rows_pool_connections', 'Connections of the pool kept for page rows (DB_ROWS_POOL_MAX) by state', deps.rowsDb);
  new client.Gauge({
    name: 'import_runs',
    help: 'Feed import runs recorded in the database, by source and outcome',
    labelNames: ['source', 'status'] as const,
    registers: [registry],
    // Read from the database: every worker of a cluster sees the same numbers.
    aggregator: 'max',
    async collect() {
      this.reset();
      try {
        for (const r of await countImportRunsBySourceAndStatus(deps.db)) this.set({ source: r.source, status: r.status }, r.count);
      } catch {
        // the database being down shows in readiness; metrics still answer
      }
    },
  });

  // Per request: a start time and one shared 'finish' listener (no closure, no property
  // defined on the request object itself, which would slow every later access to it).
  function onFinish(this: Response): void {
    const req = this.req as Request & { [LABEL]?: string; [START]?: number };
    const labels = { method: req.method, route: req[LABEL] ?? 'unmatched', status: String(this.statusCode) };
    requests.inc(labels);
    latency.observe(labels, (performance.now() - (req[START] ?? performance.now())) / 1000);
    if (this.statusCode === 429) quotaRejections.inc({ reason: this.locals.apiKey ? 'daily_quota' : 'stats_ip_limit' });
  }
  const middleware: RequestHandler = (req, res, next) => {
    trackRoutes(Object.getPrototypeOf(req) as object);
    (req as Request & { [START]?: number })[START] = performance.now();
    res.once('finish', onFinish);
    next();
  };
  const routeOf = (req: Request) => (req as Request & { [LABEL]?: string })[LABEL];
  const observe: Metrics['observe'] = (method, route, status, startedAt, rejection) => {
    const labels = { method, route, status: String(status) };
    requests.inc(labels);
    latency.observe(labels, (performance.now() - startedAt) / 1000);
    if (rejection) quotaRejections.inc({ reason: rejection });
  };
  return { registry, middleware, routeOf, observe };
}

// A worker of a cluster (WEB_CONCURRENCY > 1) serves no metrics itself: the primary asks every
// worker for its registry and serves the sum (prom-client's AggregatorRegistry).
export function shareWithClusterPrimary(metrics: Metrics): void {
  new client.AggregatorRegistry(); // installs the worker's answer to the primary's requests
  client.AggregatorRegistry.setRegistries([metrics.registry]);
}

export function buildMetricsApp(metrics: Metrics | 'cluster'): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff'); // as on every answer of the API's port
    next();
  });
  const aggregator = metrics === 'cluster' ? new client.AggregatorRegistry() : null;
  app.get('/metrics', async (_req, res) => {
    if (aggregator) {
      // A worker that does not answer within prom-client's 5 s: say so, briefly.
      const text = await aggregator.clusterMetrics().catch((err: Error) => err);
      if (text instanceof Error) res.status(503).type('text/plain').send(`workers did not answer: ${text.message}\n`);
      else res.type(aggregator.contentType).send(text);
      return;
    }
    const { registry } = metrics as Metrics;
    res.setHeader('Content-Type', registry.contentType);
    res.send(await registry.metrics());
  });
  app.use((_req, res) => {
    res.status(404).type('text/plain').send('not found\n');
  });
  return app;
}
