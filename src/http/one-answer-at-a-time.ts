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
//
// Waiting requests are held in memory, and Node stops reading a connection only when answers are
// written faster than they leave, which waiting ones never are: a client that pipelined hundreds
// of requests on each of many connections and read nothing had the server hold tens of
// thousands, past 1 GB (a second outside probe; the process died out of memory). A connection
// with more than MAX_WAITING requests waiting behind an answer that has not left is closed:
// such a client is not reading, and HTTP lets it send again what was not answered.
export const MAX_WAITING = 64;

const LAST = Symbol('the last answer started on this connection');
const WAITING = Symbol('requests waiting on this connection');

interface Answer {
  done: boolean;
  waiting: (() => void) | null;
}

type Tracked = Socket & { [LAST]?: Answer; [WAITING]?: number };

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
  const waiting = (socket[WAITING] ?? 0) + 1;
  if (waiting > MAX_WAITING) return void socket.destroy();
  socket[WAITING] = waiting;
  before.waiting = () => {
    socket[WAITING]!--;
    // Not for a client that has gone (or was closed above).
    if (!res.destroyed && !socket.destroyed) next();
  };
};
