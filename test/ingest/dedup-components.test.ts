import { describe, expect, it } from 'vitest';
import { matchComponents } from '../../src/ingest/dedup/components.js';

// Deduplication groups listings a batch of components at a time (its rows read again for
// each batch, not held for every listing in a match): a component must hold every match
// reachable from any of its listings, and nothing else.
describe('matchComponents', () => {
  const m = (a: string, b: string) => ({ a, b });
  const sorted = (cs: { a: string; b: string }[][]) => cs.map((c) => c.map((x) => `${x.a}-${x.b}`).sort()).sort((x, y) => x[0].localeCompare(y[0]));

  it('puts matches joined through a shared listing together, in any order, and keeps others apart', () => {
    const matches = [m('a', 'b'), m('x', 'y'), m('c', 'd'), m('b', 'c'), m('y', 'z'), m('p', 'q')];
    const expected = [['a-b', 'b-c', 'c-d'], ['p-q'], ['x-y', 'y-z']];
    expect(sorted(matchComponents(matches))).toEqual(expected);
    expect(sorted(matchComponents([...matches].reverse()))).toEqual(expected);
  });

  it('joins two components that a later match bridges, however long the chains', () => {
    const chain = (p: string, n: number) => Array.from({ length: n }, (_, i) => m(`${p}${i}`, `${p}${i + 1}`));
    const matches = [...chain('l', 500), ...chain('r', 500).reverse(), m('r0', 'l500')];
    const cs = matchComponents(matches);
    expect(cs).toHaveLength(1);
    expect(cs[0]).toHaveLength(1001);
  });

  it('has nothing to group without matches', () => {
    expect(matchComponents([])).toEqual([]);
  });
});
