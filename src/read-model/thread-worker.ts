import { parentPort, workerData } from 'node:worker_threads';
import { createDb } from '../db/knex.js';
import { createLogger } from '../logger.js';
import { ListingReadModel } from './read-model.js';
import type { ThreadMessage, ThreadOptions, ThreadReply } from './thread.js';

// The read model's own thread (started by ReadModelThread, thread.ts): it loads and holds the
// index and answers the request thread's queries, so that counting and paging at 1,000,000
// listings, and the seconds of sorting after each load, no longer hold up the requests.

const options = workerData as ThreadOptions;
const port = parentPort!;
const post = (m: ThreadReply) => port.postMessage(m);
// The server's log settings; lines go to this process's stdout as the server's do.
const logger = createLogger(options.log).child({ thread: 'read-model' });
// knex's own warnings as JSON lines of the logger too (an outside probe of stop 58: during an
// outage this pool wrote bare text and stack traces to stdout).
const db = createDb(options.databaseUrl, { poolMax: 1, statementTimeoutMs: options.statementTimeoutMs, logger });
const model = new ListingReadModel(db, logger, options.settleMs, (holds, status) => post({ t: 'status', holds, status }));

port.on('message', (m: ThreadMessage) => {
  switch (m.t) {
    case 'query':
      // Never a wrong answer: a query that fails is answered null, and SQL answers it.
      void model.query(m.version, m.q).then(
        (answer) => post({ t: 'answer', id: m.id, answer }),
        (err: unknown) => {
          logger.error({ err }, 'read model: query failed');
          post({ t: 'answer', id: m.id, answer: null });
        },
      );
      return;
    case 'seen':
      model.seen(m.version);
      return;
    case 'warm':
      model.warm();
      return;
    case 'close':
      void model
        .close()
        .then(() => db.destroy())
        .finally(() => port.close());
      return;
  }
});
