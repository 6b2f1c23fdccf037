// npx tsx test/ingest/eval/bound.ts [--sets second,first,hand]
//
// What no rule can reach on a set, from the pairs that diagnose.ts wrote
// (test-output/dedup-eval/diagnose-<set>.json; run diagnose.ts for each set first). Reads
// the truth and the importer's output only, never how a set was generated.
//
// 1. A recall bound: the share of multi-listed properties whose listings stay connected
//    through true pairs that break none of the contradictions issue 13 lists (communes or
//    named localities that differ without positions on both sides, rooms two or more apart,
//    positions or a named place too far apart) and whose prices are within the "close"
//    tolerance (RULE.priceClose). A rule that obeys those contradictions and keeps prices
//    further apart unmerged cannot do better, however it weighs the rest.
// 2. The "relisted or twin" class: rents located together, rooms not contradicting, areas
//    within the "close" class, prices beyond "close" but within "relisted" (3.5-6 %), with no
//    other pair of that description for either side. Its truth per set says whether such a
//    pair is the same flat at a new price or a neighbour: the features are the same, so a
//    rule that merges them is right on one kind of market and wrong on the other.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { areaClass, priceClass, RULE } from '../../../src/ingest/dedup/tolerances.js';

interface Node { id: string; prop: string; type: string; rooms: number | null; area: number | null; price: number }
interface Pair {
  same: boolean; a: string; b: string; type: string; communeA: string; communeB: string; locA: string | null; locB: string | null;
  locatedA: boolean; locatedB: boolean; m: number | null; roomsA: number | null; roomsB: number | null; areaA: number | null; areaB: number | null;
  priceA: number; priceB: number; contradiction: boolean; reason: string;
}

const pct = (x: number) => `${Math.round(x * 1000) / 10} %`;
const { values: args } = parseArgs({ options: { sets: { type: 'string', default: 'second,first,hand' } } });

// The contradictions of issue 13 that a pair breaks, or null.
function contradiction(p: Pair): string | null {
  const strong = p.locatedA && p.locatedB && p.m !== null;
  if (p.roomsA !== null && p.roomsB !== null && Math.abs(p.roomsA - p.roomsB) > RULE.roomsSoftDiff) return 'room counts differ';
  if (strong && p.m! > RULE.nearKm * 1000) return 'positions too far apart';
  if (p.contradiction && p.reason === 'a named place is far from the other position') return p.reason;
  if (!strong && p.communeA !== p.communeB) return 'communes differ (not both located)';
  if (!strong && p.locA !== null && p.locB !== null && p.locA !== p.locB) return 'localities differ (not both located)';
  return null;
}

function report(set: string): void {
  const file = path.resolve(`test-output/dedup-eval/diagnose-${set}.json`);
  const { nodes, pairs } = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; pairs: Pair[] };
  const parent = new Map(nodes.map((n) => [n.id, n.id]));
  const find = (x: string): string => {
    while (parent.get(x) !== x) x = parent.get(x)!;
    return x;
  };
  const blocked = new Map<string, number>();
  for (const p of pairs) {
    if (!p.same) continue;
    const why = contradiction(p) ?? (priceClass(p.type, p.priceA, p.priceB) === 'same' || priceClass(p.type, p.priceA, p.priceB) === 'close' ? null : `prices more than ${pct(RULE.priceClose)} apart`);
    if (why) blocked.set(why, (blocked.get(why) ?? 0) + 1);
    else parent.set(find(p.a), find(p.b));
  }
  const byProp = new Map<string, string[]>();
  for (const n of nodes) byProp.set(n.prop, [...(byProp.get(n.prop) ?? []), n.id]);
  const multi = [...byProp.values()].filter((l) => l.length > 1);
  const connected = multi.filter((l) => new Set(l.map(find)).size === 1).length;
  console.log(`## ${set}`);
  console.log(`recall bound (issue 13's contradictions, prices within ${pct(RULE.priceClose)}): ${(connected / multi.length).toFixed(3)} (${connected}/${multi.length})`);
  for (const [why, n] of [...blocked].sort((x, y) => y[1] - x[1])) console.log(`  true pairs cut: ${String(n).padStart(4)}  ${why}`);

  const RENT = new Set(['RENT', 'SUBLET', 'FLATSHARE']);
  const relisted = pairs.filter((p) => {
    if (!RENT.has(p.type) || !(p.locatedA && p.locatedB && p.m !== null) || contradiction(p)) return false;
    const area = areaClass(p.areaA, p.areaB);
    return (area === 'exact' || area === 'same' || area === 'close') && priceClass(p.type, p.priceA, p.priceB) === 'relisted';
  });
  const count = new Map<string, number>();
  for (const p of relisted) for (const x of [p.a, p.b]) count.set(x, (count.get(x) ?? 0) + 1);
  const alone = relisted.filter((p) => count.get(p.a) === 1 && count.get(p.b) === 1);
  const t = alone.filter((p) => p.same).length;
  console.log(`"relisted or twin" pairs alone in their class: ${alone.length}, of which the same flat ${t}, two flats ${alone.length - t}\n`);
}

for (const set of args.sets!.split(',')) report(set.trim());
