import { existsSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { pino, type Logger } from 'pino';
import type { Config } from '../config.js';
import { projectRoot } from '../lib/paths.js';
import { startEmbeddedPostgres } from './embedded.js';
import { unavailableCause } from './errors.js';
import { createDb, migrateLatest } from './knex.js';

// The wait before try `attempt` + 1: 1, 2, 4 ... up to 10 s (also a cluster's replacement
// workers', src/cluster.ts).
export function retryDelayMs(attempt: number): number {
  return Math.min(10_000, 1000 * 2 ** (attempt - 1));
}

// A server started before its PostgreSQL answers (a deployment that starts both at once, a
// database restarting) waits for it rather than exiting: tried again after retryDelayMs, one
// warning a try, while the port answers 503 "starting". An error that waiting cannot mend (a
// wrong password, a database that does not exist) ends the start at once. The tries go
// through a client of their own without a logger: knex would add a warning with a stack to
// each.
export async function waitForDatabase(url: string, logger: Logger | undefined): Promise<void> {
  // Where, without the credentials.
  const where = (() => {
    try {
      const u = new URL(url);
      return `${u.hostname}:${u.port || 5432}`;
    } catch {
      return 'DATABASE_URL';
    }
  })();
  const probe = createDb(url, { poolMax: 1, logger: pino({ enabled: false }) });
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await probe.raw('SELECT 1');
        if (attempt > 1) logger?.info('PostgreSQL answers: starting');
        return;
      } catch (err) {
        const cause = unavailableCause(err);
        if (cause === null || cause === 'statement_timeout') throw err;
        const delay = retryDelayMs(attempt);
        // Reachable but too slow to answer (a connection or a statement not in time) is said so
        // (an outside probe of stop 50: a database behind a 2.5 s delay was called unreachable).
        const state = cause === 'pool_timeout' || cause === 'no_answer' ? 'does not answer in time at' : 'is not reachable at';
        logger?.warn({ cause, attempt, retry_in_ms: delay }, 'PostgreSQL %s %s (%s): trying again in %d s', state, where, cause, delay / 1000);
        await sleep(delay);
      }
    }
  } finally {
    await probe.destroy();
  }
}

export interface OpenDatabase {
  db: Knex;
  url: string;
  embedded: boolean;
  freshlyInitialised: boolean;
  close(): Promise<void>;
}

// While `npm start` runs on the embedded PostgreSQL, it leaves its address here so that the
// admin commands (keys, seed, ingest) talk to the same server instead of starting another.
function runtimeFile(config: Config): string {
  return besideEmbeddedData(config, 'embedded-server.json');
}

// A file or folder beside the embedded PostgreSQL's data directory (`.data/<name>` by default).
export function besideEmbeddedData(config: Pick<Config, 'EMBEDDED_PG_DIR'>, name: string): string {
  return path.join(path.resolve(projectRoot, config.EMBEDDED_PG_DIR), '..', name);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function runningServer(config: Config): { pid: number; url: string } | null {
  const file = runtimeFile(config);
  if (!existsSync(file)) return null;
  try {
    const info = JSON.parse(readFileSync(file, 'utf8')) as { pid: number; url: string };
    return info.pid !== process.pid && isAlive(info.pid) ? info : null;
  } catch {
    return null;
  }
}

// DATABASE_URL when configured; otherwise the embedded PostgreSQL in EMBEDDED_PG_DIR (the
// one a running `npm start` already serves, or one started for this process).
export async function openDatabase(
  config: Config,
  opts: { role: 'server' | 'cli'; migrate?: boolean; log?: (msg: string) => void; logger?: Logger },
): Promise<OpenDatabase> {
  // A command's failure is its one line (the commands print it); knex's own warnings (a
  // connection that failed, its stack) would come before it (an outside probe), as `ingest`
  // already left them out.
  const logger = opts.logger ?? (opts.role === 'cli' ? pino({ enabled: false }) : undefined);
  const dbOpts = { poolMax: config.DB_POOL_MAX, statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS, logger };
  if (config.DATABASE_URL) {
    const db = createDb(config.DATABASE_URL, dbOpts);
    if (opts.role === 'server') await waitForDatabase(config.DATABASE_URL, opts.logger);
    if (opts.migrate !== false) await migrateLatest(db);
    return { db, url: config.DATABASE_URL, embedded: false, freshlyInitialised: false, close: () => db.destroy() };
  }
  const running = runningServer(config);
  if (running) {
    if (opts.role === 'server') throw new Error(`another server (pid ${running.pid}) is already running on the embedded PostgreSQL; stop it first`);
    const db = createDb(running.url, dbOpts);
    return { db, url: running.url, embedded: true, freshlyInitialised: false, close: () => db.destroy() };
  }
  const pg = await startEmbeddedPostgres({ dir: config.EMBEDDED_PG_DIR, port: config.EMBEDDED_PG_PORT, log: opts.log });
  const db = createDb(pg.url, dbOpts);
  const file = runtimeFile(config);
  try {
    if (opts.migrate !== false) await migrateLatest(db);
    if (opts.role === 'server') {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify({ pid: process.pid, url: pg.url }), { mode: 0o600 });
    }
  } catch (err) {
    await db.destroy();
    await pg.stop();
    throw err;
  }
  return {
    db,
    url: pg.url,
    embedded: true,
    freshlyInitialised: pg.freshlyInitialised,
    async close() {
      await db.destroy();
      if (opts.role === 'server') rmSync(file, { force: true });
      await pg.stop();
    },
  };
}
