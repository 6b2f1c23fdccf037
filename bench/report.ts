import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CpuShare } from './cpu.js';
import { HEAP_FLAGS } from './server.js';
import type { Explained } from './explain.js';

// req/s as the tables give it: whole numbers, and two digits below 10 (the bare baseline at
// 1,000,000 listings, a few a second).
const rate = (rps: number) => (rps > 0 && rps < 10 ? rps.toFixed(2) : Math.round(rps).toLocaleString('en'));

export interface Row {
  id: string;
  name: string;
  path: string; // an example request
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  rssMb: number;
  requests: number;
  statuses: Record<string, number>;
  timeouts: number;
  total?: number; // meta.total (or data length) of the example request
  cpu: CpuShare;
  kinds?: { kind: string; n: number; p50: number; p99: number; slowest: { ms: number; path: string } }[];
}

export interface RunInfo {
  listings: number;
  database: string;
  buildSeconds: number;
  reused: boolean;
  duration: number;
  warmup: number;
  connections: number;
  gzip: boolean;
  generator: 'sockets' | 'autocannon';
  poolMax: string;
  // WEB_CONCURRENCY of the server (--workers).
  workers: number;
  date: string;
  commit: string;
  code: string; // fingerprint of src/ and migrations/
  machine: string;
  postgres: string;
  pgSettings: string;
  serverHwmMb: number;
  startRssMb: number;
  readModel: string;
}

const f1 = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

export function table(rows: Row[]): string[][] {
  return [
    ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'peak RSS MB'],
    ...rows.map((r) => [`${r.id} ${r.name}`, rate(r.rps), f1(r.p50), f1(r.p99), String(r.errors), String(Math.round(r.rssMb))]),
  ];
}

export function consoleTable(rows: Row[]): string {
  const t = table(rows);
  const widths = t[0].map((_, i) => Math.max(...t.map((r) => r[i].length)));
  return t.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')).join('\n');
}

function markdownTable(t: string[][]): string {
  const line = (r: string[]) => `| ${r.join(' | ')} |`;
  return [line(t[0]), `|${t[0].map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`, ...t.slice(1).map(line)].join('\n');
}

// The targets of issue 15 (set for 1,000,000 listings, 50 connections).
function targets(rows: Row[], info: RunInfo, resultsDir: string): string[] {
  const out: string[] = [];
  const mark = (ok: boolean) => (ok ? 'met' : '**missed**');
  const list = (xs: Row[], f: (r: Row) => string) => (xs.length ? ` (${xs.map((r) => `${r.id}: ${f(r)}`).join(', ')})` : '');
  const cached = rows.filter((r) => /^[1-8][a-e]?$/.test(r.id));
  if (cached.length) {
    const slow = cached.filter((r) => r.rps < 6000);
    out.push(`- scenarios 1–8 at 6,000 req/s or more: ${mark(slow.length === 0)}${list(slow, (r) => `${Math.round(r.rps)}`)}`);
    const late = cached.filter((r) => r.p99 >= 25);
    out.push(`- scenarios 1–8 p99 under 25 ms: ${mark(late.length === 0)}${list(late, (r) => `${f1(r.p99)} ms`)}`);
    out.push(`- PostgreSQL CPU during scenarios 1–8: ${cached.map((r) => `${r.id} ${Math.round(r.cpu.postgres)}%`).join(', ')} of a core`);
  }
  const mix = rows.find((r) => r.id === '9');
  if (mix) out.push(`- scenario 9 at 1,500 req/s or more, p99 under 100 ms: ${mark(mix.rps >= 1500 && mix.p99 < 100)} (${Math.round(mix.rps)} req/s, p99 ${f1(mix.p99)} ms)`);
  const fresh = rows.find((r) => r.id === '10');
  const bare = rows.find((r) => r.id === '10b');
  if (fresh && bare) {
    // A baseline whose requests all timed out measured nothing: no ratio to it.
    if (bare.requests === 0) out.push(`- scenario 10 at 5 × the bare node:http + pg baseline or more: **not measured** (the baseline answered no request: ${bare.timeouts} timeouts)`);
    else out.push(`- scenario 10 at 5 × the bare node:http + pg baseline or more: ${mark(fresh.rps >= 5 * bare.rps)} (${Math.round(fresh.rps)} against ${rate(bare.rps)} req/s: × ${(fresh.rps / bare.rps).toFixed(1)})`);
  }
  const ours = rows.filter((r) => r.id !== '10b');
  const fat = ours.filter((r) => r.rssMb >= 300);
  out.push(`- peak RSS under 300 MB per server process: ${mark(fat.length === 0 && info.serverHwmMb < 300)} (highest ${Math.round(Math.max(info.serverHwmMb, ...ours.map((r) => r.rssMb)))} MB)`);
  const baseFile = path.join(resultsDir, '10000.json');
  if (info.listings !== 10000 && existsSync(baseFile)) {
    const base = JSON.parse(readFileSync(baseFile, 'utf8')) as { rows: Row[]; info: RunInfo };
    if (base.info.code !== info.code) out.push(`- (the 10,000 baseline measured other code: fingerprint ${base.info.code}; rerun it for a fair ratio)`);
    // Issue 15's scenarios (1-10): the bare baseline is not ours, and the changes feed and the
    // export (11-13) read every listing they are asked for, so they grow with the data by design.
    const ratios = rows
      .filter((r) => /^([1-9]|10)[a-e]?$/.test(r.id) && r.id !== '10b')
      .map((r) => ({ r, b: base.rows.find((x) => x.id === r.id) }))
      .filter((x): x is { r: Row; b: Row } => !!x.b)
      .map(({ r, b }) => ({ id: r.id, ratio: r.p50 / Math.max(b.p50, 0.1) }));
    const bad = ratios.filter((x) => x.ratio > 1.5);
    out.push(
      `- p50 at most 1.5 × p50 at 10,000 on scenarios 1–10 (from 10000.json, ${base.info.date}): ${mark(bad.length === 0)} (${ratios.map((x) => `${x.id} ×${x.ratio.toFixed(1)}`).join(', ')})`,
    );
  }
  return out;
}

// latest.md always; <size>.md and <size>.json (the baseline of the 3 × p50 check) only for a run of every scenario.
export function writeResults(
  rows: Row[],
  info: RunInfo,
  explained: Map<string, Explained>,
  resultsDir: string,
  complete: boolean,
  profile?: string[],
): string {
  mkdirSync(resultsDir, { recursive: true });
  const md: string[] = [];
  md.push(`# Benchmark: ${info.listings.toLocaleString('en')} listings`, '');
  md.push(`Run ${info.date} on commit ${info.commit}, code fingerprint ${info.code} (src/ and migrations/); ${info.machine}; ${info.postgres} (${info.pgSettings}).`);
  md.push(
    `Database \`${info.database}\` (${info.reused ? 'reused; built' : 'built'} in ${info.buildSeconds} s). ${info.generator === 'autocannon' ? 'autocannon' : 'The load generator of bench/load.ts'} in the same process as this runner, ` +
      `${info.connections} connections, ${info.warmup} s warm-up then ${info.duration} s measured per scenario, ` +
      `${info.gzip ? '`Accept-Encoding: gzip`' : 'no Accept-Encoding (identity)'}; server: \`node ${HEAP_FLAGS.join(' ')} dist/src/server.js\`, NODE_ENV=production, ` +
      `WEB_CONCURRENCY=${info.workers}${info.workers > 1 ? ` (${info.workers} workers under node:cluster; peak RSS and CPU are the largest worker's and all processes' sum)` : ' (one process)'}, LOG_LEVEL=warn, METRICS_PORT=-1, DB_POOL_MAX=${info.poolMax}, the real Redis, STATS_RATE_LIMIT_PER_MINUTE=1000000000 (so scenario 7 measures /stats, not the per-IP limiter); ` +
      `server RSS right after start-up: ${Math.round(info.startRssMb)} MB; listings read model: ${info.readModel}.`,
    '',
  );
  md.push(markdownTable(table(rows)), '');
  md.push(
    'req/s: responses received / measured seconds. p50/p99: over every response of the measured window (all statuses). ' +
      'errors: responses with a status other than the expected one (200; 429 for scenario 8 and the Free-key share of 9) plus connection errors and timeouts (10 s). ' +
      'peak RSS: the server process (node itself, spawned directly), the highest of VmRSS sampled every 100 ms and VmHWM (reset before each scenario through /proc/<pid>/clear_refs).',
    '',
  );
  const other = Math.max(...rows.map((r) => r.cpu.other));
  if (other > 20) md.push(`**Disturbed run**: other processes on the machine used up to ${Math.round(other)} % of a core during a scenario (see "other" below); compare with care.`, '');
  md.push('## Targets (issue 6; set for 1,000,000 listings, 50 connections)', '', ...targets(rows, info, resultsDir), '');
  md.push('## Scenarios', '');
  for (const r of rows) {
    const st = Object.entries(r.statuses).map(([k, v]) => `${k} × ${v.toLocaleString('en')}`).join(', ');
    const c = (x: number) => `${Math.round(x)}`;
    md.push(
      `- **${r.id} ${r.name}**: \`${r.path}\`${r.total !== undefined ? ` (matches: ${r.total.toLocaleString('en')})` : ''}; ${r.requests.toLocaleString('en')} responses (${st})${r.timeouts ? `, ${r.timeouts} timeouts` : ''}; ` +
        `CPU % of one core: server ${c(r.cpu.server)}, PostgreSQL ${c(r.cpu.postgres)}, load generator ${c(r.cpu.loadgen)}, other ${c(r.cpu.other)} (machine ${c(r.cpu.machine)} of 200)`,
    );
    for (const k of [...(r.kinds ?? [])].sort((a, b) => b.p50 - a.p50)) {
      md.push(`  - ${k.kind}: ${k.n.toLocaleString('en')} responses, p50 ${f1(k.p50)} ms, p99 ${f1(k.p99)} ms; slowest ${f1(k.slowest.ms)} ms: \`${k.slowest.path}\``);
    }
  }
  if (profile) md.push('', '## Server CPU profile (`--profile`; sampling slows the server a little: these numbers are not a baseline)', '', ...profile);
  md.push('', '## SQL and plans', '');
  md.push(
    'How the SQL is captured: after the load, this runner builds the app in-process (`buildApp`, the same code the benchmarked server runs) on the same database and Redis, ' +
      'serves one request of each scenario through HTTP, and records every statement knex sends during it (knex `query` events, with bindings). ' +
      'Each read is then run again as `EXPLAIN (ANALYZE, BUFFERS)` with the same parameters, on a warm cache. So the plans follow the code: ' +
      'when the queries, indexes or caches change, the next run shows the new SQL (a request answered from an in-process cache sends none; the first request of each shape is a cold one, so its SQL is shown). ' +
      'The API-key lookup is left out unless it is the only statement. Statements are listed slowest first.',
    '',
  );
  for (const [id, e] of explained) {
    const r = rows.find((x) => x.id === id);
    const title = r ? `${r.id} ${r.name}` : `${id} (the slowest request of this kind in the mix)`;
    md.push(`### ${title}`, '', `\`GET ${r?.path ?? e.path}\` → ${e.status} in ${e.requestMs.toFixed(1)} ms (single request, in-process app); ${e.queries.length} statement(s).`, '');
    for (const q of e.queries) {
      md.push(q.ms !== null ? `**${q.ms.toFixed(3)} ms** (execution)` : '', '', '```sql', q.sql, '```', q.bindings.length ? `bindings: \`${JSON.stringify(q.bindings)}\`` : '', '', '```', q.plan, '```', '');
    }
  }
  const text = md.join('\n');
  writeFileSync(path.join(resultsDir, 'latest.md'), text);
  if (complete) {
    writeFileSync(path.join(resultsDir, `${info.listings}.md`), text);
    writeFileSync(path.join(resultsDir, `${info.listings}.json`), JSON.stringify({ info, rows }, null, 2) + '\n');
  }
  return text;
}
