import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { IndexAnswer, IndexQuery, ReadModel, ReadModelStatus } from './queries.js';

// The listings read model on a thread of its own (node:worker_threads, thread-worker.ts; the
// server starts it with LISTINGS_READ_MODEL_THREAD=true). The request thread keeps only what
// the thread last said it holds. A query at a version the thread does not hold is answered
// null at once (SQL answers it) without asking; otherwise it is posted and answered in about
// 20 µs of the request thread's time plus the index's own work, done on the other thread. If
// the thread fails (an error, running out of memory), every query it had is answered null,
// the API answers from SQL, and the thread is started again with backoff.

export interface ThreadOptions {
  databaseUrl: string;
  statementTimeoutMs?: number;
  settleMs?: number;
  // The server's log settings (LOG_PRETTY resolved on the request thread, whose stdout is the terminal).
  log: Pick<Config, 'LOG_LEVEL' | 'LOG_PRETTY'>;
}

export type ThreadMessage =
  | { t: 'query'; id: number; version: number; q: IndexQuery }
  | { t: 'seen'; version: number }
  | { t: 'warm' }
  | { t: 'close' };

export type ThreadReply = { t: 'answer'; id: number; answer: IndexAnswer | null } | { t: 'status'; holds: number | null; status: ReadModelStatus };

// A query not answered by then is answered from SQL (its late answer is dropped): the thread
// may be busy sorting a new load for a second or two when a query races its announcement that
// it dropped the old index.
const QUERY_TIMEOUT_MS = 1000;

// The thread's heap: the index's columns are typed arrays (outside it); the heap holds the
// loader's batches of 50,000 rows and the dictionaries.
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 8 };

function workerScript(): { file: URL | string; eval: boolean } {
  const url = new URL(import.meta.url.endsWith('.ts') ? './thread-worker.ts' : './thread-worker.js', import.meta.url);
  if (url.pathname.endsWith('.js')) return { file: url, eval: false };
  // From the TypeScript sources (npm start, tests): tsx registered in the thread first.
  const tsx = import.meta.resolve('tsx/esm/api');
  return { file: `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); })`, eval: true };
}

export class ReadModelThread implements ReadModel {
  private worker: Worker | null = null;
  private holds: number | null = null;
  private newestSeen = -1;
  private warmed = false;
  private closed = false;
  private failures = 0;
  private seq = 0;
  private served = 0;
  private status: ReadModelStatus = { version: null, listings: 0, bytes: 0, builds: 0, served: 0, lastBuildMs: null, lastError: null };
  private readonly pending = new Map<number, { resolve: (a: IndexAnswer | null) => void; timer: NodeJS.Timeout }>();
  private readyWaiters: Array<() => void> = [];

  constructor(
    private readonly options: ThreadOptions,
    private readonly logger: Logger,
  ) {
    this.start();
  }

  query(version: number, q: IndexQuery): Promise<IndexAnswer | null> {
    const worker = this.worker;
    if (!worker || this.holds !== version) {
      this.seen(version);
      return Promise.resolve(null);
    }
    return new Promise((resolve) => {
      const id = ++this.seq;
      const timer = setTimeout(() => {
        this.pending.delete(id);
        resolve(null);
      }, QUERY_TIMEOUT_MS);
      this.pending.set(id, { resolve, timer });
      worker.postMessage({ t: 'query', id, version, q } satisfies ThreadMessage);
    });
  }

  seen(version: number): void {
    if (version <= this.newestSeen) return;
    this.newestSeen = version;
    this.worker?.postMessage({ t: 'seen', version } satisfies ThreadMessage);
  }

  warm(): void {
    this.warmed = true;
    this.worker?.postMessage({ t: 'warm' } satisfies ThreadMessage);
  }

  async ready(version?: number): Promise<void> {
    if (version !== undefined) this.seen(version);
    else if (!this.warmed) this.warm();
    while (this.holds === null || (version !== undefined && this.holds < version)) {
      if (this.closed) throw new Error('read model closed');
      await new Promise<void>((resolve) => this.readyWaiters.push(resolve));
    }
  }

  info(): ReadModelStatus {
    return { ...this.status, served: this.served };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const worker = this.worker;
    this.settleAll();
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ t: 'close' } satisfies ThreadMessage);
    const timer = setTimeout(() => void worker.terminate(), 5000);
    await exited;
    clearTimeout(timer);
  }

  private start(): void {
    const { file, eval: isEval } = workerScript();
    const worker = new Worker(file, { eval: isEval, workerData: this.options, resourceLimits: RESOURCE_LIMITS });
    this.worker = worker;
    worker.unref(); // the server's own handles keep the process alive, not this thread
    worker.on('message', (m: ThreadReply) => this.onMessage(m));
    worker.on('error', (err) => {
      this.status.lastError = 'thread_failed'; // the message is logged, not shown (read-model.ts)
      this.logger.error({ err }, 'read model thread failed; answering from SQL');
    });
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = null;
      this.holds = null;
      this.settleAll();
      if (this.closed) return;
      this.failures++;
      const wait = Math.min(60_000, 1000 * 2 ** (this.failures - 1));
      this.logger.warn({ code, failures: this.failures, retry_ms: wait }, 'read model thread exited; answering from SQL until it is back');
      setTimeout(() => {
        if (!this.closed) this.start();
      }, wait).unref();
    });
    if (this.newestSeen >= 0) worker.postMessage({ t: 'seen', version: this.newestSeen } satisfies ThreadMessage);
    if (this.warmed) worker.postMessage({ t: 'warm' } satisfies ThreadMessage);
  }

  private onMessage(m: ThreadReply): void {
    if (m.t === 'answer') {
      const p = this.pending.get(m.id);
      if (!p) return; // timed out
      this.pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.answer) this.served++;
      p.resolve(m.answer);
      return;
    }
    this.holds = m.holds;
    this.status = m.status;
    if (m.holds !== null) this.failures = 0;
    for (const w of this.readyWaiters.splice(0)) w();
  }

  // Every query in flight answered null (SQL answers them); waiters woken to look again.
  private settleAll(): void {
    for (const [, p] of this.pending) {
      clearTimeout(p.timer);
      p.resolve(null);
    }
    this.pending.clear();
    for (const w of this.readyWaiters.splice(0)) w();
  }
}
