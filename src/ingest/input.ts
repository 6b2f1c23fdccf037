import { open } from 'node:fs/promises';
import { FeedParseError, FeedTooLargeError } from './errors.js';

// A delivery: a file path (a regular file, a FIFO, /dev/stdin...), bytes or text in memory,
// or a stream of bytes (standard input, an HTTP body...).
export type FeedInput = { path: string } | Buffer | { text: string } | { stream: AsyncIterable<Uint8Array | string> };

// No agency sends half a gigabyte; a file that large is a mistake (or /dev/zero).
export const DEFAULT_MAX_INPUT_BYTES = 512 * 1024 * 1024;
// Pieces in which input already in memory is handed on, as a file would be read.
const CHUNK = 64 * 1024;

export interface InputChunks {
  chunks: AsyncIterable<Uint8Array | string>;
  // The size when it is known beforehand (a regular file, bytes in memory).
  totalBytes: number | null;
  // Bytes read so far.
  bytesRead(): number;
}

export function megabytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toLocaleString('en', { maximumFractionDigits: 1 })} MB` : `${n.toLocaleString('en')} bytes`;
}

function tooLarge(limit: number, size?: number): FeedTooLargeError {
  // A regular file is refused from its size, before a byte of it is read (an outside probe of
  // stop 61 read "reading stopped there" as a file read in part).
  const what = size === undefined
    ? `the input is larger than the limit of ${megabytes(limit)} (--max-bytes); reading stopped there`
    : `the file is ${megabytes(size)}, more than the limit of ${megabytes(limit)} (--max-bytes); nothing of it was read`;
  return new FeedTooLargeError(what, limit);
}

// The bytes of the delivery, never more than maxBytes of them: reading stops with a
// FeedTooLargeError as soon as the count goes past the limit, whatever the input (a
// regular file is refused from its size before reading; /dev/zero, a FIFO or a stream are
// counted as they come).
export async function openInput(input: FeedInput, maxBytes: number): Promise<InputChunks> {
  let read = 0;
  const counted = async function* (source: AsyncIterable<Uint8Array | string>): AsyncGenerator<Uint8Array | string> {
    for await (const chunk of source) {
      read += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
      if (read > maxBytes) throw tooLarge(maxBytes);
      yield chunk;
    }
  };
  const result = (chunks: AsyncIterable<Uint8Array | string>, totalBytes: number | null): InputChunks => ({
    chunks: counted(chunks),
    totalBytes,
    bytesRead: () => read,
  });

  if (Buffer.isBuffer(input)) {
    if (input.byteLength > maxBytes) throw tooLarge(maxBytes, input.byteLength);
    return result(pieces(input), input.byteLength);
  }
  if ('text' in input) {
    const size = Buffer.byteLength(input.text);
    if (size > maxBytes) throw tooLarge(maxBytes, size);
    return result(pieces(input.text), size);
  }
  if ('stream' in input) return result(input.stream, null);

  const file = input.path;
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (e) {
    throw unreadable(file, e);
  }
  let size: number | null = null;
  try {
    const st = await handle.stat();
    if (st.isDirectory()) throw new FeedParseError(`cannot read ${file}: it is a directory`);
    if (st.isFile()) size = st.size;
  } catch (e) {
    await handle.close();
    throw e instanceof FeedParseError ? e : unreadable(file, e);
  }
  if (size !== null && size > maxBytes) {
    await handle.close();
    throw tooLarge(maxBytes, size);
  }
  // The stream owns the handle from here and closes it when it ends or is destroyed (also
  // when the reader stops early: an async iterator's return() destroys the stream).
  const stream = handle.createReadStream({ highWaterMark: CHUNK, autoClose: true });
  const readAll = async function* (): AsyncGenerator<Uint8Array> {
    try {
      for await (const chunk of stream) yield chunk as Buffer;
    } catch (e) {
      throw unreadable(file, e);
    } finally {
      stream.destroy();
    }
  };
  return result(readAll(), size);
}

function unreadable(file: string, e: unknown): FeedParseError {
  const err = e as NodeJS.ErrnoException;
  const why = err.code === 'ENOENT' ? 'no such file' : err.code === 'EISDIR' ? 'it is a directory' : err.code === 'EACCES' ? 'permission denied' : err.message;
  return new FeedParseError(`cannot read ${file}: ${why}`);
}

async function* pieces(data: Buffer | string): AsyncGenerator<Uint8Array | string> {
  for (let i = 0; i < data.length; ) {
    let end = Math.min(i + CHUNK, data.length);
    // Text is cut between characters, never inside a surrogate pair (bytes are decoded as a
    // stream, so they may be cut anywhere).
    if (typeof data === 'string' && end < data.length && /[\ud800-\udbff]/.test(data[end - 1])) end--;
    yield data.slice(i, end);
    i = end;
  }
}
