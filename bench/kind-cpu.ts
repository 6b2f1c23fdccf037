// CPU per response of each kind of scenario 9's requests, measured on the real server (the
// compiled app, production mode, one worker) against a bench database: for each kind, the
// server's and its PostgreSQL backends' CPU time (bench/cpu.ts, from /proc) over a few thousand requests of
// that kind alone, after a warm-up of the same kind. CPU time per response is what a busy,
// shared machine disturbs least, so it compares two versions of the code, or 10,000 against
// 1,000,000 listings, where req/s and p50 of the mix move with the machine.
//
//   npx tsx bench/kind-cpu.ts [--listings 1000000] [--seconds 8] [--warmup 4] [--connections 20] [--kinds "by id,geo"]
import { execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { scriptArgs } from '../src/lib/script-args.js';
import pg from 'pg';
import { createDb } from '../src/db/knex.js';
import { mulberry32 } from '../src/demo/generate.js';
import { projectRoot } from '../src/lib/paths.js';
import { findOrCreateAccount } from '../src/repositories/accounts.js';
import { createApiKey } from '../src/repositories/api-keys.js';
import { ensureBenchDb, ensureMarketHistory } from './build-db.js';
import { cpuMeter } from './cpu.js';
import { load } from './load.js';
import { summariseProfile } from './profile.js';
import { keyOf, scenarios, type Req } from './scenarios.js';
import { freePort, scenarioPlaces, serverArgs, serverEnv, waitForReadModel } from './server.js';

const args = scriptArgs({
  options: {
    listings: { type: 'string', default: '1000000' },
    seconds: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '4' },
    connections: { type: 'string', default: '20' },
    kinds: { type: 'string' },
    profile: { type: 'boolean', default: false }, // the server under --cpu-prof: the measured windows' top frames
  },
}, "Usage: npm run bench:kinds -- [--listings 1000000] [--seconds 8] [--warmup 4] [--connections 20] [--kinds \"by id,geo\"] [--profile] (bench/README.md)");
const PG = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
const REDIS = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const bench = await ensureBenchDb({ baseUrl: PG, listings: Number(args.listings), rebuild: false, log: console.log });
await ensureMarketHistory(bench.url, console.log);
const db = createDb(bench.url, { poolMax: 2 });
const accountId = await findOrCreateAccount(db, 'bench@listings-feed.local');
const keys = {
  pro: (await createApiKey(db, { accountId, tier: 'pro', name: 'kind-cpu pro' })).key,
  free: (await createApiKey(db, { accountId, tier: 'free', name: 'kind-cpu free' })).key,
};
const places = await scenarioPlaces(db);
await db.destroy();
const mix = scenarios({ ...places, cursors: [] }).find((s) => s.id === '9')!;

execFileSync('npm', ['run', '--silent', 'build'], { cwd: projectRoot, stdio: 'inherit' });
const port = await freePort();
const profileDir = path.join(projectRoot, 'bench', 'db-cache', 'profile-kind-cpu'); // git-ignored
rmSync(profileDir, { recursive: true, force: true });
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
const windows: [number, number][] = [];
const profiling = args.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
const child = spawn(process.execPath, serverArgs(profiling), {
  cwd: projectRoot,
  env: serverEnv({ dbUrl: bench.url, redisUrl: REDIS, port, workers: 1 }),
  stdio: 'inherit',
});
// The server's CPU and that of its PostgreSQL backends (bench/cpu.ts), per measured window.
const pgClient = new pg.Client({ connectionString: bench.url });
await pgClient.connect();
const meter = cpuMeter(() => [child.pid!], async () =>
  (await pgClient.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')).rows.map((r: { pid: number }) => r.pid),
);
try {
  await waitForReadModel(`http://127.0.0.1:${port}`);
  const kinds = ['list', 'filtered', 'geo', 'deep page', 'by id', 'market all', 'market one', 'market by type and rooms', 'market history', 'stats', 'free 429'];
  const wanted = args.kinds ? args.kinds.split(',').map((k) => k.trim()) : kinds;
  console.log(`${Number(args.listings).toLocaleString('en')} listings; each kind alone for ${args.seconds} s after ${args.warmup} s of warm-up; ${args.connections} connections; ms of CPU per response`);
  console.log(['kind', 'server', 'postgres', 'req/s', 'read model'].join('\t'));
  // Searches the read model answered (readyz): a listing search that no cache held should be
  // one; a share far below that means the measured window ran on SQL.
  const served = async () => ((await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { read_model: { served?: number } }).read_model.served ?? 0;
  for (const kind of wanted) {
    if (!kinds.includes(kind)) throw new Error(`no kind ${kind} (kinds: ${kinds.join(', ')})`);
    // The mix's own generator and seed, keeping only this kind's requests.
    const rng = mulberry32(9);
    const next = () => {
      for (;;) {
        const r = mix.next(rng);
        if (r.kind === kind) return { path: r.path, headers: { ...(r.key ? { authorization: `Bearer ${keyOf(keys, r.key)}` } : {}), 'accept-encoding': 'gzip' }, ctx: r };
      }
    };
    for (const phase of ['warm', 'measure'] as const) {
      const wrong = new Map<number, number>(); // unexpected status → responses
      let servedBefore = 0;
      if (phase === 'measure') {
        servedBefore = await served();
        await meter.start();
      }
      const t0 = performance.now();
      const w0 = monotonicUs();
      const res = await load<Req>({
        host: '127.0.0.1',
        port,
        connections: Number(args.connections),
        seconds: Number(phase === 'warm' ? args.warmup : args.seconds),
        timeoutSeconds: 30,
        next,
        onResponse: (status, _ms, r) => {
          if (status !== r.expect) wrong.set(status, (wrong.get(status) ?? 0) + 1);
        },
      });
      if (phase === 'warm') continue;
      const ms = performance.now() - t0;
      windows.push([w0, monotonicUs()]);
      const cpu = await meter.stop();
      const fromIndex = (await served()) - servedBefore;
      if (wrong.size > 0 || res.errors > 0) throw new Error(`${kind}: unexpected statuses (${[...wrong].map(([s, n]) => `${n} × ${s}`).join(', ')}), ${res.errors} errors`);
      // % of a core over the window → ms of CPU per response.
      const perResponse = (pct: number) => ((pct / 100) * ms) / res.responses;
      console.log([kind, perResponse(cpu.server).toFixed(3), perResponse(cpu.postgres).toFixed(3), Math.round((res.responses / ms) * 1000), `${Math.round((100 * fromIndex) / res.responses)} %`].join('\t'));
    }
  }
} finally {
  await pgClient.end();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
if (args.profile) for (const line of summariseProfile(profileDir, windows, 30)) console.log(line);
process.exit(0);
