// A promise's outcome, or a TimeoutError once `ms` have passed; the timer is cleared either way.
export class TimeoutError extends Error {}

export function within<T>(p: Promise<T>, ms: number, message = `timed out after ${ms} ms`): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(message)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
