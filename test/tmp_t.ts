import { readFileSync } from 'node:fs';
import { parseCsvFeed } from '../src/ingest/adapters/index.js';
const feed = await parseCsvFeed(readFileSync(process.argv[2]));
console.log(feed.records.map((r: any) => [r.externalId, r.lng, r.images]), feed.rejects);
