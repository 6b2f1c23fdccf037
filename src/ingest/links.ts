// Web addresses in feeds: a listing's link and its photos.
import { hasControlCharacter, INVISIBLE_IN_NAME } from '../lib/text.js';

// A web address as stored: as given, unless the URL parser must write it, percent-encoded:
// characters a URL may not hold as they are (spaces, quotes, angle brackets...: `a.jpg"
// onerror="x`), so that no consumer reads them as markup; a character that shows nothing (a
// direction override made `…/\u202Egnp.exe` read as `…/exe.png`); or a user name and password
// (`https://trusted.example@evil.example/` names another site than it seems, and credentials
// are no one else's business), which are left out (an outside probe of stop 47 found both
// served as given). null when it is not an http(s) address.
export function webAddress(v: unknown): string | null {
  if (!isHttpUrl(v)) return null;
  const s = v.trim();
  const u = new URL(s);
  if (u.username === '' && u.password === '' && !/[\s"'<>`{}|\\^]/.test(s) && !INVISIBLE_IN_NAME.test(s)) return s;
  u.username = '';
  u.password = '';
  return u.href;
}

export function isHttpUrl(s: unknown): s is string {
  if (typeof s !== 'string' || s.length > 2000) return false;
  // The URL parser would percent-encode a control character, but the text is stored as given:
  // a NUL there failed the whole import in PostgreSQL (22021, 22P05 in the images' jsonb).
  if (hasControlCharacter(s.trim())) return false;
  try {
    const u = new URL(s.trim());
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}
