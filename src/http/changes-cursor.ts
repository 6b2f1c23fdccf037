import type { ChangePosition } from '../repositories/changes.js';
import { ApiError } from './errors.js';

// The changes feed's cursor: a position (src/repositories/changes.ts) as base64url text.
// Opaque to clients; versioned ("1.") so that its form can change without breaking stored
// cursors.
const FORM = /^1\.(\d{1,15})\.([A-Za-z0-9_-]{0,64})\.(\d{0,15})$/;

export function encodeCursor(p: ChangePosition): string {
  const floor = p.floor !== undefined && p.seq <= p.floor && p.id !== undefined ? String(p.floor) : '';
  return Buffer.from(`1.${p.seq}.${p.id ?? ''}.${floor}`, 'utf8').toString('base64url');
}

export function invalidCursor(detail: string): ApiError {
  return new ApiError({ status: 400, code: 'invalid_cursor', detail, errors: [{ param: 'since', message: detail.replace(/^since /, '') }] });
}

export function decodeCursor(text: string): ChangePosition {
  const bad = () => invalidCursor('since is not a cursor of this feed: pass next_cursor (or X-Changes-Cursor) exactly as it was given');
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(text)) throw bad();
  const m = FORM.exec(Buffer.from(text, 'base64url').toString('utf8'));
  if (!m) throw bad();
  const seq = Number(m[1]);
  if (!Number.isSafeInteger(seq)) throw bad();
  return { seq, ...(m[2] !== '' ? { id: m[2] } : {}), ...(m[3] !== '' ? { floor: Number(m[3]) } : {}) };
}
