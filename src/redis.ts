import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { perKindGate } from './lib/throttle.js';

// How long a request waits for Redis with each client (the stores' deadline,
// src/rate-limit/store.ts), when createRedis made it.
const requestBounds = new WeakMap<Redis, number>();
export const requestBoundOf = (redis: Redis): number | undefined => requestBounds.get(redis);

// Redis trouble must never turn into a 5xx or a hung request, so the client fails fast:
// no offline queue (a command while disconnected fails at once), one retry at most, a short
// connect timeout, and reconnection forever with a capped back-off so quotas resume by
// themselves. A hung server costs a request at most `timeoutMs`: the stores' deadline, which
// looks at the connection once more before it gives up. The client's own command timeout is
// only a backstop (ten times that, 3 s at least), so that the promise of a command a hung server
// never answers settles: a timer cannot tell a hung server from a busy event loop (timers run
// before the sockets are read), and at `timeoutMs` it took answers already there for none
// (an outside probe: on a loaded server a Free key was served up to 143 times, with Redis
// healthy).
export function createRedis(url: string, opts: { timeoutMs: number; logger: Logger }): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: Math.max(opts.timeoutMs, 500),
    commandTimeout: Math.max(10 * opts.timeoutMs, 3000),
    // A connection that answers nothing for 15 s after a command is replaced (ioredis destroys the
    // socket and connects again): a flow a NAT or a firewall dropped without closing it, a server
    // gone behind a virtual address, is otherwise kept until the kernel gives up on it (about 15
    // minutes), quotas unenforced and /readyz 503 meanwhile, while Redis serves every other
    // process (an outside probe of stop 47). Not sooner: a Redis paused (or this process, a VM)
    // holds the commands sent meanwhile and runs them when it resumes, increments and their
    // take-backs alike, so the counts come out exact; replaced after 3 s, the increments of its
    // last moments were counted with no take-back (its regression probe: +28 over 800 after a
    // 5 s pause).
    socketTimeout: Math.max(50 * opts.timeoutMs, 15_000),
    // What was sent on a connection replaced so is not sent again on the next: it may yet run on
    // the old one (a paused server reads it when it resumes), and an increment sent twice counts
    // twice (the regression probe saw 31 sent again).
    autoResendUnfulfilledCommands: false,
    // Tries again every 500 ms at most: quotas go unenforced until the client is back, so
    // the wait after Redis returns is kept short (it was up to 2 s).
    retryStrategy: (times) => Math.min(100 * 2 ** Math.min(times, 5), 500),
    // Each command written as it is sent, not from a setImmediate of the client's own: after a
    // long turn of a busy event loop, an increment written only then had no answer yet when the
    // stores' deadline (its timer due in the same turn) looked, and the request was served
    // without limiting (an outside probe: 1-2 % of a Starter key's requests at a load average of
    // 10-13, Redis answering in 14 ms at most).
    enableAutoPipelining: false,
    lazyConnect: false,
  });
  // One line every 10 s while Redis stays away (each reconnection attempt fails again).
  const gate = perKindGate(10_000);
  // A database the server does not have: the start stops with its own line (wrongRedisDatabase),
  // so neither that error nor the "ready" on database 0 that follows it is logged.
  let wrongDatabase = false;
  redis.on('error', (err) => {
    if (/DB index is out of range/.test(err.message)) return void (wrongDatabase = true);
    if (AUTH_REFUSED.test(err.message)) authRefusals.set(redis, err.message);
    const suppressed = gate('error');
    if (suppressed !== null) opts.logger.error({ err: { message: err.message, code: (err as { code?: string }).code }, suppressed }, 'redis error');
  });
  redis.on('ready', () => !wrongDatabase && opts.logger.info('redis ready'));
  requestBounds.set(redis, opts.timeoutMs);
  return redis;
}

// Credentials the server refused: none given where it asks for a password (NOAUTH), or a wrong
// user or password (WRONGPASS; older servers: "invalid password"). Waiting mends neither, and the
// client keeps trying with them.
const AUTH_REFUSED = /^(?:NOAUTH|WRONGPASS)\b|invalid password/i;
const authRefusals = new WeakMap<Redis, string>();

// Why the server refused the client's credentials (its error), or null: the start stops on it
// (src/server.ts), as it does on a database the server does not have, rather than serving
// without quotas for as long as it runs (an outside probe of stop 63).
export function redisAuthRefusal(redis: Redis): string | null {
  return authRefusals.get(redis) ?? null;
}

// Why the client is not on the database REDIS_URL asks for, or null. ioredis reports a SELECT
// that fails (an index the server does not have: redis://host/99) as an error and goes on, on
// database 0, where the quotas would mix with whatever else lives there (an outside probe).
// Null too when the server cannot say (CLIENT INFO is Redis 6.2 and later).
export async function wrongRedisDatabase(redis: Redis): Promise<string | null> {
  const wanted = redis.options.db ?? 0;
  const info = await redis.call('CLIENT', 'INFO').catch(() => null);
  const on = typeof info === 'string' ? /(?:^| )db=(\d+)/.exec(info) : null;
  if (on === null || Number(on[1]) === wanted) return null;
  return `REDIS_URL asks for Redis database ${wanted}, which this Redis does not have (it answered on database ${on[1]}); set REDIS_URL`;
}

export async function waitForRedis(redis: Redis, ms: number): Promise<boolean> {
  if (redis.status === 'ready') return true;
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      redis.off('ready', onReady);
      resolve(false);
    }, ms);
    const onReady = () => {
      clearTimeout(t);
      resolve(true);
    };
    redis.once('ready', onReady);
  });
}
