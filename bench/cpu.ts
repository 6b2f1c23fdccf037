import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

// Where the machine's CPU went during a scenario, in % of one core (the machine has
// cpus().length × 100 %): the server, its PostgreSQL backends, this load generator and
// everything else (another engineer's job running at the same time shows up there).

// null: the process is gone (its last ticks can no longer be read).
function procTicks(pid: number): number | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
    return Number(f[11]) + Number(f[12]); // utime + stime (fields 14 and 15)
  } catch {
    return null;
  }
}

function machineTicks(): { total: number; idle: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  return { total: v.reduce((a, b) => a + b, 0), idle: v[3] + (v[4] ?? 0) };
}

export interface CpuShare {
  server: number;
  postgres: number;
  loadgen: number;
  other: number;
  machine: number;
}

// The ticks of those of `pids` still running.
function snapshot(pids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const p of pids) {
    const t = procTicks(p);
    if (t !== null) out.set(p, t);
  }
  return out;
}

// The ticks used since `before` by its processes and those of `now` (a new one: all of its
// own). One that exited during the window is left out: its last ticks are gone, and counting
// it as 0 made a share negative (PostgreSQL's, when the pool closes idle connections) and
// "other" too large; what it used in the window then shows as "other".
function usedSince(before: Map<number, number>, now: number[]): number {
  let used = 0;
  for (const p of new Set([...before.keys(), ...now])) {
    const t = procTicks(p);
    if (t !== null) used += t - (before.get(p) ?? 0);
  }
  return used;
}

export function cpuMeter(serverPids: () => number[], pgPids: () => Promise<number[]>) {
  const cores = cpus().length;
  let start: { m: { total: number; idle: number }; server: Map<number, number>; pg: Map<number, number>; self: NodeJS.CpuUsage; t: number };
  return {
    async start(): Promise<void> {
      const pg = snapshot(await pgPids());
      start = { m: machineTicks(), server: snapshot(serverPids()), pg, self: process.cpuUsage(), t: performance.now() };
    },
    async stop(): Promise<CpuShare> {
      const m = machineTicks();
      const server = usedSince(start.server, serverPids());
      const self = process.cpuUsage(start.self);
      const secs = (performance.now() - start.t) / 1000;
      const pg = usedSince(start.pg, await pgPids());
      const dTotal = m.total - start.m.total;
      const pct = (ticks: number) => (dTotal > 0 ? (ticks / dTotal) * cores * 100 : 0);
      const machine = pct(dTotal - (m.idle - start.m.idle));
      const share = { server: pct(server), postgres: pct(pg), loadgen: ((self.user + self.system) / 1e6 / secs) * 100, machine };
      return { ...share, other: Math.max(0, machine - share.server - share.postgres - share.loadgen) };
    },
  };
}

export function loadAverage(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}
