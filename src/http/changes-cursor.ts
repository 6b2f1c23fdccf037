import { createHash } from 'node:crypto';
import type { ChangePosition } from '../repositories/changes.js';
import { ApiError } from './errors.js';

// The changes feed's cursor: a position (src/repositories/changes.ts) as base64url text.
// Opaque to clients; versioned so that its form can change without breaking stored cursors.
// Form 2 (given out since 2026-11-28) ends in a check of the rest, so that a cursor cut short
// (a column too narrow in a client's database) or mistyped is refused instead of being read
// as another, well-formed position; form 1, the same without the check, is still read.
// Form 3 (since stop 35) also names the view it was given for: `a`, every listing (a key that
// sees flagged ones: Pro, Enterprise), or `u`, the unflagged ones (Free, Starter). A mirror
// built in one view is not the other's, and the feed after the cursor does not carry what a
// change of tier brought into view or took out of it: such a cursor is refused, and the
// client starts again (routes/changes.ts). Forms 1 and 2 name no view and are read by any key.
const FORM = /^([123])\.(\d{1,15})\.([A-Za-z0-9_-]{0,64})\.(\d{0,15})(?:\.([au]))?(?:\.([0-9a-f]{8}))?$/;

export type CursorView = 'a' | 'u';

const check = (position: string) => createHash('sha256').update(position).digest('hex').slice(0, 8);
// The text between the form and the check (the check covers it).
const positionText = (seq: string | number, id: string, floor: string, view?: CursorView) => `${seq}.${id}.${floor}${view ? `.${view}` : ''}`;

export function encodeCursor(p: ChangePosition, view?: CursorView): string {
  const floor = p.floor !== undefined && p.seq <= p.floor && p.id !== undefined ? String(p.floor) : '';
  const position = positionText(p.seq, p.id ?? '', floor, view);
  return Buffer.from(`${view ? 3 : 2}.${position}.${check(position)}`, 'utf8').toString('base64url');
}

export function invalidCursor(detail: string): ApiError {
  return new ApiError({ status: 400, code: 'invalid_cursor', detail, errors: [{ param: 'since', message: detail.replace(/^since /, '') }] });
}

export function decodeCursor(text: string): ChangePosition & { view?: CursorView } {
  const bad = () => invalidCursor('since is not a cursor of this feed: pass next_cursor (or X-Changes-Cursor) exactly as it was given');
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) throw bad();
  const bytes = Buffer.from(text, 'base64url');
  // One spelling per cursor: the last character of a base64url text can carry bits that
  // decoding drops (`…Zh` and `…Zo` read as `…Zg`); such a text is a mistyped cursor.
  if (bytes.toString('base64url') !== text) throw bad();
  const m = FORM.exec(bytes.toString('utf8'));
  if (!m) throw bad();
  const [, form, seqText, id, floor, view, sum] = m;
  if ((form === '3') !== (view !== undefined)) throw bad();
  if (form === '1' ? sum !== undefined : sum !== check(positionText(seqText, id, floor, view as CursorView | undefined))) throw bad();
  const seq = Number(seqText);
  if (!Number.isSafeInteger(seq)) throw bad();
  return { seq, ...(id !== '' ? { id } : {}), ...(floor !== '' ? { floor: Number(floor) } : {}), ...(view ? { view: view as CursorView } : {}) };
}
