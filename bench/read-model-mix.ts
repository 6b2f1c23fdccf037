// The read model's own CPU per kind of scenario 9's listing requests, measured in-process
// (no HTTP, no PostgreSQL, no load generator): the index of the 1,000,000-listing bench
// database, then the mix's requests (same generator, same seed) through count and page as
// the API calls them. CPU time is what a shared machine disturbs least, so this is the
// figure to compare between two versions of the read model.
//
// --shape prints instead what the requests ask of the rest of the server at that size: per
// kind (scenario 9's, and scenario 10's fresh queries), the share of empty pages (past the
// last match: no row to read from PostgreSQL, nothing to write) and the rows per response.
// The same requests do less at 10,000 listings than at 1,000,000 (bench/README.md, stop 33).
//
//   npx tsx bench/read-model-mix.ts [--listings 1000000] [--requests 20000] [--rounds 3] [--shape]
import { parseArgs } from 'node:util';
import { createDb } from '../src/db/knex.js';
import { mulberry32 } from '../src/demo/generate.js';
import { searchRequest } from '../src/http/routes/listings.js';
import { listingsQuery, listingsQueryShape } from '../src/http/schemas/listings.js';
import { validateQuery } from '../src/http/validate.js';
import { loadListingIndex } from '../src/read-model/builder.js';
import { loadGazetteer } from '../src/reference/load.js';
import { ensureBenchDb } from './build-db.js';
import { scenarios } from './scenarios.js';

const { values: args } = parseArgs({
  options: {
    listings: { type: 'string', default: '1000000' },
    requests: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '3' },
    shape: { type: 'boolean', default: false },
  },
});
const PG = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';

const bench = await ensureBenchDb({ baseUrl: PG, listings: Number(args.listings), rebuild: false, log: (m) => console.log(m) });
const db = createDb(bench.url, { poolMax: 2 });
try {
  const gazetteer = await loadGazetteer(db);
  const ids = (await db.raw(`SELECT id FROM listings WHERE status = 'active' AND NOT flagged ORDER BY md5(id) LIMIT 5000`)).rows.map((r: { id: string }) => r.id);
  const communes = await db('communes').select('name', 'lat', 'lng', 'population');
  const quarters = (await db('localities').where({ commune: 'Luxembourg', kind: 'quartier_luxembourg_city' }).pluck('locality')) as string[];
  let t = performance.now();
  const index = await loadListingIndex(db);
  console.log(`index of ${index.size} listings loaded in ${Math.round(performance.now() - t)} ms`);
  // The listing searches of a scenario's generator (seed 1), as the API reads them.
  const searches = (id: string) => {
    const scenario = scenarios({ ids, communes, quarters, cursors: [] }).find((s) => s.id === id)!;
    const rng = mulberry32(1);
    const out: { kind: string; r: ReturnType<typeof searchRequest> }[] = [];
    while (out.length < Number(args.requests)) {
      const req = scenario.next(rng);
      const [path, qs = ''] = req.path.split('?');
      if (path !== '/api/v1/listings' || req.key !== 'pro' || !req.kind) continue;
      const q = validateQuery(listingsQueryShape, Object.fromEntries(new URLSearchParams(qs)), listingsQuery);
      out.push({ kind: req.kind, r: searchRequest(q, { gazetteer, seesFlagged: true }) });
    }
    return out;
  };
  const reqs = searches('9');
  if (args.shape) {
    for (const [name, list] of [['9 mixed', reqs], ['10 fresh', searches('10')]] as const) {
      const tally = new Map<string, { n: number; empty: number; rows: number }>();
      for (const { kind, r } of list) {
        const rows = Math.max(0, Math.min(r.perPage, index.count(r.filter) - (r.page - 1) * r.perPage));
        const t = tally.get(kind) ?? { n: 0, empty: 0, rows: 0 };
        t.n++;
        t.empty += rows === 0 ? 1 : 0;
        t.rows += rows;
        tally.set(kind, t);
      }
      console.log(name);
      for (const [kind, t] of [...tally].sort()) {
        console.log(`  ${kind.padEnd(10)} ${String(t.n).padStart(6)} requests: empty pages ${((100 * t.empty) / t.n).toFixed(1)} %, rows per response ${(t.rows / t.n).toFixed(1)}`);
      }
    }
  } else timeRounds(index, reqs);
} finally {
  await db.destroy();
}

// CPU per request of count and page, per kind, over `rounds` passes of the requests.
function timeRounds(index: Awaited<ReturnType<typeof loadListingIndex>>, reqs: { kind: string; r: ReturnType<typeof searchRequest> }[]): void {
  const checksum = new Map<string, number>();
  for (let round = 0; round < Number(args.rounds); round++) {
    const byKind = new Map<string, { n: number; count: number; page: number; worst: number }>();
    // CPU time, not wall time: the machine may be shared (µs of user + system time).
    const cpu = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    for (const { kind, r } of reqs) {
      const t = cpu();
      const total = index.count(r.filter);
      const t1 = cpu();
      const found = index.page(r.filter, r.sort, (r.page - 1) * r.perPage, r.perPage, total);
      const t2 = cpu();
      const k = byKind.get(kind) ?? { n: 0, count: 0, page: 0, worst: 0 };
      k.n++;
      k.count += t1 - t;
      k.page += t2 - t1;
      k.worst = Math.max(k.worst, t2 - t);
      byKind.set(kind, k);
      if (round === 0) checksum.set(kind, ((checksum.get(kind) ?? 0) + total + found.rows.reduce((s, x) => s + x, 0)) % 1e12);
    }
    console.log(`round ${round + 1}`);
    for (const [kind, k] of [...byKind].sort()) {
      console.log(`  ${kind.padEnd(10)} ${String(k.n).padStart(6)} requests: CPU: count ${(k.count / k.n).toFixed(3)} ms, page ${(k.page / k.n).toFixed(3)} ms per request; slowest ${k.worst.toFixed(1)} ms`);
    }
  }
  console.log(`checksums of the answers (equal across versions that answer the same): ${[...checksum].sort().map(([k, v]) => `${k} ${v}`).join(', ')}`);
}
