import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';

// A throwaway redis-server for fault tests: started by the test on a free port, killed,
// paused (SIGSTOP) and resumed at will. The machine's own Redis (6379) is never touched.

export const REDIS_SERVER_BIN = process.env.REDIS_SERVER_BIN ?? 'redis-server';

const children = new Set<ChildProcess>();
// Last resort: whatever happens to the test file, no redis-server outlives its worker.
process.once('exit', () => {
  for (const c of children) {
    try {
      c.kill('SIGCONT');
      c.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

// A port for a server a test starts next (a child process, a redis-server). Taken below the
// kernel's ephemeral range, where the system hands out ports to every listen(0) (the servers
// supertest starts in the other test workers) and to outgoing connections: a port from that
// range can be handed to another test between this check and the start, whose server then
// answers in place of the one the test started.
export async function freePort(): Promise<number> {
  const first = ephemeralRangeStart();
  for (let tries = 0; tries < 100 && first > 20_001; tries++) {
    const port = 20_000 + Math.floor(Math.random() * (first - 20_000));
    if (await canListen(port)) return port;
  }
  return listenOn(0);
}

function ephemeralRangeStart(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

async function canListen(port: number): Promise<boolean> {
  return listenOn(port).then(
    () => true,
    () => false,
  );
}

// Listens on `port` (0: any) on 127.0.0.1, closes, and gives the port it had.
function listenOn(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(port, '127.0.0.1', () => {
      const addr = srv.address();
      const got = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(got));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export interface RedisServer {
  port: number;
  url: string;
  pid: number;
  /** True while the process runs (also while paused). */
  readonly running: boolean;
  /** SIGKILL (after SIGCONT, so a paused server dies too) and wait for the exit. */
  stop(): Promise<void>;
  /** SIGSTOP: the server keeps its sockets open but answers nothing. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
}

// Starts `redis-server --port P --save "" --appendonly no --bind 127.0.0.1` and resolves
// once it accepts connections and says it is ready.
export async function startRedisServer(port?: number, timeoutMs = 30_000): Promise<RedisServer> {
  const p = port ?? (await freePort());
  const child = spawn(
    REDIS_SERVER_BIN,
    ['--port', String(p), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1', '--dir', tmpdir(), '--loglevel', 'warning'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  let output = '';
  child.stdout?.on('data', (d) => (output += String(d)));
  child.stderr?.on('data', (d) => (output += String(d)));
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      exited = true;
      children.delete(child);
      resolve();
    });
  });
  child.once('error', (err) => {
    output += `\nspawn error: ${err.message}`;
  });

  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) throw new Error(`redis-server on port ${p} exited at start-up:\n${output}`);
    if (await canConnect(p)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server on port ${p} did not start within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }

  return {
    port: p,
    url: `redis://127.0.0.1:${p}`,
    pid: child.pid!,
    get running() {
      return !exited;
    },
    async stop() {
      if (exited) return;
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exit;
    },
    pause() {
      if (exited) return;
      child.kill('SIGSTOP');
    },
    resume() {
      if (exited) return;
      child.kill('SIGCONT'); // harmless when not paused: always safe to call in finally

    },
  };
}
