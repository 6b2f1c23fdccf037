// The one form of an email address the service keys accounts by: the throttle's counters,
// the stored address and every lookup all go through this function, so that two spellings
// of one address can never reach one account under two throttle buckets (which a mix of
// JavaScript and SQL lower-casing allowed: JavaScript lower-cases U+0130 İ to two characters,
// PostgreSQL's lower() to one).
//
// - Unicode NFKC: compatibility forms become their plain letters (fullwidth ａ is a, the
//   Kelvin sign K is K, the ligature ﬀ is ff), and composed and decomposed accents agree;
// - JavaScript's toLowerCase (the Unicode default case mapping, locale-independent);
// - NFKC again, since lower-casing can leave a string that is not normalized;
// - white space trimmed last (NFKC can turn a spacing mark into a space and a combining one).
// Applying it twice gives the same as once (a test checks every code point and random strings).
//
// Lower-casing is a mapping, not full case folding: ß and ss stay different addresses (as
// mail systems treat them), ẞ becomes ß, Σ becomes σ (ς at the end of a word), İ becomes
// i + U+0307 (not plain i). The database compares these stored forms by equality, never with
// its own lower(), whose Unicode tables differ. The addresses the service accepts for new
// accounts are ASCII after this step (zod's email rule), so such an address can only ever
// match an account spelled the same way.
export function normalizeEmail(email: string): string {
  return email.normalize('NFKC').toLowerCase().normalize('NFKC').trim();
}

// What zod's email rule leaves out of RFC 5321 and RFC 1035: at most 64 characters before the
// `@`, at most 63 in each part of the domain (an outside probe of stop 52 made accounts for
// addresses no mail server takes). The problem, in words for a person, or null.
export function emailLengthProblem(email: string): string | null {
  const at = email.lastIndexOf('@');
  if (at > 64) return 'the part before the @ has at most 64 characters';
  if (email.slice(at + 1).split('.').some((label) => label.length > 63)) return 'each part of the domain (between dots) has at most 63 characters';
  return null;
}
