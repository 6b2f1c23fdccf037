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

export function createLogger(config: Pick<Config, 'LOG_LEVEL' | 'LOG_PRETTY'>, stream?: pino.DestinationStream): Logger {
  const pretty = config.LOG_PRETTY ?? Boolean(process.stdout.isTTY);
  const options: pino.LoggerOptions = {
    level: config.LOG_LEVEL,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
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
