import { createHash } from 'node:crypto';
import type { ChangePosition } from '../repositories/changes.js';
import { ApiError } from './errors.js';

// The changes feed's cursor: a position (src/repositories/changes.ts) as base64url text.
// Opaque to clients; versioned so that its form can change without breaking stored cursors.
// Form 2 (given out since 2026-11-28) ends in a check of the rest, so that a cursor cut short
// (a column too narrow in a client's database) or mistyped is refused instead of being read
// as another, well-formed position; form 1, the same without the check, is still read.
const FORM = /^([12])\.(\d{1,15})\.([A-Za-z0-9_-]{0,64})\.(\d{0,15})(?:\.([0-9a-f]{8}))?$/;

const check = (position: string) => createHash('sha256').update(position).digest('hex').slice(0, 8);

export function encodeCursor(p: ChangePosition): string {
  const floor = p.floor !== undefined && p.seq <= p.floor && p.id !== undefined ? String(p.floor) : '';
  const position = `${p.seq}.${p.id ?? ''}.${floor}`;
  return Buffer.from(`2.${position}.${check(position)}`, 'utf8').toString('base64url');
}

export function invalidCursor(detail: string): ApiError {
  return new ApiError({ status: 400, code: 'invalid_cursor', detail, errors: [{ param: 'since', message: detail.replace(/^since /, '') }] });
}

export function decodeCursor(text: string): ChangePosition {
  const bad = () => invalidCursor('since is not a cursor of this feed: pass next_cursor (or X-Changes-Cursor) exactly as it was given');
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) throw bad();
  const bytes = Buffer.from(text, 'base64url');
  // One spelling per cursor: the last character of a base64url text can carry bits that
  // decoding drops (`…Zh` and `…Zo` read as `…Zg`); such a text is a mistyped cursor.
  if (bytes.toString('base64url') !== text) throw bad();
  const m = FORM.exec(bytes.toString('utf8'));
  if (!m) throw bad();
  const [, form, seqText, id, floor, sum] = m;
  if (form === '2' ? sum !== check(`${seqText}.${id}.${floor}`) : sum !== undefined) throw bad();
  const seq = Number(seqText);
  if (!Number.isSafeInteger(seq)) throw bad();
  return { seq, ...(id !== '' ? { id } : {}), ...(floor !== '' ? { floor: Number(floor) } : {}) };
}
