import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import knex, { type Knex } from 'knex';
import pg from 'pg';
import type { Logger } from 'pino';
import { migrationsDir } from '../lib/paths.js';
import { perKindGate } from '../lib/throttle.js';
import { TimeoutError, within } from '../lib/within.js';
import { parseTimestamptz } from './timestamptz.js';

// bigint columns (counts, ids) come back as JS numbers: every value we store fits in 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));
// timestamptz: the same Date as pg's own parser, without its regular expressions for the usual form.
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, parseTimestamptz);

export type Db = Knex;

// How much longer than a statement's own timeout the client waits for its answer.
export const NO_ANSWER_MARGIN_MS = 2000;

// A connection's SET LOCAL statement_timeout, until its transaction ends.
const TX_TIMEOUT = Symbol('statement timeout of the transaction');
// When the connection was opened.
const OPENED_AT = Symbol('opened at');
type PgConnection = { [TX_TIMEOUT]?: number; [OPENED_AT]?: number; __knex__disposed?: unknown };
// knex's query builder hands its statements over with `timeout: false` when none was set
// with .timeout(); raw statements without the key.
type Statement = string | { sql?: unknown; timeout?: number | false } | null;

const PgClient = createRequire(import.meta.url)('knex/lib/dialects/postgres/index.js') as new (config: Knex.Config) => {
  config: Knex.Config;
  query(conn: PgConnection, obj: Statement): Promise<unknown>;
  acquireRawConnection(): Promise<PgConnection>;
  releaseConnection(conn: PgConnection): Promise<void>;
  destroyRawConnection(conn: PgConnection): Promise<void>;
};

// knex's PostgreSQL client, bounding how long it waits for an answer. PostgreSQL ends a
// statement that runs past statement_timeout, but a server that does not answer at all
// (frozen, or behind a network that drops packets without closing the connection) cannot:
// the query would wait forever, holding its pooled connection. So each statement is waited
// for at most its statement timeout plus NO_ANSWER_MARGIN_MS; past that, knex rejects it (a
// KnexTimeoutError: 503 `unavailable`, cause no_answer) and destroys the connection instead of
// returning it to the pool. A transaction that sets its own statement_timeout (SET LOCAL: the
// daily market snapshot's 600 s, 0 for an export or an import) gets that bound instead, or
// none for 0, until it ends; a statement given its own knex .timeout() keeps it. A subclass,
// because knex's transactions run their statements through a copy of the client's
// prototype; knex reads a statement's `timeout` right after handing it to query() (runner.js).
//
// A connection that got no answer in time says the others opened by then may be as dead (a
// network that dropped them, a failover): they are not handed out again but replaced, each
// found dead when taken (knex's pool validates a connection as it hands it out). Before, each
// cost one request its whole bound in turn (an outside probe: 36 s of 503s, one request after
// the other, with PostgreSQL reachable all along).
class BoundedPgClient extends PgClient {
  // Connections opened before this time are not handed out again.
  private openedBefore = 0;
  // Other pools on the same database (retireTogether): what says this pool's connections may be
  // dead says theirs may be.
  peers: BoundedPgClient[] = [];

  override async acquireRawConnection(): Promise<PgConnection> {
    const conn = await super.acquireRawConnection();
    conn[OPENED_AT] = Date.now();
    return conn;
  }
  // Found as the connection goes back to its pool, before the statement's caller hears of it
  // (the pool destroys it only when next asked for a connection: a linked pool asked first would
  // hand out its own silent ones meanwhile); and as it is destroyed.
  override releaseConnection(conn: PgConnection): Promise<void> {
    this.retireIfSilent(conn);
    return super.releaseConnection(conn);
  }
  override destroyRawConnection(conn: PgConnection): Promise<void> {
    this.retireIfSilent(conn);
    return super.destroyRawConnection(conn);
  }
  private retireIfSilent(conn: PgConnection): void {
    if ((conn.__knex__disposed as Error | undefined)?.name !== 'KnexTimeoutError') return;
    const now = Date.now();
    for (const client of [this, ...this.peers]) client.retire(now);
  }
  retire(openedBefore: number): void {
    this.openedBefore = Math.max(this.openedBefore, openedBefore);
  }
  validateConnection(conn: PgConnection): boolean {
    return (conn[OPENED_AT] ?? 0) >= this.openedBefore;
  }

  override query(conn: PgConnection, obj: Statement): Promise<unknown> {
    const sql = typeof obj === 'string' ? obj : obj?.sql;
    // The bound of the transaction this statement is in (read before a COMMIT or ROLLBACK ends it).
    const bound = conn[TX_TIMEOUT] ?? Number((this.config.connection as { statement_timeout?: number }).statement_timeout);
    if (typeof sql === 'string') {
      if (/^\s*SET\s+LOCAL\s+statement_timeout\b/i.test(sql)) {
        // A value in a unit this does not read ('1h') leaves the client unbounded (0) rather
        // than cutting short what PostgreSQL allows.
        const set = /(?:=|\bTO)\s*'?\s*(\d+)\s*(ms|s|min)?\s*'?\s*;?\s*$/i.exec(sql);
        conn[TX_TIMEOUT] = set ? Number(set[1]) * ({ s: 1000, min: 60_000 }[set[2]?.toLowerCase() ?? ''] ?? 1) : 0;
      } else if (/^\s*(COMMIT|ROLLBACK)\b/i.test(sql)) delete conn[TX_TIMEOUT];
    }
    if (obj !== null && typeof obj === 'object' && (obj.timeout === undefined || obj.timeout === false)) {
      const own = conn[TX_TIMEOUT] ?? bound;
      if (own > 0) obj.timeout = own + NO_ANSWER_MARGIN_MS;
    }
    const answer = super.query(conn, obj);
    // A transaction's own statements (BEGIN, COMMIT, ROLLBACK, savepoints) come from knex as bare
    // text, which its runner does not bound: bounded here the same way, the connection then
    // dropped as after any statement that got no answer. Unbounded, a BEGIN that got no answer
    // waited for ever on the silent connection, and with it the transaction (an outside probe of
    // stop 54: a read model load starting when PostgreSQL froze held the process's shutdown for good).
    return typeof obj === 'string' && bound > 0 ? this.noLongerThan(answer, conn, bound + NO_ANSWER_MARGIN_MS, obj) : answer;
  }

  private noLongerThan(answer: Promise<unknown>, conn: PgConnection, ms: number, sql: string): Promise<unknown> {
    return within(answer, ms).catch((err: unknown) => {
      if (!(err instanceof TimeoutError)) throw err;
      const late = Object.assign(new knex.KnexTimeoutError(`Defined query timeout of ${ms}ms exceeded when running query.`), { sql, timeout: ms });
      conn.__knex__disposed = late;
      throw late;
    });
  }
}

// The pool's connections opened before `openedBefore` (Date.now() clock) are not handed out
// again but replaced, as after a statement that got no answer: the database listener's heartbeat
// got none on a connection opened as they were, while a new one answered (src/db/listener.ts;
// an outside probe of stop 51:
// with open connections gone silent and new ones answering, each request that took a silent
// pooled connection waited its whole bound, 12 s, one after the other, after the listener had
// already found its own connection silent).
// The pools linked to it by retireTogether too.
export function retireConnections(db: Knex, openedBefore: number): void {
  if (db.client instanceof BoundedPgClient) for (const client of [db.client, ...db.client.peers]) client.retire(openedBefore);
}

// Pools on one database (a server's main pool and the one kept for page rows): a connection of
// any that got no answer, or retireConnections on any, replaces the connections the others opened
// by then too. Apart, a network that went silent cost a request on each pool its whole bound in
// turn (an outside probe of stop 54: two rounds of 503s, 3 s apart, where one pool had one).
export function retireTogether(...dbs: Knex[]): void {
  const clients = dbs.map((db) => db.client).filter((c): c is BoundedPgClient => c instanceof BoundedPgClient);
  for (const client of clients) client.peers = clients.filter((other) => other !== client);
}

// knex's warnings through `logger`, each kind (its first line) at most once every 5 s: during
// an outage knex warns of every connection it fails to open, stack included. The next one
// logged says how many were left out.
// A connection request aborted by the pool's own destroy (the process stopping while a
// statement waited for a connection, e.g. Ctrl-C during the demo's first load) is the stop
// working as meant, not a warning: it is a debug line.
function knexWarnings(logger: Logger): (message: unknown) => void {
  const gate = perKindGate(5000);
  return (message) => {
    const text = String(message);
    if (text.startsWith('Acquire connection error: Error: aborted\n')) return void logger.debug({ component: 'knex' }, text);
    const held = gate(text.split('\n', 1)[0].slice(0, 200));
    if (held !== null) logger.warn({ component: 'knex', ...(held > 0 ? { suppressed: held } : {}) }, text);
  };
}

// serverKeepalive: PostgreSQL probes the session's TCP connection after a minute of silence
// and ends the session when 6 probes 10 s apart go unanswered (its client's host or network
// gone: the locks the session holds are released in about 2 minutes, not the kernel's 2 hours).
// A client that is alive answers the probes, however long it takes between two statements.
// `applicationName` names the connections in pg_stat_activity (default: lux-listings-feed).
export function createDb(
  connectionString: string,
  opts: { poolMax?: number; statementTimeoutMs?: number; serverKeepalive?: boolean; logger?: Logger; applicationName?: string } = {},
): Knex {
  const logger = opts.logger;
  return knex({
    // knex's own warnings (a connection that failed or was dropped) as log lines of the
    // service's logger rather than bare text on stderr; without one, knex's console.
    ...(logger && {
      log: {
        warn: knexWarnings(logger),
        error: (message: unknown) => logger.error({ component: 'knex' }, String(message)),
        deprecate: (method: string, alternative: string) => logger.warn({ component: 'knex' }, `${method} is deprecated: use ${alternative}`),
        debug: (message: unknown) => logger.debug({ component: 'knex' }, String(message)),
      },
    }),
    client: BoundedPgClient as unknown as typeof Knex.Client,
    connection: {
      connectionString,
      statement_timeout: opts.statementTimeoutMs ?? 10000,
      ...(opts.serverKeepalive ? { options: '-c tcp_keepalives_idle=60 -c tcp_keepalives_interval=10 -c tcp_keepalives_count=6' } : {}),
      application_name: opts.applicationName ?? 'lux-listings-feed',
      // A peer that vanished (a host down, a cut network) is found by the kernel's probes.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      // A connection that is not ready within this is given up (a server that accepts but
      // never answers would otherwise hold a place of the pool for tarn's 30 s).
      connectionTimeoutMillis: 5000,
    },
    pool: { min: 0, max: opts.poolMax ?? 10, createTimeoutMillis: 5000 },
    acquireConnectionTimeout: 5000,
  });
}

const isCompiled = import.meta.url.endsWith('.js');

// The migrations run as TypeScript (tsx) in development and as compiled JavaScript in the
// container image. Each is recorded under its source name (….ts) either way, so a database
// migrated by one is up to date for the other.
class ProjectMigrationSource implements Knex.MigrationSource<string> {
  private readonly ext = isCompiled ? '.js' : '.ts';
  async getMigrations(): Promise<string[]> {
    return readdirSync(migrationsDir)
      .filter((f) => f.endsWith(this.ext) && !f.endsWith('.d.ts'))
      .sort();
  }
  getMigrationName(file: string): string {
    return file.replace(/\.js$/, '.ts');
  }
  async getMigration(file: string): Promise<Knex.Migration> {
    return (await import(pathToFileURL(path.join(migrationsDir, file)).href)) as Knex.Migration;
  }
}

export const migrationConfig: Knex.MigratorConfig = {
  migrationSource: new ProjectMigrationSource(),
  tableName: 'knex_migrations',
};

export async function migrateLatest(db: Knex): Promise<string[]> {
  return (await runMigrations(db, 'latest')).files;
}

// `latest` applies every pending migration as one batch; `rollback` undoes the last batch.
export async function runMigrations(db: Knex, command: 'latest' | 'rollback'): Promise<{ batch: number; files: string[] }> {
  const [batch, files] = command === 'latest' ? await db.migrate.latest(migrationConfig) : await db.migrate.rollback(migrationConfig);
  return { batch: batch as number, files: files as string[] };
}
