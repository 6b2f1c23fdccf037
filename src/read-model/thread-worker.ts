import { parentPort, workerData } from 'node:worker_threads';
import { createDb } from '../db/knex.js';
import { createLogger } from '../logger.js';
import { answerQuery } from './queries.js';
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
const db = createDb(options.databaseUrl, { poolMax: 1, statementTimeoutMs: options.statementTimeoutMs });
const model = new ListingReadModel(db, logger, options.settleMs, (holds, status) => post({ t: 'status', holds, status }));

port.on('message', (m: ThreadMessage) => {
  switch (m.t) {
    case 'query': {
      const index = model.at(m.version);
      let answer = null;
      if (index) {
        try {
          answer = answerQuery(index, m.q);
        } catch (err) {
          // Never a wrong answer: SQL answers this one.
          logger.error({ err }, 'read model: query failed');
        }
      }
      post({ t: 'answer', id: m.id, answer });
      return;
    }
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
