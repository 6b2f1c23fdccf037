import type { FeedReader } from './common.js';
import { readCsvFeed } from './csv.js';
import { readJsonFeed } from './json.js';
import { readOpenImmo } from './openimmo.js';

export type FileFormat = 'openimmo' | 'csv' | 'json';

// The streaming readers of the file formats: text in, records out as they are read.
export const FILE_READERS: Record<FileFormat, FeedReader> = {
  openimmo: readOpenImmo,
  csv: readCsvFeed,
  json: readJsonFeed,
};

export { collectFeed, decodeText, type FeedReader } from './common.js';
export { parseCsvFeed } from './csv.js';
export { parseJsonFeed } from './json.js';
export { parseOpenImmo } from './openimmo.js';
export { readNativePosts } from './native.js';
