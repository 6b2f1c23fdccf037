// A promise's outcome, or a TimeoutError once `ms` have passed; the timer is cleared either way.
// The timeout waits for the loop's sockets to be read once more (setImmediate runs after the
// loop's I/O): after the event loop itself was held up that long, an answer waiting in a socket
// wins (the database listener's heartbeat, src/db/listener.ts).
export class TimeoutError extends Error {}

export function within<T>(p: Promise<T>, ms: number, message = `timed out after ${ms} ms`): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => setImmediate(() => reject(new TimeoutError(message))), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
