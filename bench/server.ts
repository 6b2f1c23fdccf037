// What bench/run.ts and bench/kind-cpu.ts share about the server they measure: a free port,
// the command line and environment it runs with (the container image's: production mode, the
// compiled JavaScript, the heap cap and allocator settings), the wait for its read model, and
// the data the scenarios draw from.
import net from 'node:net';
import type { Knex } from 'knex';
import type { ScenarioData } from './scenarios.js';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.once('error', reject);
  });
}

// node itself (not npx/tsx wrappers), so that the pid measured is the server's. The heap
// flags the container image uses too (Dockerfile): V8 then collects before the process grows
// past the memory target instead of whenever it pleases. BENCH_NODE_FLAGS adds node flags for a
// run (e.g. `--trace-gc`).
export const HEAP_FLAGS = ['--max-old-space-size=256', '--heap-growing-percent=60', '--max-semi-space-size=8'];
export function serverArgs(nodeFlags: string[] = []): string[] {
  const extra = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  return [...HEAP_FLAGS, ...extra, ...nodeFlags, 'dist/src/server.js'];
}

export function serverEnv(o: { dbUrl: string; redisUrl: string; port: number; workers: number }): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'production',
    DATABASE_URL: o.dbUrl,
    REDIS_URL: o.redisUrl,
    PORT: String(o.port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    // The bench database is a fixed data set built at one moment: 14 days later the server
    // would flag most of it stale.
    STALE_CHECK: 'false',
    LOG_PRETTY: 'false',
    METRICS_PORT: process.env.BENCH_METRICS_PORT ?? '-1', // BENCH_METRICS_PORT: /metrics during a run
    // The allocator settings of the container image (Dockerfile), unless set for the run.
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
    MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? '131072',
    STATS_RATE_LIMIT_PER_MINUTE: '1000000000',
    WEB_CONCURRENCY: String(o.workers),
  };
}

// The listings read model loads in the background after start-up; until it has, answers come
// from SQL. Resolves once it has loaded (or is off), saying how long it took; the server may
// not be listening yet.
type ReadModelState = { status: string; listings?: number; last_load_ms?: number; last_error?: string | null };
export async function waitForReadModel(base: string): Promise<string> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    // Only /readyz's own answer says where the read model is: while the server starts, other
    // answers (a 503 without `read_model`, or none) mean "not yet", never "off".
    let m: ReadModelState | undefined;
    try {
      m = ((await (await fetch(`${base}/readyz`)).json()) as { read_model?: ReadModelState }).read_model;
    } catch {
      /* not listening yet, or not JSON */
    }
    if (m?.status === 'off') return 'off (LISTINGS_READ_MODEL=false): every answer from SQL';
    if (m?.status === 'loaded') return `${m.listings} active listings loaded in ${m.last_load_ms} ms`;
    if (Date.now() > deadline) throw new Error(`the read model did not load within 180 s (${m?.last_error ?? 'no error'})`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

// The ids, communes and quarters the scenarios pick from (cursors are run.ts's own).
export async function scenarioPlaces(db: Knex): Promise<Omit<ScenarioData, 'cursors'>> {
  const ids = (await db.raw(`SELECT id FROM listings WHERE status = 'active' AND NOT flagged ORDER BY md5(id) LIMIT 5000`)).rows.map((r: { id: string }) => r.id);
  const communes = await db('communes').select('name', 'lat', 'lng', 'population');
  const quarters = (await db('localities').where({ commune: 'Luxembourg', kind: 'quartier_luxembourg_city' }).pluck('locality')) as string[];
  return { ids, communes, quarters };
}
