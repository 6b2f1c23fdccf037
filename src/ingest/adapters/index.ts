import type { ParsedFeed } from '../types.js';
import { parseCsvFeed } from './csv.js';
import { parseJsonFeed } from './json.js';
import { parseOpenImmo } from './openimmo.js';

export type FileFormat = 'openimmo' | 'csv' | 'json';

export const FILE_ADAPTERS: Record<FileFormat, (input: Buffer | string) => ParsedFeed> = {
  openimmo: parseOpenImmo,
  csv: parseCsvFeed,
  json: parseJsonFeed,
};

export { parseCsvFeed, parseJsonFeed, parseOpenImmo };
export { readNativePosts } from './native.js';
