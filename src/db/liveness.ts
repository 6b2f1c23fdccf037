import pg from 'pg';
import { within } from '../lib/within.js';

export interface LivenessOptions {
  // How often PostgreSQL is asked, and how long an answer (or a new connection) may take.
  everyMs?: number;
  answerMs?: number;
  // Unanswered asks in a row that say it stopped answering.
  misses?: number;
}

// Watches that PostgreSQL still answers, on a connection of its own, while a long transaction
// runs without a statement bound (an import sets statement_timeout = 0: its statements may run
// for minutes at 1,000,000 listings). A server that stopped answering without closing the
// connection (frozen, or behind a network that drops packets) would otherwise leave the import
// waiting for ever (an outside probe: an import through a frozen proxy never exited, and held
// the lock every other import waits for). `onDead` is called once, with what was seen; the
// returned function stops the watch.
export function watchLiveness(connectionString: string, onDead: (what: string) => void, opts: LivenessOptions = {}): () => Promise<void> {
  const everyMs = opts.everyMs ?? 10_000;
  const answerMs = opts.answerMs ?? 10_000;
  const misses = opts.misses ?? 3;
  let client: pg.Client | null = null;
  let missed = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;

  const drop = () => {
    const c = client;
    client = null;
    // A connection to a server that does not answer: its end is not awaited either.
    c?.end().catch(() => {});
  };
  const withinAnswer = <T>(p: Promise<T>) => within(p, answerMs, `no answer within ${answerMs / 1000} s`);

  async function ask(): Promise<void> {
    let connecting = false;
    try {
      if (!client) {
        connecting = true;
        const c = new pg.Client({ connectionString, connectionTimeoutMillis: answerMs, application_name: 'lux-listings-feed liveness' });
        c.on('error', () => {}); // a connection cut between asks: the next ask finds out
        client = c;
        await withinAnswer(c.connect());
        connecting = false;
      }
      await withinAnswer(client.query('SELECT 1'));
      missed = 0;
    } catch (e) {
      drop();
      missed++;
      if (missed >= misses && !stopped) {
        stopped = true;
        // pg's own connection timeout says only "timeout expired".
        const what = connecting && /timeout/i.test((e as Error).message) ? `no connection within ${answerMs / 1000} s` : (e as Error).message;
        onDead(`PostgreSQL did not answer ${missed} times in a row, ${everyMs / 1000} s apart (${what})`);
        return;
      }
    }
    if (!stopped) {
      timer = setTimeout(() => void ask(), everyMs);
      timer.unref();
    }
  }
  timer = setTimeout(() => void ask(), everyMs);
  timer.unref();

  return async () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    drop();
  };
}
