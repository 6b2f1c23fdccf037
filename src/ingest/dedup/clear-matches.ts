import { matchComponents } from './components.js';
import { RULE } from './tolerances.js';

// Which matches of the pair rule (rule.ts classifyPair) are clear enough to merge: one
// listing per source per property. A listing is known here by its source only.

type Sourced = { source: string };

export interface MatchPair {
  a: string;
  b: string;
  level: 'merge' | 'possible';
  discrepancy: number;
}

export interface ScoredPair {
  a: string;
  b: string;
  discrepancy: number;
  kind: 'merge' | 'possible';
  // For a possible duplicate: the side that may carry possible_duplicate (see
  // decideMatches), or null when neither may.
  flag?: string | null;
}

// A match is clear when each side is the other's best match among the listings of the
// other's source, by RULE.clearMargin. Clear matches merge; the others are possible.
//
// One listing per source per property: once a match is clear, each of its sides has found its
// listing in the other's source, so the other candidates it had there are out of the running
// for it, and it for them. Clearness is therefore decided in rounds: a round takes every match
// that is clear among the matches still running, then drops the matches those decisions
// exclude, and the next round looks again (a listing whose competitor was just taken by a
// closer partner may be clear now). A round depends only on the set of matches, never on their
// order, so the outcome does not depend on the order of the imports.
export function decideMatches(nodes: Map<string, Sourced>, matches: MatchPair[]): ScoredPair[] {
  const side = (x: string, other: string) => `${x}\u0000${nodes.get(other)!.source}`;
  // For each listing and each other source: the partner it was clearly matched with there.
  const partner = new Map<string, string>();
  const running = (m: MatchPair) => {
    const pa = partner.get(side(m.a, m.b));
    const pb = partner.get(side(m.b, m.a));
    return (pa === undefined || pa === m.b) && (pb === undefined || pb === m.a);
  };
  // For each listing and each other source: the discrepancies of its matches still running.
  let bySide = new Map<string, number[]>();
  const clearFor = (x: string, other: string, d: number) => {
    let self = false;
    for (const e of bySide.get(side(x, other))!) {
      // Skip this pair's own entry once; an exact tie is a second entry and not clear.
      if (!self && e === d) self = true;
      else if (e < d + RULE.clearMargin) return false;
    }
    return true;
  };
  const clear = new Set<MatchPair>();
  for (;;) {
    bySide = new Map();
    const live = matches.filter(running);
    for (const m of live) {
      for (const [x, other] of [[m.a, m.b], [m.b, m.a]]) {
        const k = side(x, other);
        const l = bySide.get(k);
        if (l) l.push(m.discrepancy);
        else bySide.set(k, [m.discrepancy]);
      }
    }
    let now = live.filter((m) => m.level === 'merge' && !clear.has(m) && clearFor(m.a, m.b, m.discrepancy) && clearFor(m.b, m.a, m.discrepancy));
    if (now.length === 0) now = clearAssignments(nodes, live.filter((m) => m.level === 'merge' && !clear.has(m)));
    if (now.length === 0) break;
    for (const m of now) {
      clear.add(m);
      partner.set(side(m.a, m.b), m.b);
      partner.set(side(m.b, m.a), m.a);
    }
  }
  return matches.map((m) => {
    const { a, b, discrepancy: d, level } = m;
    if (clear.has(m)) return { a, b, discrepancy: d, kind: 'merge' };
    if (level !== 'merge' || !running(m)) return { a, b, discrepancy: d, kind: 'possible', flag: null };
    // Not clear: one side has two equally good candidates in the other's source, which lists
    // a property once. That side is a duplicate of at most one of them, and they stay
    // visible, so flagging it hides no property that it could be. Flagging one of the
    // candidates could hide the other property: never. Unclear on both sides: no flag.
    const aClear = clearFor(a, b, d);
    const bClear = clearFor(b, a, d);
    return { a, b, discrepancy: d, kind: 'possible', flag: aClear === bClear ? null : aClear ? b : a };
  });
}

// Sibling flats listed by two agencies each: X lists flats 1 and 2, Y lists them too, and
// each of X's listings is about as close to both of Y's, so no single match is clear. Taken
// together they may be: X1-Y1 with X2-Y2 can be much closer in all than X1-Y2 with X2-Y1.
// For the matches not clear between two sources, a bundle (a connected set of them) of n
// listings on each side, 2 <= n <= MAX_BUNDLE, in which every listing matches every listing
// of the other side (siblings alike enough for each to be any of the others), is paired
// one to one when the pairing of least total discrepancy beats every other pairing by
// RULE.clearMargin. Anything less complete is left as it is: a bundle of one listing and
// its two candidates is the single match's own test, which it failed, and a pair missing
// from a bundle (a contradiction, a relisted rent) is evidence the pairing cannot weigh.
const MAX_BUNDLE = 3;

function clearAssignments(nodes: Map<string, Sourced>, open: MatchPair[]): MatchPair[] {
  const bySources = new Map<string, MatchPair[]>();
  for (const m of open) {
    const k = [nodes.get(m.a)!.source, nodes.get(m.b)!.source].sort().join('\u0000');
    const l = bySources.get(k);
    if (l) l.push(m);
    else bySources.set(k, [m]);
  }
  const taken: MatchPair[] = [];
  for (const [k, ms] of bySources) {
    const left = k.split('\u0000')[0];
    // A match as [the listing of the left source, the other].
    const ends = (m: MatchPair) => (nodes.get(m.a)!.source === left ? [m.a, m.b] : [m.b, m.a]);
    for (const bundle of matchComponents(ms)) {
      const xs = [...new Set(bundle.map((m) => ends(m)[0]))].sort();
      const ys = [...new Set(bundle.map((m) => ends(m)[1]))].sort();
      if (xs.length !== ys.length || xs.length < 2 || xs.length > MAX_BUNDLE || bundle.length !== xs.length * ys.length) continue;
      const edge = new Map(bundle.map((m) => [ends(m).join('|'), m]));
      // Every one-to-one pairing, with its total discrepancy.
      const pairings: { total: number; ms: MatchPair[] }[] = [];
      const walk = (i: number, used: Set<string>, chosen: MatchPair[], total: number): void => {
        if (i === xs.length) {
          pairings.push({ total, ms: [...chosen] });
          return;
        }
        for (const y of ys) {
          const m = edge.get(`${xs[i]}|${y}`);
          if (!m || used.has(y)) continue;
          used.add(y);
          chosen.push(m);
          walk(i + 1, used, chosen, total + m.discrepancy);
          chosen.pop();
          used.delete(y);
        }
      };
      walk(0, new Set(), [], 0);
      const best = pairings.sort((p, q) => p.total - q.total);
      if (best[1].total >= best[0].total + RULE.clearMargin) taken.push(...best[0].ms);
    }
  }
  return taken;
}
