import { once } from 'node:events';
import type { Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectionBound, createHttpServer, openFilesLimit } from '../../src/http/http-server.js';

// An outside probe (stop 42): one client holding 20,000 idle connections took the server to its
// limit of open files, and no one else was answered. One client address may hold so many
// connections to a process (MAX_CONNECTIONS_PER_CLIENT), and the process 80 % of its limit of
// open files (src/http/http-server.ts).

const servers: Server[] = [];
const sockets: net.Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function serve(perClient: number): Promise<number> {
  const server = createHttpServer((_req, res) => res.end('ok'), { perClient });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

// Opens a connection from `from` (any address of 127.0.0.0/8 is this machine's) and says what
// becomes of a request on it: its status line, or 'closed' when the server closes it first.
function connect(port: number, from: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ port, host: '127.0.0.1', localAddress: from }, () => resolve(s));
    s.on('error', reject);
    sockets.push(s);
  });
}
function ask(s: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    s.setEncoding('latin1');
    s.on('data', (d) => (got += d));
    s.on('close', () => resolve(got.split('\r\n')[0] || 'closed'));
    s.on('error', () => undefined);
    s.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  });
}

describe('connections a client may hold', () => {
  it('past MAX_CONNECTIONS_PER_CLIENT, a client\'s further connections are closed at once; other clients are served, and a freed place is taken again', async () => {
    const port = await serve(3);
    const idle = await Promise.all([1, 2, 3].map(() => connect(port, '127.0.0.1')));
    expect(await ask(await connect(port, '127.0.0.1'))).toBe('closed');
    expect(await ask(await connect(port, '127.0.0.2'))).toBe('HTTP/1.1 200 OK');
    idle[0].destroy();
    await new Promise((r) => setTimeout(r, 100));
    expect(await ask(await connect(port, '127.0.0.1'))).toBe('HTTP/1.1 200 OK');
  });

  it('0: no bound per client; the process keeps a fifth of its open files for the rest', async () => {
    const port = await serve(0);
    const many = await Promise.all(Array.from({ length: 20 }, () => connect(port, '127.0.0.1')));
    expect(await ask(many[19])).toBe('HTTP/1.1 200 OK');
    const files = openFilesLimit();
    expect(files).toBeGreaterThan(0);
    expect(connectionBound(files!)).toBe(Math.max(64, Math.floor(files! * 0.8)));
  });
});
