import type { Socket } from 'node:net';
import type { RequestListener } from 'node:http';

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
// thousands, past 1 GB (a second outside probe; the process died out of memory). So a
// connection with MAX_WAITING requests waiting is read no further until one has gone (the
// client's further requests wait in its own and the kernel's buffers), and one with more than
// MAX_HELD waiting, which only a single burst read at once can bring, is closed. It was closed at
// MAX_WAITING before, which dropped every answer of a client that sent 66 requests in one write
// and was reading them (a third outside probe).
//
// Not reading is done as Node's HTTP server does it when answers are written faster than they
// leave (node/lib/_http_server.js): the socket paused and marked `_paused`, which has Node pause
// its parser once it has parsed what it read (a paused socket alone is still parsed: its
// parser reads the handle itself); resumed the same way, parser and socket. The tests check that
// the server reads no further (test/api/pipelining.test.ts), so a Node that changed this fails
// them.
export const MAX_WAITING = 64;
export const MAX_HELD = 256;

const LAST = Symbol('the last answer started on this connection');
const WAITING = Symbol('requests waiting on this connection');
const PAUSED = Symbol('this connection is not read while so many wait');

interface Answer {
  done: boolean;
  waiting: (() => void) | null;
}

type Tracked = Socket & { [LAST]?: Answer; [WAITING]?: number; [PAUSED]?: boolean; _paused?: boolean; parser?: { resume(): void } | null };

// `listener` with every request waiting its turn: the HTTP server's entry (raw-responses.ts,
// requireHost) wraps the app in it. A request with no answer before it is handed on at once,
// without a closure of its own.
export function oneAnswerAtATime(listener: RequestListener): RequestListener {
  return (req, res) => {
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
    if (before === undefined || before.done) return void listener(req, res);
    const waiting = (socket[WAITING] ?? 0) + 1;
    if (waiting > MAX_HELD) return void socket.destroy();
    socket[WAITING] = waiting;
    // Again at each one past the mark: Node resumes reading a connection when it finishes an answer.
    if (waiting >= MAX_WAITING) {
      socket[PAUSED] = socket._paused = true;
      socket.pause();
    }
    before.waiting = () => {
      const left = --socket[WAITING]!;
      if (socket[PAUSED] && left < MAX_WAITING) {
        socket[PAUSED] = socket._paused = false;
        socket.parser?.resume();
        socket.resume();
      }
      // Not for a client that has gone (or was closed above).
      if (!res.destroyed && !socket.destroyed) listener(req, res);
    };
  };
}
