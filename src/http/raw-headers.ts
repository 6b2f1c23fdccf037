// How many times a header is sent, from the request's raw headers (Node keeps one value of
// Host and of Authorization and drops the others; a proxy in front may have read another).
// A walk of the raw list, without Node's `headersDistinct` object: this runs on every request.
export function headerCount(rawHeaders: readonly string[], lowerName: string): number {
  let n = 0;
  for (let k = 0; k < rawHeaders.length; k += 2) {
    const name = rawHeaders[k];
    if (name.length === lowerName.length && name.toLowerCase() === lowerName) n++;
  }
  return n;
}
