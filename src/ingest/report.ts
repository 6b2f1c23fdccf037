import type { ImportReport } from './types.js';

const ORDER = ['read', 'created', 'updated', 'unchanged', 'reactivated', 'withdrawn', 'merged', 'flagged', 'rejected'] as const;

// The report as a person reads it on a terminal.
export function formatReport(r: ImportReport, maxRejects = 20): string {
  const lines: string[] = [];
  const head = r.status === 'refused' ? 'REFUSED' : 'done';
  lines.push(`${r.source} (${r.format}, ${r.mode === 'full' ? 'full snapshot' : 'delta'}): ${head}, run ${r.run_id}`);
  const width = Math.max(...ORDER.map((k) => k.length));
  for (const k of ORDER) lines.push(`  ${k.padEnd(width)}  ${r.counts[k]}`);
  if (r.refusal) {
    lines.push(
      `  refused: this snapshot would withdraw ${r.refusal.would_withdraw} of the source's ${r.refusal.live} live listings (more than half).`,
      `  Nothing was changed. If the withdrawal is real, run again with --allow-mass-withdrawal.`,
    );
  }
  if (r.rejects.length > 0) {
    lines.push(`  rejected records${r.rejects.length > maxRejects ? ` (first ${maxRejects} of ${r.rejects.length})` : ''}:`);
    for (const x of r.rejects.slice(0, maxRejects)) lines.push(`    ${x.position}${x.external_id ? ` ${x.external_id}` : ''}: ${x.reason}`);
  }
  return lines.join('\n');
}
