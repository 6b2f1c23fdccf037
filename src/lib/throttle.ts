// Lets one event of each kind through every `ms`, for log lines that an outage would repeat
// at every request or every try. Returns how many events of the kind were held back since the
// last one let through, or null when this one is held back.
export function perKindGate(ms: number, maxKinds = 100): (kind: string) => number | null {
  const seen = new Map<string, { at: number; held: number }>();
  return (kind) => {
    const now = Date.now();
    const last = seen.get(kind);
    if (last && now - last.at < ms) {
      last.held++;
      return null;
    }
    if (!last && seen.size >= maxKinds) seen.clear();
    seen.set(kind, { at: now, held: 0 });
    return last?.held ?? 0;
  };
}
