import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

// Summary of the server's V8 CPU profile (`--profile`: node --cpu-prof): self time grouped by
// where the code lives (a package, a file of ours, node's internals, GC), heaviest first.

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  hitCount?: number;
}

function where(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : `(native) ${fn || 'anonymous'}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return url;
  const ours = /\/(src|bench|migrations)\/(.+)$/.exec(url);
  return ours ? `${ours[1]}/${ours[2]}` : url;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number; // µs, CLOCK_MONOTONIC
  samples?: number[]; // node id of each sample
  timeDeltas?: number[]; // µs since the previous sample
}

// Samples per node id, only those taken within one of `windows` ([start, end] in µs of
// CLOCK_MONOTONIC); every sample when no windows are given.
function hitsWithin(p: CpuProfile, windows: [number, number][] | undefined): Map<number, number> {
  const hits = new Map<number, number>();
  if (!windows || !p.samples || !p.timeDeltas) {
    for (const n of p.nodes) hits.set(n.id, n.hitCount ?? 0);
    return hits;
  }
  let t = p.startTime;
  for (let k = 0; k < p.samples.length; k++) {
    t += p.timeDeltas[k];
    if (windows.some(([a, b]) => t >= a && t <= b)) hits.set(p.samples[k], (hits.get(p.samples[k]) ?? 0) + 1);
  }
  return hits;
}

export function summariseProfile(dir: string, windows?: [number, number][], top = 25): string[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) return ['(no profile was written)'];
  // One file per thread (the main thread, tsx's module loader thread…): the busiest is the server's.
  const busy = (nodes: ProfileNode[]) => nodes.reduce((s, n) => s + (n.callFrame.functionName === '(idle)' ? 0 : (n.hitCount ?? 0)), 0);
  const profiles = files.map((f) => ({ file: path.join(dir, f), profile: JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as CpuProfile }));
  const { file, profile } = profiles.sort((a, b) => busy(b.profile.nodes) - busy(a.profile.nodes))[0];
  const hitsOf = hitsWithin(profile, windows);
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const n of profile.nodes) {
    const hits = hitsOf.get(n.id) ?? 0;
    if (hits === 0 || n.callFrame.functionName === '(idle)') continue;
    total += hits;
    const place = where(n.callFrame.url, n.callFrame.functionName);
    byPlace.set(place, (byPlace.get(place) ?? 0) + hits);
    const fn = `${n.callFrame.functionName || 'anonymous'} (${place})`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + hits);
  }
  const pct = (x: number) => `${((100 * x) / total).toFixed(1)} %`;
  const list = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) => `| ${k} | ${pct(v)} |`);
  return [
    `Profile \`${path.relative(process.cwd(), file)}\`: self time of the busy samples (idle left out)${windows ? ' taken during the measured windows (not the start-up or the warm-ups)' : ''}.`,
    '',
    '| where | self |',
    '|---|---:|',
    ...list(byPlace),
    '',
    '| function | self |',
    '|---|---:|',
    ...list(byFunction),
  ];
}
