import proxyAddr from 'proxy-addr';
import { z } from 'zod';

// The only reader of process.env. Parsed once, at start-up, failing fast and readably.
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

// TRUST_PROXY: false (default), true, a hop count, or a comma-separated list of addresses
// or subnets (Express "trust proxy" semantics: X-Forwarded-For is honoured only from these).
const trustProxy = z
  .string()
  .default('false')
  .transform((v, ctx): boolean | number | string[] => {
    const s = v.trim();
    if (s === '' || s === 'false' || s === '0') return false;
    if (s === 'true') return true;
    if (/^\d+$/.test(s)) return Number(s);
    const list = s.split(',').map((p) => p.trim()).filter(Boolean);
    // Checked here, as Express will read it (proxy-addr), so that a bad address stops the
    // process before it connects to anything, naming the setting (an outside probe of stop 58:
    // `invalid IP address: maybe` came after the read model had loaded).
    try {
      proxyAddr.compile(list);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: `${(e as Error).message}; expected false, true, a hop count, or addresses, subnets or loopback, linklocal, uniquelocal, separated by commas` });
      return z.NEVER;
    }
    return list;
  });

const optionalUrl = z
  .string()
  .optional()
  .transform((v) => (v && v.trim() !== '' ? v.trim() : undefined));

// A connection URL of one of `schemes` ("postgres:"), or unset. A value without one (a typo, a
// host name alone) is refused at start: pg reads "garbage" as a database on a host "base" and
// the start would wait for it for ever, ioredis as a host (an outside probe).
const serviceUrl = (name: string, schemes: string[]) =>
  optionalUrl.refine(
    (v) => {
      if (v === undefined) return true;
      try {
        return schemes.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { message: `${name} must be a URL beginning with ${schemes.map((s) => `${s}//`).join(' or ')}` },
  );

// A whole number written in digits: z.coerce.number() read `1e3` as 1000, ` 3502` as 3502 and
// an empty value as 0 (an outside probe of stop 47: `PORT=` listened on a random port and
// `MAX_CONNECTIONS_PER_CLIENT=` lifted the bound).
const integer = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .regex(/^-?\d{1,16}$/, { message: 'must be a whole number written in digits (16 at most)' })
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

export const DEFAULT_PAGES_RATE_LIMIT_PER_MINUTE = 120;

// An http(s) URL (whose host the URL parser requires) with no user name, password, query or
// fragment; `?` and `#` are looked for in the text, since an empty query or fragment leaves
// none in the parsed URL.
function publicBase(v: string): boolean {
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !/[?#]/.test(v) && u.username === '' && u.password === '';
  } catch {
    return true; // not a URL at all: the message of z.url() says so
  }
}

export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: integer(0, 65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: serviceUrl('DATABASE_URL', ['postgres:', 'postgresql:']),
  // A read replica of DATABASE_URL: searches, single listings, market prices, stats and the
  // read model's loads go there once it has replayed the data version asked for.
  DATABASE_READ_URL: serviceUrl('DATABASE_READ_URL', ['postgres:', 'postgresql:']),
  // Server processes (node:cluster). Default: one per core in production, else 1.
  WEB_CONCURRENCY: integer(1, 64).optional(),
  REDIS_URL: serviceUrl('REDIS_URL', ['redis:', 'rediss:']),
  // Default: http://localhost:<PORT>.
  // An http(s) address, a path prefix allowed; no query, fragment or credentials, which would end
  // up inside every listing's url and Link header (an outside probe of stop 56: `javascript:…`,
  // `ftp://…` and `https://x.example?a=1` were taken).
  PUBLIC_BASE_URL: optionalUrl
    .pipe(z.url('PUBLIC_BASE_URL must be an absolute URL').optional())
    .refine((u) => u === undefined || publicBase(u), {
      message: 'PUBLIC_BASE_URL must be an http:// or https:// address (a path after the host is allowed; no query, fragment or user name)',
    })
    // As the URL standard writes it (`https://x.example/a b` as `.../a%20b`, `http:/x.example` as
    // `http://x.example`): written raw, a space or `<` broke the Link header (its re-check).
    .transform((u) => (u === undefined ? undefined : new URL(u).href.replace(/\/+$/, ''))),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_PRETTY: bool.optional(),
  TRUST_PROXY: trustProxy,
  STATS_RATE_LIMIT_PER_MINUTE: integer(1).default(60),
  // The HTML pages (/listings/:id, /api-keys and its forms), per client IP.
  PAGES_RATE_LIMIT_PER_MINUTE: integer(1).default(DEFAULT_PAGES_RATE_LIMIT_PER_MINUTE),
  DB_POOL_MAX: integer(1, 200).default(10),
  // The pool a server process reads page rows on, apart from DB_POOL_MAX's (0: on that pool).
  DB_ROWS_POOL_MAX: integer(0, 50).default(0),
  DB_STATEMENT_TIMEOUT_MS: integer(100).default(10000),
  // An export whose client takes nothing for this long is cut (it holds a pool connection
  // and a snapshot while it waits).
  EXPORT_CLIENT_TIMEOUT_MS: integer(100, 3_600_000).default(30_000),
  REDIS_TIMEOUT_MS: integer(50, 5000).default(300),
  // Connections one client address may hold open to a server process (src/http/http-server.ts);
  // 0: no bound (behind a proxy, every connection bears its address).
  MAX_CONNECTIONS_PER_CLIENT: integer(0).default(1024),
  // Connections a server process holds open in all; 0: 80 % of its limit of open files.
  MAX_CONNECTIONS: integer(0).default(0),
  // Prometheus metrics listen here, apart from the public API port. -1 turns them off.
  METRICS_PORT: integer(-1, 65535).default(9464),
  METRICS_HOST: z.string().default('127.0.0.1'),
  // The in-memory read model of active listings (exact counts and page ids at scale).
  LISTINGS_READ_MODEL: bool.default(true),
  // ... loaded and queried on a thread of its own instead of the request thread (off by
  // default: at 1,000,000 listings +10 % fresh queries for 25-50 MB more at the peak).
  LISTINGS_READ_MODEL_THREAD: bool.default(false),
  // The running server refreshes the stale flag every 15 minutes (src/ingest/flags.ts);
  // false leaves it to imports (the benchmark's fixed data set).
  STALE_CHECK: bool.default(true),
  EMBEDDED_PG_DIR: z.string().default('.data/pg'),
  EMBEDDED_PG_PORT: integer(1024, 65535).default(54329),
});

export type Config = Omit<z.infer<typeof configSchema>, 'PUBLIC_BASE_URL'> & { PUBLIC_BASE_URL: string };

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // A variable set to nothing (`PORT=` in a compose .env file) is a variable not set: its
  // default applies, for every setting alike.
  const given = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const parsed = configSchema.safeParse(given);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const c = parsed.data;
  return { ...c, PUBLIC_BASE_URL: c.PUBLIC_BASE_URL ?? `http://localhost:${c.PORT}` };
}
