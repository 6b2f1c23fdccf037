import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:http';
import type { Express } from 'express';
import net from 'node:net';
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { unavailableCause } from './db/errors.js';
import { createDb, migrateLatest } from './db/knex.js';
import { retryDelayMs, waitForDatabase } from './db/open.js';
import { recoverInterruptedImports } from './ingest/index.js';
import { buildMetricsApp } from './metrics.js';

// A start-up failure whose message is the whole story: printed as one line, no stack.
export class StartupError extends Error {}

// Binds the port, or says in one line why not.
export function listen(server: Server | net.Server, port: number, host: string): Promise<void> {
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

// The Prometheus listener (METRICS_HOST:METRICS_PORT). Metrics are secondary: a busy port is
// one warning line, and the API keeps serving.
export function serveMetrics(app: Express, config: Pick<Config, 'METRICS_PORT' | 'METRICS_HOST'>, logger: Logger): Server {
  const server = app.listen(config.METRICS_PORT, config.METRICS_HOST);
  server.once('listening', () => {
    const a = server.address();
    logger.info('metrics on http://%s:%d/metrics', config.METRICS_HOST, typeof a === 'object' && a ? a.port : config.METRICS_PORT);
  });
  server.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EADDRINUSE') logger.warn('metrics port %d is in use: no /metrics (set METRICS_PORT, or -1 to turn it off)', config.METRICS_PORT);
    else logger.warn('metrics listener failed (%s): no /metrics', err.code ?? err.message);
  });
  return server;
}

// How many server processes to run: WEB_CONCURRENCY, else one per core in production and one
// otherwise. Several need DATABASE_URL (the embedded PostgreSQL and its demo keys belong to
// one process).
export function workerCount(config: Pick<Config, 'WEB_CONCURRENCY' | 'NODE_ENV' | 'DATABASE_URL'>): number {
  return config.DATABASE_URL ? workersAsked(config) : 1;
}

// The processes the settings ask for, whether or not the database allows them.
export function workersAsked(config: Pick<Config, 'WEB_CONCURRENCY' | 'NODE_ENV'>): number {
  return config.WEB_CONCURRENCY ?? (config.NODE_ENV === 'production' ? availableParallelism() : 1);
}

// A single process, or the first worker of a cluster.
export function isFirstWorker(): boolean {
  return !cluster.isWorker || process.env.LF_WORKER_INDEX === '0';
}

// What a worker tells the primary.
export type WorkerMessage = { lf: 'ready' } | { lf: 'startup-failed'; message: string };

// The primary of a cluster of `count` workers (node:cluster; the workers share the listening
// socket, connections are handed out round-robin). It checks the port is free and migrates the
// database once, forks the workers, and stops them all on SIGTERM/SIGINT (each drains its
// requests, as a single process does). A worker that fails to start stops the whole start
// (exit 1); one that dies later is replaced, and its replacement tried again with a back-off
// for as long as it cannot start (PostgreSQL down when it died).
export async function runPrimary(config: Config, logger: Logger, count: number): Promise<void> {
  const probe = net.createServer();
  await listen(probe, config.PORT, config.HOST);
  await new Promise((r) => probe.close(r));

  const db = createDb(config.DATABASE_URL!, { poolMax: 1, statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS, logger });
  try {
    await waitForDatabase(config.DATABASE_URL!, logger);
    await migrateLatest(db);
    const n = await recoverInterruptedImports(db).catch((err) => {
      logger.warn({ err }, 'could not check for interrupted imports');
      return 0;
    });
    if (n > 0) logger.warn('%d interrupted import run(s) marked failed', n);
  } finally {
    await db.destroy();
  }

  let stopping = false;
  // Whether every worker has served once: until then a worker that fails to start fails the
  // start; afterwards a replacement that fails (PostgreSQL down at that moment) is tried again.
  let started = false;
  const alive = new Set<Worker>();
  const ready = new Set<Worker>();
  // Replacements of each index that failed to start in a row (for the back-off).
  const failures = new Map<number, number>();
  let allGone: (() => void) | null = null;
  // Each worker has an index (0..count-1, kept by its replacement): the periodic chores that
  // one process is enough for run in worker 0 only (see isFirstWorker).
  const fork = (index: number) => {
    const worker = cluster.fork({ LF_WORKER_INDEX: String(index) });
    alive.add(worker);
    worker.on('message', (m: WorkerMessage) => {
      if (m?.lf === 'ready') {
        ready.add(worker);
        failures.delete(index);
        if (ready.size === count) {
          started = true;
          logger.info({ workers: count }, '%d workers serving', count);
        }
      } else if (m?.lf === 'startup-failed' && !stopping) {
        if (started) logger.error({ index }, 'a replacement worker could not start: %s', m.message);
        else process.stderr.write(`${m.message}\n`); // the first failure only: the others say the same
      }
    });
    worker.on('exit', (code, signal) => {
      alive.delete(worker);
      const wasReady = ready.delete(worker);
      if (stopping) {
        if (alive.size === 0) allGone?.();
        return;
      }
      if (!wasReady && !started) {
        // It never served: the same would happen again (a taken port, a bad database URL).
        void stopAll(1);
        return;
      }
      if (wasReady) {
        logger.error({ code, signal, pid: worker.process.pid }, 'worker died; starting another');
        setTimeout(() => !stopping && fork(index), 500);
        return;
      }
      // A replacement that could not start: again, after 1, 2, 4 ... up to 10 s, until one
      // serves. (One that finds PostgreSQL down waits for it itself: waitForDatabase.)
      const n = (failures.get(index) ?? 0) + 1;
      failures.set(index, n);
      const delay = retryDelayMs(n);
      logger.warn({ index, attempt: n, retry_in_ms: delay }, 'replacement worker did not start; trying again in %d s', delay / 1000);
      setTimeout(() => !stopping && fork(index), delay);
    });
  };
  const stopAll = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    if (alive.size > 0) {
      const gone = new Promise<void>((resolve) => (allGone = resolve));
      for (const w of alive) w.process.kill('SIGTERM');
      // Each worker drains within its own 10 s (and lets its pool settle); then no mercy.
      const timer = setTimeout(() => {
        for (const w of alive) w.process.kill('SIGKILL');
      }, 25_000);
      timer.unref();
      await gone;
      clearTimeout(timer);
    }
    metricsServer?.close();
    process.exit(exitCode);
  };
  process.on('SIGTERM', () => void stopAll(0));
  process.on('SIGINT', () => void stopAll(0));
  // One /metrics for the whole cluster: the sum of the workers' registries.
  const metricsServer = config.METRICS_PORT >= 0 ? serveMetrics(buildMetricsApp('cluster'), config, logger) : null;
  for (let i = 0; i < count; i++) fork(i);
}

// The one line a failed start prints.
export function failureLine(err: unknown): string {
  if (err instanceof StartupError) return err.message;
  // A database that answered the first asks and then too slowly: knex's words are for
  // developers ("Timeout acquiring a connection. The pool is probably full...": an outside probe).
  const cause = unavailableCause(err);
  if (cause === 'pool_timeout' || cause === 'no_answer' || cause === 'statement_timeout') {
    return `Failed to start: the database answers too slowly (${cause === 'pool_timeout' ? 'no connection was ready in time' : 'a statement got no answer in time'}); check the database and the network to it, then start again`;
  }
  return `Failed to start: ${err instanceof Error ? err.message : String(err)}`;
}
