// The whole file could not be read or parsed: nothing is imported (CLI exit code 1).
export class FeedParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeedParseError';
  }
}

// The delivery is larger than the input limit (importFeed's maxBytes, the CLI's
// --max-bytes): reading stopped there and nothing is imported (CLI exit code 5). A
// FeedParseError too, for callers that only ask whether the file could be imported.
export class FeedTooLargeError extends FeedParseError {
  constructor(
    message: string,
    readonly limit: number,
  ) {
    super(message);
    this.name = 'FeedTooLargeError';
  }
}

// Bad arguments to importFeed or the CLI (CLI exit code 2).
export class IngestUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IngestUsageError';
  }
}

// The import sent its COMMIT, its connection dropped before the answer, and the database could
// not be asked whether the commit applied (CLI exit code 6): the run's row (import_runs, runId)
// tells once it answers. Importing the same delivery again is safe either way.
export class CommitOutcomeUnknownError extends Error {
  constructor(
    message: string,
    readonly runId: number,
    readonly cause: unknown,
  ) {
    super(message);
    this.name = 'CommitOutcomeUnknownError';
  }
}

// A field this long is not a listing but a corrupt or hostile file.
export const MAX_FIELD_CHARS = 1_000_000;
// Nor is a record (or anything between two records) this long: what a streaming parser
// holds at any time is bounded by it.
export const MAX_RECORD_CHARS = 16_000_000;
// Nor is a record nested this deeply.
export const MAX_DEPTH = 64;
// Nor does a record hold this many values (JSON: keys, strings, numbers, objects, arrays...;
// XML: elements and attributes): a listing holds a few hundred. Within MAX_RECORD_CHARS, a
// record of empty objects or elements (`"k1":{}`, `<x1/>`) is millions of them, each an object
// the parser builds: an outside probe of stop 59 had three such JSON records of 15.8 M
// characters take the importer to 2 GB.
export const MAX_RECORD_VALUES = 100_000;
// The longest external id a listing keeps (longer: the record is rejected, normalize.ts).
export const MAX_EXTERNAL_ID = 200;

export function tooLong(what: string, where: string): FeedParseError {
  return new FeedParseError(`${what} at ${where} is longer than ${MAX_FIELD_CHARS.toLocaleString('en')} characters: the file is corrupt or not a feed`);
}
