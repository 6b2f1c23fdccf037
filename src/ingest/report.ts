import { escapeControlCharacters } from '../lib/text.js';
import type { ImportReport } from './types.js';

// The records first (read is the sum of the next seven), then what the run did to listings.
const ORDER = ['read', 'created', 'updated', 'unchanged', 'reactivated', 'deleted', 'skipped', 'rejected', 'withdrawn', 'merged', 'separated', 'flagged'] as const;

// The report as a person reads it on a terminal.
export function formatReport(r: ImportReport, maxRejects = 20): string {
  const lines: string[] = [];
  const head = r.status === 'refused' ? 'REFUSED' : 'done';
  lines.push(`${r.source} (${r.format}, ${r.mode === 'full' ? 'full snapshot' : 'delta'}): ${head}, run ${r.run_id}`);
  const width = Math.max(...ORDER.map((k) => k.length));
  for (const k of ORDER) lines.push(`  ${k.padEnd(width)}  ${r.counts[k]}`);
  if (r.refusal) {
    lines.push(
      `  refused: this ${r.mode === 'full' ? 'snapshot' : 'delta'} would withdraw ${r.refusal.would_withdraw} of the source's ${r.refusal.live} live listings (more than half).`,
      `  Nothing was changed. If the withdrawal is real, run again with --allow-mass-withdrawal.`,
    );
  }
  if (r.rejects.length > 0) {
    const total = Math.max(r.counts.rejected, r.rejects.length);
    lines.push(`  rejected records${total > maxRejects ? ` (first ${Math.min(maxRejects, r.rejects.length)} of ${total})` : ''}:`);
    // Reasons and ids quote the feed: its control characters are shown, not sent to the terminal.
    for (const x of r.rejects.slice(0, maxRejects)) lines.push(escapeControlCharacters(`    ${x.position}${x.external_id ? ` ${x.external_id}` : ''}: ${x.reason}`));
  }
  return lines.join('\n');
}
