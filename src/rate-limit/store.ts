import { MemoryStore, type IncrementResponse, type Logger as LimiterLogger, type Options, type Store } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RedisStore } from 'rate-limit-redis';
import { requestBoundOf } from '../redis.js';

// The counters behind every limit of the service (the API's daily quota and per-IP limits,
// the web pages' limits and sign-in throttles): in Redis when it is configured, else in the
// process's memory; a store that fails lets requests through, counted and logged.

// What the stores of one app did, for metrics and for the fault tests: operations started,
// operations that failed (each failed increment or decrement is a request served without
// limiting), and of those the ones that timed out (a hung Redis: the store's deadline or the
// client's command timeout) rather than failing at once (a Redis that is down).
export interface StoreHealth {
  operations: number;
  errors: number;
  timeouts: number;
  lastError: Date | null;
  // Increments past their deadline, or past the client's command timeout, not yet settled:
  // each is taken back if the store applies it after all (GuardedStore.increment, createStore).
  late: number;
}

export function newStoreHealth(): StoreHealth {
  return { operations: 0, errors: 0, timeouts: 0, lastError: null, late: 0 };
}

class StoreDeadlineError extends Error {}

// ioredis rejects a command past its commandTimeout with this message and no code.
function isTimeout(err: unknown): boolean {
  return err instanceof StoreDeadlineError || (err as Error | null)?.message === 'Command timed out';
}

// Wraps the real store (Redis, or memory when no Redis is configured) so that a store
// error is counted and logged (throttled) before express-rate-limit lets the request pass.
// Each store operation also gets one overall deadline: an EVALSHA whose script the server does
// not know is retried with SCRIPT LOAD + EVALSHA (RedisStoreIncrementingOnce), so against a hung
// Redis one increment could cost two or three command timeouts; the deadline keeps it to one.
//
// A deadline that passes while the connection keeps answering other commands (answers come in
// order: this one is queued behind them) is not a hung Redis but a busy one, or a busy event
// loop: the operation waits another deadline, for as long as answers keep coming, up to
// `maxWaitMs` (an outside probe: with two busy loops beside a server at a load average of
// 10-18, a Starter key had up to a quarter of its requests served unlimited, Redis healthy).
export class GuardedStore implements Store {
  localKeys: boolean;
  prefix?: string;
  constructor(
    private readonly inner: Store,
    private readonly health: StoreHealth,
    private readonly logger: Logger,
    private readonly label: string,
    private readonly deadlineMs: number | null = null,
    // How many answers the store's connection has received so far, and the longest wait.
    private readonly answers: () => number = () => 0,
    private readonly maxWaitMs = 0,
    // Told of each increment taken back at its deadline (createStore: so that the client's own
    // timeout of that increment does not take it back again).
    private readonly tookBack: (key: string) => void = () => undefined,
    // Connections the store's client has had so far: an increment's take-back goes only on the
    // connection the increment went on.
    private readonly connection: () => number = () => 0,
  ) {
    this.localKeys = inner.localKeys ?? false;
    this.prefix = inner.prefix;
  }
  init(options: Options): void {
    this.inner.init?.(options);
  }
  // express-rate-limit's own logger: store errors reach it only after fail() has counted
  // and logged them (throttled), so they are dropped here instead of being written to the
  // console once per request; anything else goes to the service's log.
  readonly limiterLogger = {
    error: (err: unknown, message?: string) => {
      if (typeof message === 'string' && message.includes('error from store')) return;
      this.logger.error({ err: { message: (err as Error)?.message ?? String(err) }, store: this.label }, message ?? 'express-rate-limit error');
    },
    warn: (err: unknown, message?: string) => {
      this.logger.warn({ err: { message: (err as Error)?.message ?? String(err) }, store: this.label }, message ?? 'express-rate-limit warning');
    },
  };
  private lastLog = 0;
  private fail(err: unknown): never {
    this.health.errors++;
    if (isTimeout(err)) this.health.timeouts++;
    this.health.lastError = new Date();
    const now = Date.now();
    if (now - this.lastLog > 10_000) {
      this.lastLog = now;
      this.logger.error({ err: { message: (err as Error)?.message }, store: this.label, errors: this.health.errors }, 'rate-limit store unavailable: request served without limiting');
    }
    throw err;
  }
  private bounded<T>(op: () => T | Promise<T>, late?: () => void): Promise<T> {
    this.health.operations++;
    const run = new Promise<T>((resolve) => resolve(op())); // a synchronous throw rejects too
    const ms = this.deadlineMs;
    if (ms === null) return run;
    let timer: NodeJS.Timeout | undefined;
    let answered = false;
    run.then(
      () => (answered = true),
      () => (answered = true),
    );
    let seen = this.answers();
    const on = this.connection();
    let waited = 0;
    const deadline = new Promise<never>((_, reject) => {
      const arm = () => {
        timer = setTimeout(() => {
          // Timers run before the event loop reads its sockets: after a turn of the loop longer
          // than the deadline (a burst of requests on a loaded server), Redis's answer may be
          // waiting, unread. It is read first (setImmediate runs after the sockets are), and the
          // deadline only counts when there is still none (an outside probe: a Free key served
          // 143 times on a loaded server, Redis answering in 61 us).
          setImmediate(() => {
            if (answered) return;
            waited += ms;
            const now = this.answers();
            // (Answers on a connection that replaced this one's say nothing of it: a second
            // regression probe of stop 47 saw requests wait 2.8 s as the client connected anew.)
            if (now > seen && waited + ms <= this.maxWaitMs && this.connection() === on) {
              seen = now;
              arm();
              return;
            }
            reject(new StoreDeadlineError(`rate-limit store did not answer within ${ms} ms`));
            late?.();
          });
        }, ms);
      };
      arm();
    });
    // Promise.race subscribes to op's promise, so its late rejection is never unhandled.
    return Promise.race([run, deadline]).finally(() => clearTimeout(timer));
  }
  async increment(key: string): Promise<IncrementResponse> {
    try {
      // An increment that answers after the deadline has still counted a request that was
      // served without limiting, and that nothing will take back (a 304, a 429): it is taken
      // back, so that "served without limiting" is also "not counted" (an outside probe saw a
      // Free key's count end 2 above its requests after a burst on a busy machine). The DECR is
      // sent at once, behind the increment on the same connection, so that Redis applies each
      // right after its increment: sent once the increment had answered, after a hang all the
      // hang's increments applied first, and a key with quota left was refused until they were
      // taken back (an outside probe: about 650 answers 429 with Retry-After until midnight).
      const on = this.connection();
      return await this.bounded(
        () => this.inner.increment(key),
        () => {
          // Its connection replaced meanwhile (src/redis.ts, socketTimeout): the new one never had
          // the increment, and a DECR there took a counted request back (a CI run of stop 47: a
          // key's count one under its requests).
          if (this.connection() !== on) return;
          this.health.late++;
          this.tookBack(key);
          void Promise.resolve()
            .then(() => this.inner.decrement(key))
            .catch(() => undefined)
            .finally(() => this.health.late--);
        },
      );
    } catch (err) {
      this.fail(err);
    }
  }
  async decrement(key: string): Promise<void> {
    try {
      await this.bounded(() => this.inner.decrement(key));
    } catch (err) {
      this.fail(err);
    }
  }
  async resetKey(key: string): Promise<void> {
    try {
      await this.bounded(() => this.inner.resetKey(key));
    } catch (err) {
      this.fail(err);
    }
  }
  async get(key: string) {
    return this.bounded(() => this.inner.get?.(key));
  }
}

// The logger to give express-rate-limit for a store made here (it drops the store errors the
// store has already counted and logged); for any other store, express-rate-limit's default.
export function limiterLogger(store: Store): LimiterLogger | undefined {
  return store instanceof GuardedStore ? store.limiterLogger : undefined;
}

// The answers each Redis client has received for the stores' commands.
const answersOf = new WeakMap<Redis, { n: number }>();
// Connections of each client so far: a command's late DECR goes only on the connection its
// increment went on.
const connectionsOf = new WeakMap<Redis, { n: number }>();
function connectionCount(redis: Redis): { n: number } {
  let c = connectionsOf.get(redis);
  if (!c) {
    const count = { n: 0 };
    redis.on('close', () => void count.n++);
    connectionsOf.set(redis, (c = count));
  }
  return c;
}

// rate-limit-redis retries an increment that failed for any reason with SCRIPT LOAD and a second
// EVALSHA. After the client's timeout the first may still be applied when a hung Redis resumes,
// and the second too: two increments for one request, one of them never taken back (an outside
// probe's 10 s hangs left counts off, one way or the other, by the hang's requests). The retry is
// kept for what it is for: a script the server does not know (NOSCRIPT, a restarted Redis), or a
// script that could not be loaded (no EVALSHA sent).
class RedisStoreIncrementingOnce extends RedisStore {
  override async retryableIncrement(id: string) {
    const key = this.prefixKey(id);
    let sent = false;
    const run = async () => {
      const sha = await this.incrementScriptSha;
      sent = true;
      return this.sendCommand({ key, isReadOnly: false, command: ['EVALSHA', sha, '1', key, this.resetExpiryOnChange ? '1' : '0', this.windowMs.toString()] });
    };
    try {
      return await run();
    } catch (err) {
      if (sent && !/NOSCRIPT/.test((err as Error | null)?.message ?? '')) throw err;
      this.incrementScriptSha = this.loadIncrementScript(key);
      sent = false;
      return run();
    }
  }
}

export function createStore(redis: Redis | null, prefix: string, health: StoreHealth, logger: Logger): Store {
  if (!redis) return new GuardedStore(new MemoryStore(), health, logger, 'memory');
  const counter = answersOf.get(redis) ?? { n: 0 };
  answersOf.set(redis, counter);
  const connections = connectionCount(redis);
  // Increments the store's deadline has taken back (GuardedStore.increment), by key, with when:
  // the client's timeout of such an increment, which comes later, finds its mark and sends no
  // second DECR (an outside probe: after a 10 s hang a key's count read -35, and answers said
  // RateLimit-Remaining 195 of 100). A mark older than twice the client's timeout belongs to an
  // increment that answered after all, and is dropped.
  const backstopMs = redis.options.commandTimeout ?? 3000;
  const marks = new Map<string, number[]>();
  const freshMarks = (k: string) => (marks.get(k) ?? []).filter((at) => Date.now() - at <= 2 * backstopMs);
  const tookBack = (key: string) => {
    const k = `${prefix}${key}`;
    marks.set(k, [...freshMarks(k), Date.now()]);
  };
  const takenBackAlready = (k: string): boolean => {
    const fresh = freshMarks(k);
    const found = fresh.shift() !== undefined;
    if (fresh.length > 0) marks.set(k, fresh);
    else marks.delete(k);
    return found;
  };
  // DECRs sent, by key: each with its place among the commands sent on the client and the
  // connection it went on (discounted below). Kept for twice the client's timeout: no increment
  // waits longer for its answer.
  let wire = 0;
  const decrements = new Map<string, { seq: number; on: number; at: number }[]>();
  const sendDecrement = (key: string): Promise<unknown> => {
    const now = Date.now();
    if (decrements.size >= 10_000) for (const [k, l] of decrements) if (now - l[l.length - 1].at > 2 * backstopMs) decrements.delete(k);
    const l = (decrements.get(key) ?? []).filter((d) => now - d.at <= 2 * backstopMs);
    l.push({ seq: ++wire, on: connections.n, at: now });
    decrements.set(key, l);
    const sent = redis.call('DECR', key) as Promise<unknown>;
    sent.then(
      () => void counter.n++,
      () => undefined,
    );
    return sent;
  };
  // An increment's count, less the DECRs of its key sent on its connection after it and before its
  // answer. Redis applies a connection's commands in order, so each of those comes after it and
  // takes back a request counted before it: a take-back sent at an increment's deadline (a hang's
  // increments all apply when Redis resumes, each DECR behind the increments sent meanwhile: an
  // outside probe of stop 63 saw a key with 15 of its 100 left refused 429 until midnight, 2,300
  // times in the second after a 3 s pause), or a 304's (its request's answer was taken back). A DECR
  // sent after the increment's answer is not among them, and could only take back a request
  // counted before the increment if it was sent before its answer: so the count is the key's
  // requests that count, as if every take-back sent so far had been applied.
  const discounted = (key: string, seq: number, on: number, result: unknown): unknown => {
    const behind = (decrements.get(key) ?? []).filter((d) => d.seq > seq && d.on === on).length;
    if (behind === 0 || !Array.isArray(result) || typeof result[0] !== 'number') return result;
    return [Math.max(0, result[0] - behind), ...result.slice(1)];
  };
  const store = new RedisStoreIncrementingOnce({
    prefix,
    sendCommand: (command: string, ...args: string[]) => {
      if (command === 'DECR' && args.length === 1) return sendDecrement(args[0]) as Promise<never>;
      const seq = ++wire;
      const sentOn = connections.n;
      const sent = redis.call(command, ...args) as Promise<never>;
      sent.then(
        () => void counter.n++,
        () => undefined,
      );
      // An increment (rate-limit-redis's EVALSHA of its increment script: sha, 1, key, reset,
      // window) that the client gave up on (its command timeout) is still in the connection and
      // is applied when a hung Redis answers again, though its request was served without
      // limiting. A DECR sent behind it on the same connection takes it back after it, or is lost
      // with it if the connection is (an outside probe: a 1 s hang left a Free key charged about
      // one request per concurrent request in flight, 10-20 of its 100), unless the store's
      // deadline took it back already (below).
      if (command === 'EVALSHA' && args.length === 5) {
        const on = connections.n;
        sent.catch((err: unknown) => {
          // Not on another connection (as at the store's deadline, above).
          if (!isTimeout(err) || takenBackAlready(args[2]) || connections.n !== on) return;
          health.late++;
          sendDecrement(args[2]).catch(() => undefined).finally(() => health.late--);
        });
        return sent.then((result) => discounted(args[2], seq, sentOn, result)) as Promise<never>;
      }
      return sent;
    },
  });
  // rate-limit-redis loads its Lua scripts in its constructor; with Redis down that promise
  // rejects before anyone awaits it. Mark it handled: the store reloads the script on the
  // next increment, which is how limiting resumes once Redis is back.
  const s = store as unknown as { incrementScriptSha: Promise<string>; getScriptSha: Promise<string> };
  s.incrementScriptSha.catch(() => undefined);
  s.getScriptSha.catch(() => undefined);
  // One store operation is at most one round trip over a few ms in health, three when the
  // script must be reloaded (after a Redis restart): bound the whole by the request's bound
  // (createRedis's `timeoutMs`; for another client, its command timeout) plus a little, so a
  // hung Redis costs a request about one timeout.
  const bound = requestBoundOf(redis) ?? redis.options.commandTimeout ?? 500;
  // While the connection keeps answering, up to the client's own command timeout (its backstop).
  return new GuardedStore(store, health, logger, 'redis', bound + 50, () => counter.n, redis.options.commandTimeout ?? 0, tookBack, () => connections.n);
}
