// Settings of the web pages. The defaults are the production values; tests tune the
// throttling limits. The bcrypt cost may be raised on faster hardware (12 is the floor we
// ship; 4, bcrypt's own minimum, is all the validation below enforces).
export interface WebOptions {
  // bcrypt work factor for new password hashes (12 or more in production).
  bcryptCost: number;
  // Sign-in and sign-up attempts per client IP per window (every attempt counts).
  attemptsPerIp: number;
  // Failed sign-ins per email address and client IP per window (successful ones do not count):
  // what holds back a guesser at one address without locking the owner out from theirs.
  failuresPerEmailPerIp: number;
  // Failed sign-ins per email address per window, from all addresses together: what holds
  // back guessing spread over many addresses.
  failuresPerEmail: number;
  throttleWindowMs: number;
  // Free keys created on the page per client IP per UTC day, for all accounts together.
  freeKeysPerIpPerDay: number;
  // How long a session lasts without being used.
  sessionTtlMs: number;
  // How often expired sessions are deleted (seconds); false: never (tests).
  sessionPruneIntervalS: number | false;
}

export const DEFAULT_WEB_OPTIONS: WebOptions = {
  bcryptCost: 12,
  attemptsPerIp: 30,
  failuresPerEmailPerIp: 5,
  failuresPerEmail: 100,
  throttleWindowMs: 15 * 60_000,
  freeKeysPerIpPerDay: 20,
  sessionTtlMs: 8 * 3_600_000,
  sessionPruneIntervalS: 15 * 60,
};

export function webOptions(overrides: Partial<WebOptions> = {}): WebOptions {
  const o = { ...DEFAULT_WEB_OPTIONS, ...overrides };
  if (!Number.isInteger(o.bcryptCost) || o.bcryptCost < 4 || o.bcryptCost > 31) throw new Error('bcryptCost must be an integer from 4 to 31');
  return o;
}
