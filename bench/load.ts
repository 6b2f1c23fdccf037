// The benchmark's load generator: closed-loop HTTP/1.1 keep-alive connections over raw sockets,
// one request in flight per connection. It reads each response's status line and framing
// (Content-Length, or chunked) and skips the body without decoding it, so that the client's
// cost per response stays small beside the server's on a 2-core machine (autocannon turned
// every body into a string with a JavaScript HTTP parser: at 5,000-7,000 responses a second
// it took a whole core, and the server then waited for it).
import net from 'node:net';

export interface LoadRequest<C> {
  path: string;
  headers: Record<string, string>;
  ctx: C;
}

export interface LoadOptions<C> {
  host: string;
  port: number;
  connections: number;
  seconds: number;
  timeoutSeconds: number;
  next: () => LoadRequest<C>;
  // Each response: its status, its latency (from the request's first byte written to the
  // response's last byte read) in ms, and the request's context.
  onResponse: (status: number, ms: number, ctx: C) => void;
}

export interface LoadResult {
  responses: number;
  errors: number;
  timeouts: number;
}

const CRLF2 = Buffer.from('\r\n\r\n');

// Parses one response at a time from the bytes of a connection.
class ResponseReader {
  private buf: Buffer = Buffer.alloc(0);
  private status = 0;
  // Body bytes still to skip (Content-Length), or -1 while reading chunked framing.
  private remaining = -2; // -2: reading the head
  private chunked = false;
  close = false;

  // Feeds bytes; returns the statuses of the responses completed by them.
  feed(data: Buffer): number[] {
    const done: number[] = [];
    this.buf = this.buf.length ? Buffer.concat([this.buf, data]) : data;
    for (;;) {
      if (this.remaining === -2) {
        const end = this.buf.indexOf(CRLF2);
        if (end < 0) return done;
        const head = this.buf.subarray(0, end).toString('latin1');
        this.buf = this.buf.subarray(end + 4);
        this.status = Number(head.slice(9, 12));
        const lower = head.toLowerCase();
        const len = /\r\ncontent-length:\s*(\d+)/.exec(lower);
        this.chunked = /\r\ntransfer-encoding:[^\r]*chunked/.test(lower);
        this.close = /\r\nconnection:\s*close/.test(lower);
        this.remaining = this.chunked ? -1 : len ? Number(len[1]) : 0;
      }
      if (!this.chunked) {
        const take = Math.min(this.remaining, this.buf.length);
        this.buf = this.buf.subarray(take);
        this.remaining -= take;
        if (this.remaining > 0) return done;
      } else {
        // A chunk: size line, data, CRLF; the last one is "0" and an (empty) trailer.
        if (this.remaining > 0) {
          const take = Math.min(this.remaining, this.buf.length);
          this.buf = this.buf.subarray(take);
          this.remaining -= take;
          if (this.remaining > 0) return done;
          this.remaining = -1;
          continue;
        }
        const eol = this.buf.indexOf('\r\n');
        if (eol < 0) return done;
        const size = parseInt(this.buf.subarray(0, eol).toString('latin1'), 16);
        if (size > 0) {
          this.buf = this.buf.subarray(eol + 2);
          this.remaining = size + 2; // the data and its CRLF
          continue;
        }
        const end = this.buf.indexOf(CRLF2, eol);
        if (end < 0) return done;
        this.buf = this.buf.subarray(end + 4);
      }
      done.push(this.status);
      this.remaining = -2;
      this.chunked = false;
    }
  }
}

export function load<C>(o: LoadOptions<C>): Promise<LoadResult> {
  const result: LoadResult = { responses: 0, errors: 0, timeouts: 0 };
  const endAt = performance.now() + o.seconds * 1000;
  const timeoutMs = o.timeoutSeconds * 1000;
  let open = o.connections;
  // Requests in flight, for one sweep a second that ends those past the timeout (a timer per
  // request costs more than the rest of the client's work on it).
  const inFlight = new Set<{ sentAt: number; socket: net.Socket }>();
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const c of inFlight) if (now - c.sentAt > timeoutMs) {
      result.timeouts++;
      inFlight.delete(c);
      c.socket.destroy();
    }
  }, 250);
  // The request's bytes, by path and headers (the fixed scenarios send one request again and again).
  const texts = new Map<string, string>();
  const textOf = (r: LoadRequest<C>): string => {
    const id = `${r.path}\n${r.headers.authorization ?? ''}\n${r.headers['accept-encoding'] ?? ''}`;
    let text = texts.get(id);
    if (text === undefined) {
      text = `GET ${r.path} HTTP/1.1\r\nHost: ${o.host}:${o.port}\r\n`;
      for (const [k, v] of Object.entries(r.headers)) text += `${k}: ${v}\r\n`;
      text += '\r\n';
      if (texts.size > 10_000) texts.clear();
      texts.set(id, text);
    }
    return text;
  };
  return new Promise((resolve) => {
    const connection = () => {
      let reader = new ResponseReader();
      let current: LoadRequest<C> | null = null;
      const state = { sentAt: 0, socket: connect() };
      function connect(): net.Socket {
        const s = net.connect({ host: o.host, port: o.port, noDelay: true });
        s.on('connect', send);
        s.on('data', onData);
        s.on('error', () => {
          result.errors++;
        });
        s.on('close', () => {
          inFlight.delete(state);
          if (performance.now() >= endAt) return finish();
          reader = new ResponseReader();
          state.socket = connect();
        });
        return s;
      }
      function send(): void {
        if (performance.now() >= endAt) return void state.socket.end();
        current = o.next();
        state.sentAt = performance.now();
        inFlight.add(state);
        state.socket.write(textOf(current));
      }
      function onData(data: Buffer): void {
        for (const status of reader.feed(data)) {
          inFlight.delete(state);
          result.responses++;
          o.onResponse(status, performance.now() - state.sentAt, current!.ctx);
          if (reader.close) return void state.socket.end();
          send();
        }
      }
      let finished = false;
      function finish(): void {
        if (finished) return;
        finished = true;
        if (--open === 0) {
          clearInterval(sweep);
          resolve(result);
        }
      }
    };
    for (let i = 0; i < o.connections; i++) connection();
  });
}
