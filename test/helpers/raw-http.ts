import net from 'node:net';

// What a raw client of 127.0.0.1:`port` reads after sending `requests` as they are (pipelined,
// malformed, in the absolute form...), up to the server's end of the connection. `halfClose`:
// the client closes its sending side once the requests are sent (`nc -N`, shutdown(SHUT_WR)).
export function rawExchange(port: number, requests: string | Buffer, opts: { halfClose?: boolean } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => (opts.halfClose ? sock.end(requests) : sock.write(requests)));
    let text = '';
    sock.setEncoding('latin1');
    sock.on('data', (d) => (text += d));
    sock.on('end', () => resolve(text));
    sock.on('error', reject);
  });
}

// The status codes of the answers in a raw exchange, in order.
export const rawStatuses = (raw: string) => [...raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
