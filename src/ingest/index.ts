// The importer as a library: the CLI, the demo seed and tests call importFeed.
export { importFeed, type ImportOptions } from './import-feed.js';
export { CommitOutcomeUnknownError, FeedParseError, IngestUsageError } from './errors.js';
export { endStaleCheck, refreshStaleFlags, refreshStaleUnlessImporting, refreshPriceOutliers } from './flags.js';
export { formatReport } from './report.js';
export type { FeedFormat, FeedMode, ImportCounts, ImportReport, ProgressEvent, Reject } from './types.js';
export { FeedTooLargeError } from './errors.js';
export { DEFAULT_MAX_INPUT_BYTES, type FeedInput } from './input.js';
export { recoverInterruptedImports } from '../repositories/import-runs.js';
