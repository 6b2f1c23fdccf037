import { perKindGate } from '../lib/throttle.js';

// PostgreSQL errors the HTTP and web error handlers translate, recognised by SQLSTATE code,
// never by message text.

// SQLSTATEs that say a value of the request is unusable, decided by code, never by message:
// class 22 (data exception: 22021 a byte sequence invalid in UTF-8, NUL included; 22P02 an
// invalid text representation; 22001 a string too long; 22003 a number out of range; 22007
// and 22008 a bad date or time, ...) and 54000 (a value over a limit, e.g. an index row).
export function isInvalidInputError(err: unknown): err is { code: string } {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(22[0-9A-Z]{3}|54000)$/.test(code);
}

// Why the database could not serve a request, for the 503 both error handlers answer and the
// line they log; null when the error is not the database being unavailable.
// - unreachable: no connection could be opened (refused, reset, unknown host, SQLSTATE 08);
// - connection_lost: an open connection was cut (server shut down or restarted: 57P01-57P03,
//   or the driver's "Connection terminated");
// - pool_timeout: no connection came free (or could be opened) within knex's
//   acquireConnectionTimeout;
// - no_answer: a statement got no answer at all within its statement timeout and a margin
//   (a frozen server or a network that drops packets: knex.ts, boundWaits);
// - statement_timeout: the query ran past statement_timeout (57014);
// - resources: the server is out of connections, memory or disk (class 53).
export type UnavailableCause = 'unreachable' | 'connection_lost' | 'pool_timeout' | 'no_answer' | 'statement_timeout' | 'resources';

export function unavailableCause(err: unknown): UnavailableCause | null {
  const e = err as { code?: unknown; message?: unknown; name?: unknown } | null;
  if (!e) return null;
  // knex's two timeouts have one class: waiting for a connection (knex adds the statement's
  // SQL to it too) and waiting for an answer (knex.ts's bound on every statement).
  if (e.name === 'KnexTimeoutError') return /Timeout acquiring a connection/i.test(String(e.message)) ? 'pool_timeout' : 'no_answer';
  const code = typeof e.code === 'string' ? e.code : '';
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code) || /^08/.test(code)) return 'unreachable';
  if (/^57P0[123]$/.test(code)) return 'connection_lost';
  if (code === '57014') return 'statement_timeout';
  if (/^53/.test(code)) return 'resources';
  const message = typeof e.message === 'string' ? e.message : '';
  if (/Connection terminated|Client has encountered a connection error/i.test(message)) return 'connection_lost';
  if (/timeout exceeded when trying to connect/i.test(message)) return 'unreachable';
  return null;
}

// The error of a 503 as its log line carries it: whole (with its stack) once per cause every
// 5 s, else its type, message and code only. An outage answers every request with a 503, and
// a stack per request is megabytes of the same lines (a 10 s outage at 550 requests a second
// wrote 9.7 MB).
export function unavailableLogger(): (err: unknown, cause: UnavailableCause) => unknown {
  const gate = perKindGate(5000);
  return (err, cause) => {
    if (gate(cause) !== null) return err;
    const e = err as { name?: unknown; message?: unknown; code?: unknown } | null;
    return { type: e?.name, message: e?.message, ...(e?.code !== undefined ? { code: e.code } : {}) };
  };
}
