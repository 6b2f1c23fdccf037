// The whole file could not be read or parsed: nothing is imported (CLI exit code 1).
export class FeedParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeedParseError';
  }
}

// Bad arguments to importFeed or the CLI (CLI exit code 2).
export class IngestUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IngestUsageError';
  }
}

// A field this long is not a listing but a corrupt or hostile file.
export const MAX_FIELD_CHARS = 1_000_000;

export function tooLong(what: string, where: string): FeedParseError {
  return new FeedParseError(`${what} at ${where} is longer than ${MAX_FIELD_CHARS.toLocaleString('en')} characters: the file is corrupt or not a feed`);
}
