// A whole sort order as the SQL gives it, written out: by key (descending: from the top), ties
// by row, rows without the key (NaN) last. The read model's orders are checked against it.
export function sqlOrder(keys: number[], desc: boolean): number[] {
  const rows = keys.map((_, i) => i);
  return rows.sort((a, b) => {
    const na = Number.isNaN(keys[a]);
    const nb = Number.isNaN(keys[b]);
    if (na || nb) return na === nb ? a - b : na ? 1 : -1;
    return (desc ? keys[b] - keys[a] : keys[a] - keys[b]) || a - b;
  });
}
