// The matches split by connected component (listings joined through matches): the groups
// of a component depend on its matches alone (decideMatches compares a listing's own
// matches, resolveGroups joins and ranks along pairs), so components can be grouped a batch
// at a time, each with only its own rows in memory.
export function matchComponents<M extends { a: string; b: string }>(matches: readonly M[]): M[][] {
  const parent = new Map<string, string>();
  const find = (x: string): string => {
    let root = x;
    for (let up = parent.get(root)!; up !== root; up = parent.get(root)!) root = up;
    // Path compression: a long chain is walked once.
    for (let c = x; c !== root; ) {
      const up = parent.get(c)!;
      parent.set(c, root);
      c = up;
    }
    return root;
  };
  for (const m of matches) {
    if (!parent.has(m.a)) parent.set(m.a, m.a);
    if (!parent.has(m.b)) parent.set(m.b, m.b);
    const ra = find(m.a);
    const rb = find(m.b);
    if (ra !== rb) parent.set(ra < rb ? rb : ra, ra < rb ? ra : rb);
  }
  const components = new Map<string, M[]>();
  for (const m of matches) {
    const root = find(m.a);
    const list = components.get(root);
    if (list) list.push(m);
    else components.set(root, [m]);
  }
  return [...components.values()];
}
