import { createServer, type Server } from 'node:http';
import type { Redis } from 'ioredis';
import { buildApp } from './app.js';
import { LiveState } from './cache/live-state.js';
import { ListingReadModel } from './read-model/read-model.js';
import { KeyUsageTracker } from './auth/key-usage.js';
import { loadConfig } from './config.js';
import { openDatabase } from './db/open.js';
import { mintDemoKeys } from './demo/keys.js';
import { seedDemo } from './demo/seed.js';
import { recoverInterruptedImports } from './ingest/index.js';
import { answerClientError, startingListener } from './http/raw-responses.js';
import { createLogger } from './logger.js';
import { buildMetricsApp } from './metrics.js';
import { createRedis, waitForRedis } from './redis.js';
import { loadGazetteer } from './reference/load.js';
import { hasListings } from './repositories/listings.js';
import { MarketSnapshotScheduler } from './services/market-snapshots.js';

// A start-up failure whose message is the whole story: printed as one line, no stack.
class StartupError extends Error {}

// Binds the port, or says in one line why not.
function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      if (err.code === 'EADDRINUSE') reject(new StartupError(`port ${port} is in use; set PORT`));
      else if (err.code === 'EACCES') reject(new StartupError(`no permission to listen on port ${port}; set PORT`));
      else if (err.code === 'EADDRNOTAVAIL') reject(new StartupError(`cannot listen on ${host}: not an address of this machine; set HOST`));
      else reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

// config -> listen -> dependencies -> serve -> graceful shutdown.
async function main(): Promise<void> {
  const started = Date.now();
  const config = loadConfig();
  const logger = createLogger(config);
  // The port first: a taken port stops the start at once, before any database work, demo
  // data or demo keys (and before anything is printed as if the service had started).
  const server: Server = createServer(startingListener);
  // Requests Node's HTTP parser refuses never reach Express (src/http/raw-responses.ts).
  server.on('clientError', answerClientError);
  await listen(server, config.PORT, config.HOST);

  const database = await openDatabase(config, { role: 'server' });
  const { db } = database;
  // Import runs left 'running' by an importer that died are marked failed (in the background).
  void recoverInterruptedImports(db).then((n) => n > 0 && logger.warn('%d interrupted import run(s) marked failed', n), (err) => logger.warn({ err }, 'could not check for interrupted imports'));
  if (database.embedded) {
    logger.info('no DATABASE_URL: running on the embedded PostgreSQL in %s', config.EMBEDDED_PG_DIR);
    if (!(await hasListings(db))) {
      logger.info('first start: loading the demo data set');
      const seeded = await seedDemo(db, { now: new Date() });
      logger.info('demo data loaded: %d active listings', seeded.active);
    }
  }

  let redis: Redis | null = null;
  if (config.REDIS_URL) {
    redis = createRedis(config.REDIS_URL, { timeoutMs: config.REDIS_TIMEOUT_MS, logger });
    if (!(await waitForRedis(redis, 1500))) {
      logger.error('Redis is not reachable at start-up: serving without quota enforcement until it is back');
    }
  } else {
    logger.warn('no REDIS_URL: quotas and rate limits use an in-process store (per process, lost on restart)');
  }

  const gazetteer = await loadGazetteer(db);
  const keyUsage = new KeyUsageTracker(db, logger);
  keyUsage.start();
  const readModel = config.LISTINGS_READ_MODEL ? new ListingReadModel(db, logger) : undefined;
  readModel?.warm();
  // Today's market snapshot (the first one when there is none), then a check every 15 minutes.
  const snapshots = new MarketSnapshotScheduler({ db, logger });
  snapshots.start();
  // The data version and verified keys in memory, kept true by LISTEN/NOTIFY on the primary.
  const live = new LiveState().start(database.url, logger);
  live.onVersion((v) => readModel?.at(v));
  await live.ready(2000);
  const app = buildApp({ config, db, redis, logger, gazetteer, keyUsage, readModel, live });

  server.off('request', startingListener);
  server.on('request', app);
  server.keepAliveTimeout = 65_000;
  // Requests in flight, so that shutdown can wait for them (server.close() alone only stops
  // accepting; the pool must not close under a request that is still running).
  let inFlight = 0;
  let onDrained: (() => void) | null = null;
  server.on('request', (_req, res) => {
    inFlight++;
    res.once('close', () => {
      inFlight--;
      if (inFlight === 0) onDrained?.();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const url = `http://localhost:${port}`;
  logger.info({ port, startup_ms: Date.now() - started }, 'listening on %s', url);

  let metricsServer: Server | null = null;
  if (config.METRICS_PORT >= 0) {
    metricsServer = buildMetricsApp(app.locals.metrics).listen(config.METRICS_PORT, config.METRICS_HOST);
    metricsServer.once('listening', () => {
      const a = metricsServer!.address();
      logger.info('metrics on http://%s:%d/metrics', config.METRICS_HOST, typeof a === 'object' && a ? a.port : config.METRICS_PORT);
    });
    // Metrics are secondary: a busy port is one warning line, and the API keeps serving.
    metricsServer.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') logger.warn('metrics port %d is in use: no /metrics (set METRICS_PORT, or -1 to turn it off)', config.METRICS_PORT);
      else logger.warn('metrics listener failed (%s): no /metrics', err.code ?? err.message);
    });
  }

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

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    metricsServer?.close();
    server.close();
    server.closeIdleConnections();
    if (inFlight > 0) {
      const drained = new Promise<boolean>((resolve) => {
        onDrained = () => resolve(true);
        setTimeout(() => resolve(false), 10_000).unref();
      });
      if (!(await drained)) logger.warn({ in_flight: inFlight }, 'requests still running after 10 s; closing them');
    }
    server.closeAllConnections();
    await readModel?.close();
    await live.close();
    await snapshots.stop();
    // A request whose client went away stops counting as in flight while its handler may still
    // wait on the database: let those settle too (within the same 10 s) before the pool closes.
    const pool = (db.client as { pool?: { numUsed(): number; numPendingAcquires(): number } }).pool;
    const deadline = Date.now() + 10_000;
    while (pool && pool.numUsed() + pool.numPendingAcquires() > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await keyUsage.stop();
    await database.close();
    if (redis) await redis.quit().catch(() => redis?.disconnect());
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  if (err instanceof StartupError) process.stderr.write(`${err.message}\n`);
  else process.stderr.write(`Failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
