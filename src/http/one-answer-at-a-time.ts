import type { Socket } from 'node:net';
import type { RequestHandler } from 'express';

// Requests pipelined on one connection (HTTP/1.1 lets a client send several before reading
// an answer) are handled one after the other: each starts once the answer before it on that
// connection has left. Node starts every one of them at once and holds their answers in order,
// so a client that pipelined many requests and read nothing held one of /changes' 3 page turns
// for each, and the key's near-limit turn, and /changes was 503 for everyone (outside probes).
// Its answers could not have left before the first anyway; waiting costs such a client nothing
// and holds nothing of anyone else's. A connection with one request at a time passes straight
// through (one object and one listener a request).
const LAST = Symbol('the last answer started on this connection');

interface Answer {
  done: boolean;
  waiting: (() => void) | null;
}

type Tracked = Socket & { [LAST]?: Answer };

export const oneAnswerAtATime: RequestHandler = (req, res, next) => {
  const socket = req.socket as Tracked;
  const before = socket[LAST];
  const mine: Answer = { done: false, waiting: null };
  socket[LAST] = mine;
  res.once('close', () => {
    mine.done = true;
    const go = mine.waiting;
    mine.waiting = null;
    go?.();
  });
  if (before === undefined || before.done) return next();
  before.waiting = () => (res.destroyed ? undefined : next());
};
