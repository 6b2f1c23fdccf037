import { connect } from 'node:net';

// Every command the Redis server at `url` runs, through MONITOR on a socket of its own.
// Not ioredis's monitor(): it switches to monitoring mode in a promise callback after MONITOR's
// "+OK", so monitor lines that arrive in the same read as the "+OK" (a server busy with other
// clients' commands) are taken for replies to no command: "Command queue state error", and
// the test failed (reproduced with redis-benchmark running beside it).
export async function monitorRedis(url: string, onCommand: (args: string[]) => void): Promise<{ close(): void }> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname || '127.0.0.1', port: Number(port || 6379) });
  socket.setEncoding('utf8');
  let buffered = '';
  let started = false;
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let end: number;
      while ((end = buffered.indexOf('\r\n')) !== -1) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (!started) {
          if (line !== '+OK') return reject(new Error(`MONITOR answered ${line}`));
          started = true;
          resolve();
        } else if (line.startsWith('+')) {
          // +1795435651.483718 [0 127.0.0.1:43388] "EVALSHA" "81db…" "1" "key"
          const first = line.indexOf('"');
          if (first !== -1) onCommand(line.slice(first + 1, -1).split('" "').map((a) => a.replace(/\\(["\\])/g, '$1')));
        }
      }
    });
    socket.write('MONITOR\r\n');
  });
  socket.on('error', () => {}); // closing: nothing is counted any more
  return { close: () => socket.destroy() };
}
