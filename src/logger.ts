import pino, { type Logger } from 'pino';
import type { Config } from './config.js';

// Secrets never reach a log: the Authorization header and cookies are redacted wherever
// they appear, and the request serializer below never includes the query's key.
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'authorization',
  '*.authorization',
];

// What a database error carries of the request's values: knex adds the statement's `bindings`
// (and `parameters`) to the errors it throws, and PostgreSQL's `detail` quotes the row a
// constraint refused. A sign-up's password hash, an email, a session id or a key's digest were
// written to the log with the first 503 of a stalled database (an outside probe of stop 48).
// The statement's text (its placeholders) stays: it says what was being done.
const VALUES_OF_A_STATEMENT = new Set(['bindings', 'parameters', 'detail']);

function withoutValues(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > 4) return value;
  if (Array.isArray(value)) return value.map((v) => withoutValues(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = VALUES_OF_A_STATEMENT.has(k) ? '[redacted]' : withoutValues(v, depth + 1);
  return out;
}

// pino's error serializer (type, message, stack, the error's own fields, its cause), without
// the values above.
export const errorSerializer = (err: unknown): unknown => withoutValues(err instanceof Error ? pino.stdSerializers.err(err) : err);

export function createLogger(config: Pick<Config, 'LOG_LEVEL' | 'LOG_PRETTY'>, stream?: pino.DestinationStream): Logger {
  const pretty = config.LOG_PRETTY ?? Boolean(process.stdout.isTTY);
  const options: pino.LoggerOptions = {
    level: config.LOG_LEVEL,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: { err: errorSerializer, error: errorSerializer },
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (stream) return pino(options, stream);
  if (pretty && canPretty()) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } } });
  }
  return pino(options);
}

function canPretty(): boolean {
  try {
    import.meta.resolve('pino-pretty');
    return true;
  } catch {
    return false; // production install without dev dependencies: plain JSON lines
  }
}
