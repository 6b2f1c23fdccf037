// A set written elsewhere (an outside session's generator, run on its own): a folder with one
// feed file per agency (`<source>.<anything>`) and a truth.json of
// { agencies: [{ source, format }], listings: [{ source, external_id, pid }] }.
// `--sets dir:FOLDER` (run.ts) and `--set dir:FOLDER` (diagnose.ts).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FeedFile, FeedFormat } from './feed-writers.js';

export function folderSet(dir: string): { feeds: FeedFile[]; truth: Map<string, string> } {
  const t = JSON.parse(readFileSync(path.join(dir, 'truth.json'), 'utf8')) as {
    agencies: { source: string; format: FeedFormat }[];
    listings: { source: string; external_id: string; pid: string }[];
  };
  const files = readdirSync(dir);
  const feeds = t.agencies.map(({ source, format }) => {
    const fileName = files.find((f) => f.startsWith(`${source}.`));
    if (!fileName) throw new Error(`${dir}: no feed file for ${source}`);
    return { source, format, fileName, text: readFileSync(path.join(dir, fileName), 'utf8'), records: t.listings.filter((l) => l.source === source).length };
  });
  return { feeds, truth: new Map(t.listings.map((l) => [`${l.source}\u0000${l.external_id}`, l.pid])) };
}
