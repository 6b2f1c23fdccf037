import cluster from 'node:cluster';
import { once } from 'node:events';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import net, { type Socket } from 'node:net';
import type { Redis } from 'ioredis';
import { buildApp } from './app.js';
import { LiveState } from './cache/live-state.js';
import { failureLine, isFirstWorker, listen, runPrimary, serveMetrics, StartupError, workerCount, workersAsked, type WorkerMessage } from './cluster.js';
import type { ReadModel } from './read-model/queries.js';
import { ListingReadModel } from './read-model/read-model.js';
import { ReadModelThread } from './read-model/thread.js';
import { KeyUsageTracker } from './auth/key-usage.js';
import { loadConfig, type Config } from './config.js';
import { cutText } from './lib/text.js';
import { within } from './lib/within.js';
import type { Logger } from 'pino';
import type { Knex } from 'knex';
import { createDb, retireConnections, retireTogether } from './db/knex.js';
import { besideEmbeddedData, openDatabase, type OpenDatabase } from './db/open.js';
import { ReplicaReads } from './db/read-replica.js';
import { mintDemoKeys } from './demo/keys.js';
import { loadDemoUnlessLoaded } from './demo/seed.js';
import { recoverInterruptedImports } from './ingest/index.js';
import { createHttpServer } from './http/http-server.js';
import { requireHost, startingListener, stoppingListener } from './http/raw-responses.js';
import { createLogger } from './logger.js';
import { buildMetricsApp, shareWithClusterPrimary } from './metrics.js';
import { createRedis, redisAuthRefusal, waitForRedis, wrongRedisDatabase } from './redis.js';
import { loadGazetteer } from './reference/load.js';
import { MarketSnapshotScheduler } from './services/market-snapshots.js';
import { loggedPath } from './http/logged-path.js';

// How long a stopping process waits for its requests in flight, and how long a stopping
// cluster worker must see no new connection before it stops listening (src/server.ts, shutdown).
const DRAIN_MS = 10_000;
const QUIET_MS = 250;

// config -> listen -> dependencies -> serve -> graceful shutdown.
async function main(): Promise<void> {
  const started = Date.now();
  const config = loadConfig();
  const logger = createLogger(config);
  const workers = workerCount(config);
  // An outside probe: WEB_CONCURRENCY=2 without DATABASE_URL ran one process without a word (and
  // NODE_ENV=production, whose default is a process per core: the regression probe).
  const asked = workersAsked(config);
  if (!config.DATABASE_URL && asked > 1) logger.warn('%s is not used on the embedded PostgreSQL: one process serves (set DATABASE_URL for more)', config.WEB_CONCURRENCY ? `WEB_CONCURRENCY=${asked}` : `NODE_ENV=production (a process per core, ${asked})`);
  if (cluster.isPrimary && workers > 1) return runPrimary(config, logger, workers);
  if (cluster.isWorker) {
    try {
      await serve(config, logger, started);
      process.send?.({ lf: 'ready' } satisfies WorkerMessage);
    } catch (err) {
      process.send!({ lf: 'startup-failed', message: failureLine(err) } satisfies WorkerMessage, () => process.exit(1));
    }
    return;
  }
  await serve(config, logger, started);
}

// One server process: listen -> dependencies -> serve -> graceful shutdown.
async function serve(config: Config, logger: Logger, started: number): Promise<void> {
  // The port first: a taken port stops the start at once, before any database work, demo
  // data or demo keys (and before anything is printed as if the service had started).
  // A cluster's worker listens only once it can serve: its siblings answer meanwhile (the
  // primary has checked the port).
  // A request without Host gets a problem body too (requireHost), not Node's empty 400.
  const starting = requireHost(startingListener);
  // Its settings: src/http/http-server.ts.
  const server: Server = createHttpServer(starting, { perClient: config.MAX_CONNECTIONS_PER_CLIENT, total: config.MAX_CONNECTIONS });
  if (!cluster.isWorker) await listen(server, config.PORT, config.HOST);

  // A cluster's primary has migrated already (and checked for interrupted imports).
  let opening: Promise<OpenDatabase> | null = null;
  // A signal while the embedded PostgreSQL starts or the demo loads (until the shutdown below is
  // in place): the PostgreSQL this process started is stopped before it exits (an outside probe:
  // SIGTERM then killed the process at once and left PostgreSQL running, its parent gone).
  const stopDuringStart = (signal: NodeJS.Signals) => {
    if (stoppedDuringStart) return;
    logger.info({ signal }, 'stopping during start-up');
    stoppedDuringStart = (async () => {
      const opened = opening && (await within(opening, EMBEDDED_SETTLE_MS).catch(() => null));
      if (opened) await within(opened.close(), EMBEDDED_SETTLE_MS).catch((err) => logger.warn({ err }, 'could not stop the embedded PostgreSQL'));
      logger.info('stopped');
      process.exit(0);
    })();
  };
  const embeddedStart = !config.DATABASE_URL && !cluster.isWorker;
  // (Before the embedded PostgreSQL's package loads: it removes the signal handlers added while
  // it loads, src/db/embedded.ts.)
  if (embeddedStart) for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, stopDuringStart);
  opening = openDatabase(config, { role: 'server', migrate: !cluster.isWorker, logger });
  const database = await opening;
  const { db } = database;
  // Import runs left 'running' by an importer that died are marked failed (in the background).
  if (!cluster.isWorker) void recoverInterruptedImports(db).then((n) => n > 0 && logger.warn('%d interrupted import run(s) marked failed', n), (err) => logger.warn({ err }, 'could not check for interrupted imports'));
  if (database.embedded) {
    logger.info('no DATABASE_URL: running on the embedded PostgreSQL in %s', config.EMBEDDED_PG_DIR);
    const demo = await loadDemoUnlessLoaded(db, { now: new Date(), feedsDir: besideEmbeddedData(config, 'demo-feeds'), log: (what) => logger.info(what) });
    if (demo.outcome !== 'kept') logger.info('demo data loaded: %d active listings', demo.active);
  }

  let redis: Redis | null = null;
  if (config.REDIS_URL) {
    redis = createRedis(config.REDIS_URL, { timeoutMs: config.REDIS_TIMEOUT_MS, logger });
    if (!(await waitForRedis(redis, 1500))) {
      const refused = redisAuthRefusal(redis);
      if (refused !== null) {
        redis.disconnect();
        throw new StartupError(`Redis refused the credentials of REDIS_URL (${cutText(refused.replace(/\s+/g, ' '), 200)}); set REDIS_URL`);
      }
      logger.error('Redis is not reachable at start-up: serving without quota enforcement until it is back');
    } else {
      const wrong = await wrongRedisDatabase(redis);
      if (wrong !== null) {
        redis.disconnect();
        throw new StartupError(wrong);
      }
    }
  } else {
    logger.warn('no REDIS_URL: quotas and rate limits use an in-process store (per process, lost on restart)');
  }

  const gazetteer = await loadGazetteer(db);
  const keyUsage = new KeyUsageTracker(db, logger);
  keyUsage.start();
  // DATABASE_READ_URL: reads go to the replica once it has replayed the version they are at.
  const replica = config.DATABASE_READ_URL
    ? await new ReplicaReads(db, createDb(config.DATABASE_READ_URL, { poolMax: config.DB_POOL_MAX, statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS, logger }), logger).start()
    : null;
  // With DB_ROWS_POOL_MAX > 0, the rows of pages (a few ids each, from every request of a turn:
  // src/services/listing-rows.ts) are read on a small pool of their own per database. Under varied
  // traffic they are nearly all of PostgreSQL's work; on a few backends whose caches stay warm they
  // took a third of the time they took spread over the main pool's, on a machine where PostgreSQL
  // was the bottleneck (bench/README.md, stop 53). Off by default: with a round trip of a few ms to
  // the database, two connections reading them one statement at a time halved the throughput (an
  // outside probe of stop 54). Each is a pool like the main one (src/db/knex.ts), and retires its
  // connections with it: a connection of either that stops answering replaces those both opened
  // by then.
  const rowPools = new Map<Knex, Knex>();
  if (config.DB_ROWS_POOL_MAX > 0) {
    const rowsOpts = { poolMax: config.DB_ROWS_POOL_MAX, statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS, logger, applicationName: 'lux-listings-feed rows' };
    rowPools.set(db, createDb(database.url, rowsOpts));
    if (replica) rowPools.set(replica.replica, createDb(config.DATABASE_READ_URL!, rowsOpts));
    for (const [main, rows] of rowPools) retireTogether(main, rows);
  }
  // The listings read model, on a thread of its own with LISTINGS_READ_MODEL_THREAD=true.
  const readModel: ReadModel | undefined = !config.LISTINGS_READ_MODEL
    ? undefined
    : config.LISTINGS_READ_MODEL_THREAD
      ? // The thread loads from the primary: it cannot tell whether a replica has replayed the
        // version it is asked for (the process's own read model can: below).
        new ReadModelThread({ databaseUrl: database.url, statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS, log: { LOG_LEVEL: config.LOG_LEVEL, LOG_PRETTY: config.LOG_PRETTY ?? Boolean(process.stdout.isTTY) } }, logger)
      : new ListingReadModel(db, logger, undefined, undefined, replica?.pick);
  readModel?.warm();
  // The stale flag and today's market snapshot (the first one when there is none), then a
  // check of both every 15 minutes.
  const snapshots = new MarketSnapshotScheduler({ db, logger, staleCheck: config.STALE_CHECK });
  if (isFirstWorker()) snapshots.start(); // one process of a cluster is enough
  // The data version and verified keys in memory, kept true by LISTEN/NOTIFY on the primary.
  const live = new LiveState().start(database.url, logger);
  live.onVersion((v) => readModel?.seen(v));
  live.onSilentConnection((since) => retireConnections(db, since));
  await live.ready(2000);
  const app = buildApp({ config, db, reads: replica?.at, rowPools, redis, logger, gazetteer, keyUsage, readModel, live, metrics: config.METRICS_PORT >= 0 });

  server.off('request', starting);
  const serving = requireHost(app);
  server.on('request', serving);
  if (cluster.isWorker) await listen(server, config.PORT, config.HOST);
  server.keepAliveTimeout = 65_000;
  // Requests in flight, so that shutdown can wait for them (server.close() alone only stops
  // accepting; the pool must not close under a request that is still running).
  // Once shutting down, every answer not yet begun says `Connection: close` and its connection
  // closes after it: a keep-alive client then opens a new connection (to another process or
  // instance) for its next request, instead of sending it into a socket about to close.
  const inFlight = new Set<ServerResponse>();
  let stopping = false;
  const closeAfter = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('Connection', 'close');
  };
  // An answer given before its request's body is read (a 401, a 413, any GET with a body) closes
  // its connection when the body is over 64 KB or of a length not declared (chunked): else Node
  // reads the rest of the body, to keep the connection, however long it is (an outside probe of
  // stop 49: 800 MB in 15 s on one connection, for 60 s, a core's half for four of them). A small
  // body is read, as before, so that requests pipelined behind it are answered (its regression
  // probe: a GET with a 2-byte body, answered at once, dropped the two requests behind it). Only
  // requests that declare such a body pay for the wrapper.
  const SMALL_BODY_BYTES = 64 * 1024;
  const closeUnreadBody = (req: IncomingMessage, res: ServerResponse) => {
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      if (!req.complete) closeAfter(this);
      return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse['writeHead'];
  };
  // Before the app's listener: a repeated answer is written in the same turn (src/http/replay.ts).
  let lastRequestAt = 0;
  server.prependListener('request', (req, res) => {
    lastRequestAt = Date.now();
    inFlight.add(res);
    if (stopping) closeAfter(res);
    else if (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > SMALL_BODY_BYTES) closeUnreadBody(req, res);
    res.once('close', () => inFlight.delete(res));
  });
  // An answer queued behind another on its connection (pipelining) has no socket yet, and gets
  // no 'close' when the client leaves (an outside probe: such answers stayed in flight, and in
  // memory, for ever): its connection's close settles it.
  let lastConnectionAt = 0;
  server.on('connection', (socket: Socket) => {
    lastConnectionAt = Date.now();
    socket.once('close', () => {
      if (inFlight.size === 0) return;
      for (const res of inFlight) if (res.req.socket === socket) inFlight.delete(res);
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const url = `http://localhost:${port}`;
  logger.info({ port, startup_ms: Date.now() - started }, 'listening on %s', url);

  let metricsServer: Server | null = null;
  if (cluster.isWorker) shareWithClusterPrimary(app.locals.metrics);
  else if (config.METRICS_PORT >= 0) metricsServer = serveMetrics(buildMetricsApp(app.locals.metrics), config, logger);

  if (database.embedded) {
    const keys = await mintDemoKeys(db, new Date());
    const lines = [
      '',
      `  Luxembourg listings feed API on ${url}/api/v1  (started in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
      '  Demo API keys (fresh at every start; the previous ones are revoked):',
      ...keys.map((k) => `    ${k.tier.padEnd(10)} ${k.key}`),
      '',
      `  Try: curl -H "Authorization: Bearer ${keys[0].key}" "${url}/api/v1/listings?commune=Luxembourg&per_page=2"`,
      `       curl ${url}/api/v1/stats`,
      '',
    ];
    process.stdout.write(lines.join('\n') + '\n');
  }

  // What a draining worker answers is logged like any request: one line with its method, path,
  // status and id (an outside probe: 712 such 503s, no line).
  const logsRequests = logger.isLevelEnabled('info');
  const loggedStopping: RequestListener = (req, res) => {
    stoppingListener(req, res);
    if (!logsRequests) return;
    const path = loggedPath(req.url ?? '');
    logger.info({ req: { method: req.method, path }, request_id: res.getHeader('X-Request-Id'), res: { status: 503 }, responseTime: 0 }, `${req.method} ${path} 503 0ms (this process is stopping)`);
  };

  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    metricsServer?.close();
    if (cluster.isWorker) {
      // A cluster's primary hands each connection it accepts to a worker. One handed over as
      // the worker stops listening is passed on to no one and waits, unanswered, until the
      // primary exits (an outside probe: 10 s, then reset). So a worker keeps its port while it
      // drains and answers what arrives meanwhile 503 (Retry-After: 1, Connection: close), and
      // stops listening once drained, just before it exits.
      server.off('request', serving);
      server.on('request', requireHost(loggedStopping));
    } else {
      // New connections are refused (the port closes), the open ones kept: http.Server#close
      // would also destroy the idle keep-alive ones at once, and a request a client had just
      // sent on one was lost, reset (an outside probe: 11 of 30 keep-alive clients). Each is
      // answered instead, `Connection: close`, then its connection closes (below: the quiet).
      net.Server.prototype.close.call(server);
    }
    for (const res of inFlight) closeAfter(res);
    // Drained: nothing in flight, and no connection (a worker: the primary hands them over one
    // at a time, and when the last worker stops listening it closes those still waiting, an
    // outside probe: 539 of a burst of 600 reset) nor request on an open connection has come for
    // QUIET_MS; within the drain's 10 s. A worker answers what comes meanwhile 503; a single
    // process serves it, `Connection: close`.
    const drainUntil = Date.now() + DRAIN_MS;
    const busy = () => inFlight.size > 0 || Date.now() - Math.max(lastConnectionAt, lastRequestAt) < QUIET_MS;
    while (busy() && Date.now() < drainUntil) await new Promise((r) => setTimeout(r, 25));
    if (inFlight.size > 0) {
      // Answered 503 where no answer has begun, like a request arriving now, rather than cut
      // without one (an outside probe: the client got an empty reply, and the log said 200),
      // with a moment for those answers to leave before the connections close.
      const unanswered = [...inFlight].filter((res) => !res.headersSent);
      logger.warn({ in_flight: inFlight.size, answered_503: unanswered.length }, 'requests still running after 10 s; answering them 503 and closing them');
      for (const res of unanswered) stoppingListener(res.req, res);
    }
    await sentOrAfter([...inFlight], 500);
    if (cluster.isWorker) server.close();
    server.closeAllConnections();
    // The read model's load, the market snapshot and the handlers of requests whose clients went
    // away (no longer counted as in flight) may still wait on the database: all of them within
    // 10 s before the pools close (a load under way when PostgreSQL froze waited its statement's
    // bound first, outside those 10 s).
    const deadline = Date.now() + 10_000;
    await within(Promise.all([readModel?.close(), live.close(), replica?.close(), snapshots.stop()]), deadline - Date.now()).catch(() => logger.warn('the read model, the listener or the market snapshot still busy after 10 s; stopping anyway'));
    const pools = [db, ...rowPools.values()].map((d) => (d.client as { pool?: { numUsed(): number; numPendingAcquires(): number } }).pool);
    while (pools.some((pool) => pool && pool.numUsed() + pool.numPendingAcquires() > 0) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    // The keys' last use is written (one UPDATE) within 1 s: a database that stopped answering
    // would hold it for a statement's whole bound (an outside probe of stop 54: 14.3 s to exit,
    // nothing in flight; a failed write keeps the uses in memory, lost with the process).
    await within(keyUsage.stop(), 1000).catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'api key usage not recorded before stopping'));
    // A database that stopped answering holds its connections' ends: the process does not
    // wait for them past 2 s (an outside probe saw 26.7 s with PostgreSQL frozen).
    const closed = Promise.all([...rowPools.values()].map((d) => d.destroy())).then(() => database.close());
    await Promise.race([closed, new Promise((r) => setTimeout(r, 2_000).unref())]);
    if (redis) await redis.quit().catch(() => redis?.disconnect());
    logger.info('stopped');
    process.exit(0);
  };
  if (embeddedStart) for (const signal of ['SIGTERM', 'SIGINT'] as const) process.off(signal, stopDuringStart);
  // (A signal that came before this line is stopping the process already.)
  if (stoppedDuringStart) return;
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

// Set once a signal came while the embedded start ran: the process is stopping, and what fails
// meanwhile (the demo's imports, on a pool closed under them) is not a failure to start.
let stoppedDuringStart: Promise<void> | null = null;
const EMBEDDED_SETTLE_MS = 20_000;

// Once these answers have left, or after `ms`, whichever comes first.
async function sentOrAfter(answers: ServerResponse[], ms: number): Promise<void> {
  const left = answers.filter((res) => !res.writableFinished).map((res) => once(res, 'finish').catch(() => undefined));
  await Promise.race([Promise.all(left), new Promise((r) => setTimeout(r, ms).unref())]);
}

// A moment before the failure is told: Ctrl-C reaches the embedded PostgreSQL too, whose
// connections' errors can come before the signal's handler has run (the regression probe of
// stop 44: "Failed to start: ROLLBACK - ..." and exit 1 once in four stops just after "listening").
main().catch((err) => {
  setTimeout(() => {
    if (stoppedDuringStart) return;
    process.stderr.write(`${failureLine(err)}\n`);
    process.exit(1);
  }, 500);
});
