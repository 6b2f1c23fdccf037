import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { scriptArgs } from '../src/lib/script-args.js';
import autocannon from 'autocannon';
import { load } from './load.js';
import pg from 'pg';
import { workerCount } from '../src/cluster.js';
import { createDb } from '../src/db/knex.js';
import { mulberry32 } from '../src/demo/generate.js';
import { projectRoot } from '../src/lib/paths.js';
import { findOrCreateAccount } from '../src/repositories/accounts.js';
import { createApiKey } from '../src/repositories/api-keys.js';
import { checkSchemaUnchanged, codeFingerprint, ensureBenchDb, ensureMarketHistory } from './build-db.js';
import { cpuMeter, loadAverage } from './cpu.js';
import { encodeCursor } from '../src/http/changes-cursor.js';
import { explainRequests } from './explain.js';
import { measureExport, measureWalk } from './export.js';
import { summariseProfile } from './profile.js';
import { consoleTable, writeResults, type Row } from './report.js';
import { keyOf, scenarios, selectScenarios, type Keys, type Req, type Scenario } from './scenarios.js';
import { freePort, scenarioPlaces, serverArgs, serverEnv, waitForReadModel } from './server.js';

const args = scriptArgs({
  options: {
    listings: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '3' },
    scenarios: { type: 'string' },
    rebuild: { type: 'boolean', default: false },
    identity: { type: 'boolean', default: false }, // send no Accept-Encoding (default: gzip, as browsers and fetch do)
    generator: { type: 'string', default: 'sockets' }, // the load generator: sockets (bench/load.ts) or autocannon
    profile: { type: 'boolean', default: false }, // the server under node --cpu-prof; a summary goes to latest.md
    // WEB_CONCURRENCY of the server. Default: what the server does in production, one worker
    // per core (src/cluster.ts); with --profile, one process (the profile is of one process).
    workers: { type: 'string' },
  },
}, "Usage: npm run bench -- [--listings 10000|100000|1000000] [--duration 15] [--connections 50] [--warmup 3] [--scenarios 1,2,3] [--rebuild] [--identity] [--generator sockets|autocannon] [--profile] [--workers N] (bench/README.md)");
const positive = (name: string, v: string | undefined) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer`);
  return n;
};
const listings = positive('listings', args.listings);
const duration = positive('duration', args.duration);
const connections = positive('connections', args.connections);
const warmup = Number(args.warmup);
const gzip = !args.identity;
const generator = args.generator === 'autocannon' ? 'autocannon' : 'sockets';
const PG = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
// The server's own rule (src/cluster.ts) for a production server with a database.
const workers = args.workers !== undefined ? positive('workers', args.workers) : args.profile ? 1 : workerCount({ NODE_ENV: 'production', WEB_CONCURRENCY: undefined, DATABASE_URL: PG });
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const resultsDir = path.join(projectRoot, 'bench', 'results');
const profileDir = path.join(projectRoot, 'bench', 'db-cache', `profile-${listings}`); // git-ignored
// The measured windows of the scenarios (not the warm-ups), on the clock of V8's CPU profiles:
// CLOCK_MONOTONIC in µs, the same for every process on Linux. The profile's summary counts only
// the samples taken in them, so the server's start-up (the read model's load) stays out of it.
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
const measured: [number, number][] = [];
const log = (m: string) => process.stdout.write(m + '\n');

let server: ChildProcess | null = null;
process.on('SIGINT', () => {
  server?.kill('SIGKILL');
  process.exit(130);
});

function memKb(pid: number): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0);
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

// Resets the kernel's peak-RSS mark of the process, so VmHWM is the peak of this scenario.
function resetHwm(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

// The server's processes: itself, and its workers when WEB_CONCURRENCY > 1 (the primary
// then serves nothing: the peak is a worker's).
function serverPids(pid: number): number[] {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    return [pid, ...children];
  } catch {
    return [pid];
  }
}

// The peak resident size of the largest server process (one worker when there are several).
function rssSampler(pid: number) {
  const pids = serverPids(pid);
  const hwmReset = pids.map(resetHwm).every(Boolean);
  let peak = 0;
  const timer = setInterval(() => {
    for (const p of pids) {
      try {
        peak = Math.max(peak, memKb(p).rss);
      } catch {
        /* the process is gone: the run reports it */
      }
    }
  }, 100);
  return {
    stopMb(): number {
      clearInterval(timer);
      let top = peak;
      for (const p of pids) {
        try {
          const m = memKb(p);
          top = Math.max(top, m.rss, hwmReset ? m.hwm : 0);
        } catch {
          /* gone */
        }
      }
      return top / 1024;
    },
  };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function drive(base: string, s: Scenario, keys: Keys, seconds: number, seed: number, timeoutSeconds = 10) {
  const rng = mulberry32(seed);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let wrong = 0;
  // Per part of the mix: latencies and the slowest request.
  const kinds = new Map<string, { ms: number[]; slowest: { ms: number; req: Req } }>();
  const headers = (r: Req) => ({
    ...(r.key ? { authorization: `Bearer ${keyOf(keys, r.key)}` } : {}),
    ...(gzip ? { 'accept-encoding': 'gzip' } : {}),
  });
  const started = performance.now();
  const onResponse = (status: number, ms: number, r: Req) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status !== r.expect) wrong++;
    latencies.push(ms);
    if (!r.kind) return;
    const k = kinds.get(r.kind) ?? { ms: [], slowest: { ms: -1, req: r } };
    k.ms.push(ms);
    if (ms > k.slowest.ms) k.slowest = { ms, req: r };
    kinds.set(r.kind, k);
  };
  let result: { errors: number; timeouts: number };
  if (generator === 'autocannon') {
    // The previous generator, for comparison (--generator autocannon).
    type Ctx = { req?: Req };
    result = await new Promise<autocannon.Result>((resolve, reject) => {
      const instance = autocannon(
        {
          url: base,
          connections,
          duration: seconds,
          timeout: timeoutSeconds,
          requests: [
            {
              setupRequest: (req, context) => {
                const r = s.next(rng);
                (context as Ctx).req = r;
                return { ...req, method: 'GET', path: r.path, headers: headers(r) };
              },
              onResponse: (status, _body, context) => {
                last = (context as Ctx).req;
                lastStatus = status;
              },
            },
          ],
        },
        (err, res) => (err ? reject(err) : resolve(res)),
      );
      // onResponse runs just before the 'response' event of the same response, so `last` is
      // that response's request.
      let last: Req | undefined;
      let lastStatus = 0;
      instance.on('response', (_client, _status, _bytes, ms) => onResponse(lastStatus, ms, last!));
    });
  } else {
    const url = new URL(base);
    result = await load<Req>({
      host: url.hostname,
      port: Number(url.port),
      connections,
      seconds,
      timeoutSeconds,
      next: () => {
        const r = s.next(rng);
        return { path: r.path, headers: headers(r), ctx: r };
      },
      onResponse,
    });
  }
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors: wrong + result.errors,
    timeouts: result.timeouts,
    requests: latencies.length,
    statuses,
    kinds: kinds.size
      ? [...kinds].map(([kind, k]) => {
          k.ms.sort((a, b) => a - b);
          return { kind, n: k.ms.length, p50: percentile(k.ms, 50), p99: percentile(k.ms, 99), slowest: { ms: k.slowest.ms, path: k.slowest.req.path }, req: k.slowest.req };
        })
      : undefined,
  };
}

async function fetchAs(base: string, r: Req, keys: Keys) {
  const res = await fetch(base + r.path, { headers: r.key ? { authorization: `Bearer ${keyOf(keys, r.key)}` } : {} });
  const text = await res.text();
  return { status: res.status, text };
}

async function startServer(dbUrl: string, port: number, logFile: string): Promise<{ child: ChildProcess; tail: string[] }> {
  const tail: string[] = [];
  writeFileSync(logFile, '');
  const profiling = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  if (args.profile) {
    rmSync(profileDir, { recursive: true, force: true });
    mkdirSync(profileDir, { recursive: true });
  }
  // Production mode runs the compiled JavaScript (npm run build), as the container image does.
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: projectRoot, stdio: 'inherit' });
  const child = spawn(process.execPath, serverArgs(profiling), {
    cwd: projectRoot,
    env: serverEnv({ dbUrl, redisUrl: REDIS, port, workers }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (b: Buffer) => {
    appendFileSync(logFile, b);
    tail.push(...b.toString().split('\n').filter(Boolean));
    tail.splice(0, Math.max(0, tail.length - 40));
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}):\n${tail.join('\n')}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return { child, tail };
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`the server did not answer /healthz within 60 s:\n${tail.join('\n')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

const BARE_TIMEOUT_S = 120;

async function measureBare(dbUrl: string, s: Scenario, index: number, keys: Keys): Promise<Row> {
  s.next(mulberry32(7)); // the request the API's check took from the stream
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/bare-server.ts'], { cwd: projectRoot, env: { ...process.env, BARE_DB_URL: dbUrl, PORT: String(port) }, stdio: 'inherit' });
  const pgClient = new pg.Client({ connectionString: dbUrl });
  await pgClient.connect();
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const ok = await fetch(`${base}/api/v1/listings?page=1`).then((r) => r.ok, () => false);
      if (ok) break;
      if (Date.now() > deadline || child.exitCode !== null) throw new Error('the bare server did not start');
      await new Promise((r) => setTimeout(r, 200));
    }
    process.stdout.write(`  10b bare node:http + pg, the same requests … `);
    // Its requests are given BARE_TIMEOUT_S, not the 10 s of the API's: at 1,000,000 listings
    // each takes seconds, and with 10 s every one of them timed out, which measured nothing.
    if (warmup > 0) await drive(base, s, keys, warmup, 1000 + index, BARE_TIMEOUT_S);
    const meter = cpuMeter(() => [child.pid!], async () =>
      (await pgClient.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows.map((r: { pid: number }) => r.pid),
    );
    const sampler = rssSampler(child.pid!);
    await meter.start();
    const m = await drive(base, s, keys, duration, 1 + index, BARE_TIMEOUT_S);
    const cpu = await meter.stop();
    const rssMb = sampler.stopMb();
    log(`${m.rps.toFixed(2)} req/s, p50 ${m.p50.toFixed(1)} ms, p99 ${m.p99.toFixed(1)} ms, ${m.errors} errors`);
    const { kinds, ...rest } = m;
    return { id: '10b', name: 'bare node:http + pg (baseline)', path: '(the same requests as 10)', rssMb, cpu, kinds: kinds?.map(({ req: _req, ...k }) => k), ...rest };
  } finally {
    await pgClient.end();
    child.kill('SIGTERM');
  }
}

function readOnlyGit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: projectRoot }).toString().trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: projectRoot }).toString().trim() !== '';
    return `${head}${dirty ? ' (with uncommitted changes)' : ''}`;
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const all = scenarios({ ids: [], communes: [], quarters: [], cursors: [] });
  const chosenIds = selectScenarios(all, args.scenarios).map((s) => s.id);

  const code = codeFingerprint();
  const bench = await ensureBenchDb({ baseUrl: PG, listings, rebuild: args.rebuild, log });
  await ensureMarketHistory(bench.url, log);
  const db = createDb(bench.url, { poolMax: 2 });
  let keys: Keys;
  let starterKey = '';
  let run: Scenario[];
  let pgInfo: { postgres: string; settings: string };
  let data: Parameters<typeof scenarios>[0];
  try {
    const accountId = await findOrCreateAccount(db, 'bench@listings-feed.local');
    await db('api_keys').where({ account_id: accountId }).whereNull('revoked_at').update({ revoked_at: new Date() });
    keys = {
      pro: (await createApiKey(db, { accountId, tier: 'pro', name: 'bench pro' })).key,
      free: (await createApiKey(db, { accountId, tier: 'free', name: 'bench free' })).key,
      changes: [],
    };
    for (let i = 0; i < connections; i++) keys.changes!.push((await createApiKey(db, { accountId, tier: 'pro', name: `bench changes ${i}` })).key);
    starterKey = (await createApiKey(db, { accountId, tier: 'starter', name: 'bench starter' })).key;
    const places = await scenarioPlaces(db);
    const cursors = (await db.raw(`SELECT seq, listing_id FROM listing_changes ORDER BY md5(listing_id) LIMIT 2000`)).rows.map(
      (r: { seq: number; listing_id: string }) => encodeCursor({ seq: Number(r.seq), id: r.listing_id }),
    );
    data = { ...places, cursors };
    run = selectScenarios(scenarios(data), chosenIds.join(','));
    const v = (await db.raw(`SELECT current_setting('server_version') AS v, current_setting('shared_buffers') AS sb,
      current_setting('work_mem') AS wm, current_setting('jit') AS jit, current_setting('max_connections') AS mc`)).rows[0];
    pgInfo = { postgres: `PostgreSQL ${v.v}`, settings: `shared_buffers ${v.sb}, work_mem ${v.wm}, jit ${v.jit}, max_connections ${v.mc}` };
  } finally {
    await db.destroy();
  }

  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  log(`starting the server on ${base} (NODE_ENV=production)`);
  const logFile = path.join(resultsDir, `server-${listings}.log`); // *.log is git-ignored
  const started = await startServer(bench.url, port, logFile);
  server = started.child;
  await checkSchemaUnchanged(bench.url);
  const pid = server.pid!;
  const startRssMb = memKb(pid).rss / 1024;
  // The listings read model loads in the background after start-up; until it has, answers come
  // from SQL. Measure the steady state: wait for it (and say how long it took).
  const readModel = await waitForReadModel(base);
  log(`read model: ${readModel}`);
  const rows: Row[] = [];
  const slowestOfMix: { id: string; req: Req }[] = [];
  let serverHwmMb = 0;
  const pgClient = new pg.Client({ connectionString: bench.url });
  await pgClient.connect();
  const meter = cpuMeter(() => serverPids(pid), async () =>
    (await pgClient.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows.map((r: { pid: number }) => r.pid),
  );
  try {
    // The Free key's daily quota (100) is used up first: scenario 8 measures the 429 path.
    for (let i = 0; i < 200; i++) {
      if ((await fetchAs(base, { path: '/api/v1/listings?per_page=1', key: 'free', expect: 200 }, keys)).status === 429) break;
    }
    // Every scenario must answer as expected before it is measured (a fast 400 is no result).
    const examples = new Map<string, { req: Req; total?: number }>();
    for (const s of run) {
      const rng = mulberry32(7);
      for (let i = 0; i < (s.id === '9' ? 200 : 1); i++) {
        const req = s.next(rng);
        if (s.download) {
          examples.set(s.id, { req });
          break;
        }
        const res = await fetchAs(base, req, keys);
        if (res.status !== req.expect) throw new Error(`scenario ${s.id}: GET ${req.path} answered ${res.status}, expected ${req.expect}: ${res.text.slice(0, 300)}`);
        if (i === 0) {
          const body = req.expect === 200 ? (JSON.parse(res.text) as { meta?: { total?: number }; data?: unknown[] }) : {};
          examples.set(s.id, { req, total: body.meta?.total ?? (Array.isArray(body.data) ? body.data.length : undefined) });
        }
      }
    }

    const busy = loadAverage();
    if (busy > 0.7) log(`warning: the machine is busy before the run (load average ${busy}): other work competes for the 2 cores; see "other" CPU below`);
    log(`${run.length} scenarios × (${warmup} s warm-up + ${duration} s), ${connections} connections${gzip ? ', gzip' : ''}, WEB_CONCURRENCY=${workers}\n`);
    for (const [i, s] of run.entries()) {
      process.stdout.write(`  ${s.id} ${s.name} … `);
      if (s.download === 'walk') {
        const sampler = rssSampler(pid);
        await meter.start();
        const scratch = await measureWalk(base, starterKey);
        // A day's import: 10,000 listings change (one statement, as an import's update does),
        // then the daily run from the stored cursor. Undone afterwards (10,000 more changes,
        // which later runs' walks from scratch do not see as more rows: one row a listing).
        const day = `(SELECT id FROM listings WHERE status = 'active' AND NOT flagged ORDER BY md5(id) LIMIT 10000)`;
        await pgClient.query(`UPDATE listings SET price_eur = price_eur + 1 WHERE id IN ${day}`);
        const daily = await measureWalk(base, starterKey, scratch.cursor);
        await pgClient.query(`UPDATE listings SET price_eur = price_eur - 1 WHERE id IN ${day}`);
        // The two updates leave a dead copy of 20,000 rows: at 10,000 listings twice the live table,
        // which the bare baseline after (10b, whose plans scan the table) then read too (stop 63: 57
        // req/s against 203 once vacuumed). Autovacuum would come, at a moment of its own.
        await pgClient.query(`VACUUM listings`);
        const cpu = await meter.stop();
        const rssMb = sampler.stopMb();
        serverHwmMb = Math.max(serverHwmMb, rssMb);
        rows.push({
          id: s.id,
          name: `${s.name}: from scratch ${scratch.requests} requests, ${scratch.changes.toLocaleString('en')} listings, ${scratch.seconds.toFixed(0)} s (page p50 ${scratch.p50.toFixed(0)} ms); daily ${daily.requests} requests, ${daily.changes.toLocaleString('en')} changes, ${daily.seconds.toFixed(1)} s`,
          path: s.next(mulberry32(1)).path,
          rps: scratch.requests / scratch.seconds,
          p50: scratch.p50,
          p99: scratch.p99,
          errors: 0,
          rssMb,
          requests: scratch.requests + daily.requests,
          statuses: { 200: scratch.requests + daily.requests },
          timeouts: 0,
          total: scratch.changes,
          cpu,
        });
        log(`from scratch: ${scratch.requests} requests, ${scratch.changes} listings in ${scratch.seconds.toFixed(1)} s (page p50 ${scratch.p50.toFixed(0)} ms, p99 ${scratch.p99.toFixed(0)} ms); after 10,000 changes: ${daily.requests} requests, ${daily.changes} changes in ${daily.seconds.toFixed(1)} s`);
        continue;
      }
      if (s.download) {
        const sampler = rssSampler(pid);
        await meter.start();
        const e = await measureExport(base, keys.pro, s.next(mulberry32(1)).path, () => memKb(pid).rss / 1024);
        const cpu = await meter.stop();
        const rssMb = sampler.stopMb();
        serverHwmMb = Math.max(serverHwmMb, rssMb);
        const ms = e.seconds * 1000;
        rows.push({
          id: s.id,
          name: `${s.name}: ${e.lines.toLocaleString('en')} listings, ${e.mb.toFixed(0)} MB ${gzip ? 'gzip' : 'identity'}, ${e.seconds.toFixed(1)} s, RSS ${e.rssBeforeMb.toFixed(0)} → peak ${rssMb.toFixed(0)} MB`,
          path: s.next(mulberry32(1)).path,
          rps: 1 / e.seconds,
          p50: ms,
          p99: ms,
          errors: e.status === 200 ? 0 : 1,
          rssMb,
          requests: 1,
          statuses: { [e.status]: 1 },
          timeouts: 0,
          total: e.lines,
          cpu,
        });
        log(`${e.lines} listings in ${e.seconds.toFixed(1)} s (${e.mb.toFixed(1)} MB), server RSS ${e.rssBeforeMb.toFixed(0)} MB before, peak ${rssMb.toFixed(0)} MB`);
        continue;
      }
      if (warmup > 0) await drive(base, s, keys, warmup, 1000 + i);
      const sampler = rssSampler(pid);
      await meter.start();
      const window = monotonicUs();
      const m = await drive(base, s, keys, duration, 1 + i);
      measured.push([window, monotonicUs()]);
      const cpu = await meter.stop();
      const rssMb = sampler.stopMb();
      serverHwmMb = Math.max(serverHwmMb, rssMb);
      const ex = examples.get(s.id)!;
      const { kinds, ...rest } = m;
      if (kinds) for (const k of kinds.filter((x) => x.req.expect === 200)) slowestOfMix.push({ id: `${s.id} ${k.kind}`, req: k.req });
      rows.push({
        id: s.id,
        name: s.name,
        path: ex.req.path.replace(/\/lst_[0-9a-f]+$/, '/{random id}'),
        rssMb,
        total: ex.total,
        cpu,
        kinds: kinds?.map(({ req: _req, ...k }) => k),
        ...rest,
      });
      const c = (x: number) => `${Math.round(x)}%`;
      log(
        `${Math.round(m.rps)} req/s, p50 ${m.p50.toFixed(1)} ms, p99 ${m.p99.toFixed(1)} ms, ${m.errors} errors; ` +
          `CPU: server ${c(cpu.server)}, PostgreSQL ${c(cpu.postgres)}, load generator ${c(cpu.loadgen)}, other ${c(cpu.other)}`,
      );
      if (server.exitCode !== null) throw new Error(`the server died during scenario ${s.id}:\n${started.tail.join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 1000)); // let the requests cut off at the end of the last run finish
  } finally {
    await pgClient.end();
    await stopServer(server);
    server = null;
  }
  // Scenario 10's baseline, in the same run: the bare node:http + pg server of
  // bench/bare-server.ts, sent the same stream of fresh queries (same seeds).
  const at10 = run.findIndex((s) => s.id === '10');
  if (at10 >= 0) rows.push(await measureBare(bench.url, scenarios(data).find((s) => s.id === '10')!, at10, keys));
  const warnLines = started.tail.filter((l) => /"level":(40|50|60)/.test(l));
  if (warnLines.length) log(`\nthe server logged warnings or errors (see bench/results/server-${listings}.log); the last:\n  ${warnLines.at(-1)?.slice(0, 400)}`);

  log('\ncapturing the SQL of each scenario and its EXPLAIN (ANALYZE, BUFFERS) …');
  // Each scenario's example request, and for the mix the slowest request of each kind.
  const toExplain = [...run.filter((s) => s.explain).map((s) => ({ id: s.id, req: s.next(mulberry32(7)) })), ...slowestOfMix];
  const explained = await explainRequests({ dbUrl: bench.url, redisUrl: REDIS, keys, requests: toExplain });

  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const codeAfter = codeFingerprint();
  if (codeAfter !== code) log('warning: src/ or migrations/ changed during the run: the scenarios did not all measure the same code');
  writeResults(
    rows,
    {
      listings,
      database: bench.name,
      buildSeconds: bench.buildSeconds,
      reused: bench.reused,
      duration,
      warmup,
      connections,
      gzip,
      generator,
      poolMax: process.env.DB_POOL_MAX ?? '10 (default)',
      workers,
      date: new Date().toISOString(),
      commit: readOnlyGit(),
      code: codeAfter === code ? code : `${code} → ${codeAfter} (changed during the run)`,
      machine: `${cpus().length} cores (${cpu})`,
      postgres: pgInfo.postgres,
      pgSettings: pgInfo.settings,
      serverHwmMb,
      startRssMb,
      readModel,
    },
    explained,
    resultsDir,
    run.length === all.length && !args.profile,
    args.profile ? summariseProfile(profileDir, measured) : undefined,
  );
  log(`\n${listings.toLocaleString('en')} listings, ${connections} connections, ${duration} s per scenario\n`);
  log(consoleTable(rows));
  const other = Math.max(0, ...rows.map((r) => r.cpu.other));
  if (other > 20) log(`\ndisturbed: other processes used up to ${Math.round(other)} % of a core during a scenario (the "other" CPU above)`);
  log(`\nwritten: bench/results/latest.md${run.length === all.length ? ` and bench/results/${listings}.md (+ ${listings}.json)` : ' (a subset of the scenarios: the per-size files are kept)'}`);
}

main().catch(async (err) => {
  if (server) await stopServer(server);
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
