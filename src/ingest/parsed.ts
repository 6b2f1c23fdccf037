// A value that may be given but be wrong: `null` when absent, an Error-like reason when
// present but unreadable (the record is then rejected, never half-filled). Apart from
// values.ts so that space-runs.ts, which values.ts imports, can name it without a cycle.
export type Parsed<T> = { ok: true; value: T | null } | { ok: false; reason: string };
