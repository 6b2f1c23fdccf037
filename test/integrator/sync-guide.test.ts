import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportAll, memoryMirror, syncChanges } from '../../client/sync.js';
import type { ApiListing } from '../../src/http/schemas/responses.js';
import { importFeed } from '../../src/ingest/index.js';
import { projectRoot } from '../../src/lib/paths.js';
import { useTestContext } from '../helpers/context.js';
import { crawl, sorted } from '../helpers/mirror.js';
import { csvFeed, csvRow, gazetteer } from '../ingest/helpers.js';

// docs/sync-guide.md: each snippet is a file of client/, shown verbatim in the guide, and run
// here against a live server: a first load, then a daily run after an import.
const run = promisify(execFile);
const PLACES = ['Strassen', 'Bertrange', 'Mamer', 'Hesperange', 'Walferdange', 'Sandweiler', 'Contern', 'Steinsel'];

const t = useTestContext({ app: 'api', keys: ['starter', 'pro'] });
let base: string;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'sync-guide-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// Day 0: 30 listings, one of them a price outlier (flagged: hidden from Starter). Each later
// day withdraws some, changes two prices, adds new ones and fixes the outlier.
const day = async (n: number) => {
  const items = n === 0 ? Array.from({ length: 30 }, (_, k) => k + 1) : [...Array.from({ length: 28 - n }, (_, k) => k + 1), ...Array.from({ length: n + 1 }, (_, k) => 31 + k)];
  const rows = items.map((i) =>
    csvRow({
      ref: `G-${i}`, place: PLACES[i % 8], area: String(30 + i * 2), bedrooms: '1',
      price: String(n === 0 && i === 5 ? 25000 : n > 0 && (i === n + 1 || i === n + 2) ? 1999 + n : 1400 + i * 37),
    }),
  );
  await importFeed(t.db, { source: 'guide', format: 'csv', input: { text: csvFeed(rows) }, now: new Date(Date.UTC(2026, 10, 1 + n, 8)), gazetteer: gazetteer() });
};

const hasTool = (cmd: string, args: string[]) => {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const pythonRequests = hasTool('python3', ['-c', 'import requests']);
const curlJq = hasTool('curl', ['--version']) && hasTool('jq', ['--version']);

beforeAll(async () => {
  ({ base } = await t.listen());
  await day(0);
});

const expectEqualsCrawl = async (key: string, listings: ApiListing[]) => {
  expect(listings.length).toBeGreaterThan(0);
  expect([...listings].sort((a, b) => (a.id < b.id ? -1 : 1))).toEqual(sorted(await crawl(t.app, key)));
};

describe('docs/sync-guide.md', () => {
  it('shows client/sync.sh, client/sync.ts and client/sync.py verbatim', () => {
    const guide = readFileSync(path.join(projectRoot, 'docs/sync-guide.md'), 'utf8');
    for (const [file, lang] of [['client/sync.sh', 'bash'], ['client/sync.ts', 'ts'], ['client/sync.py', 'python']]) {
      const at = guide.indexOf(`\`${file}\`, verbatim`);
      expect(at, file).toBeGreaterThan(0);
      const open = guide.indexOf('```' + lang + '\n', at);
      const close = guide.indexOf('\n```\n', open);
      expect(guide.slice(open + lang.length + 4, close), file).toBe(readFileSync(path.join(projectRoot, file), 'utf8').trimEnd());
    }
  });

  it('TypeScript: a Starter key walks /changes, a Pro key exports; a daily run brings both up to date', async () => {
    const starter = memoryMirror();
    const first = await syncChanges(base, t.keys.starter, starter);
    expect(first.pages).toBe(1);
    await expectEqualsCrawl(t.keys.starter, [...starter.listings.values()]);
    expect(starter.listings.size).toBe(29);

    const pro = memoryMirror();
    expect(await exportAll(base, t.keys.pro, pro)).toBe(30);
    expect((await syncChanges(base, t.keys.pro, pro)).changes).toBe(0);
    await expectEqualsCrawl(t.keys.pro, [...pro.listings.values()]);

    await day(1);
    await syncChanges(base, t.keys.starter, starter);
    await syncChanges(base, t.keys.pro, pro);
    await expectEqualsCrawl(t.keys.starter, [...starter.listings.values()]);
    await expectEqualsCrawl(t.keys.pro, [...pro.listings.values()]);
    expect(pro.listings.size).toBe(29);
    await expect(exportAll(base, t.keys.starter, memoryMirror())).rejects.toThrow(/^403 forbidden_for_tier: /);
    // What a run cut short before its first cursor left (here a listing gone since) is dropped:
    // without a cursor, the mirror is loaded from scratch.
    for (const load of [(m: ReturnType<typeof memoryMirror>) => exportAll(base, t.keys.pro, m), (m: ReturnType<typeof memoryMirror>) => syncChanges(base, t.keys.pro, m)]) {
      const left = memoryMirror();
      left.listings.set('lst_00000000000000000000', { ...[...pro.listings.values()][0], id: 'lst_00000000000000000000' });
      await load(left);
      await expectEqualsCrawl(t.keys.pro, [...left.listings.values()]);
    }
  });
});

describe.skipIf(!curlJq)('docs/sync-guide.md, curl and jq (skipped when curl or jq is missing)', () => {
  const readDir = (dir: string) => readdirSync(path.join(dir, 'listings')).map((f) => JSON.parse(readFileSync(path.join(dir, 'listings', f), 'utf8')) as ApiListing);
  it('client/sync.sh mirrors the feed, with and without the export, and goes on from its cursor', async () => {
    const script = path.join(projectRoot, 'client/sync.sh');
    for (const [tier, exportFirst] of [['starter', '0'], ['pro', '1']] as const) {
      const dir = path.join(tmp, `sh-${tier}`);
      const env = { ...process.env, BASE: base, KEY: t.keys[tier], EXPORT: exportFirst };
      await run('bash', [script, dir], { env });
      await expectEqualsCrawl(t.keys[tier], readDir(dir));
      const cursor = readFileSync(path.join(dir, 'cursor'), 'utf8');
      await run('bash', [script, dir], { env });
      expect(readFileSync(path.join(dir, 'cursor'), 'utf8'), 'nothing new: the same cursor').toBe(cursor);
    }
    await day(2);
    for (const tier of ['starter', 'pro'] as const) {
      const dir = path.join(tmp, `sh-${tier}`);
      await run('bash', [script, dir], { env: { ...process.env, BASE: base, KEY: t.keys[tier] } });
      await expectEqualsCrawl(t.keys[tier], readDir(dir));
    }
    // An outside probe: an export cut short left its files and no cursor; run again, the mirror
    // kept listings withdrawn meanwhile for good. Without a cursor it is loaded from scratch.
    const cut = path.join(tmp, 'sh-cut');
    mkdirSync(path.join(cut, 'listings'), { recursive: true });
    writeFileSync(path.join(cut, 'listings', 'lst_00000000000000000000.json'), '{"id":"lst_00000000000000000000"}\n');
    await run('bash', [script, cut], { env: { ...process.env, BASE: base, KEY: t.keys.pro, EXPORT: '1' } });
    await expectEqualsCrawl(t.keys.pro, readDir(cut));
  });
});

if (!pythonRequests) console.warn('docs/sync-guide.md: the Python snippet is not run: python3 with the requests package is not available');
describe.skipIf(!pythonRequests)('docs/sync-guide.md, Python (skipped when python3 has no requests)', () => {
  it('client/sync.py mirrors the feed into SQLite, with and without the export', async () => {
    const script = path.join(projectRoot, 'client/sync.py');
    const check = async (tier: 'starter' | 'pro', exportFirst: string) => {
      const db = path.join(tmp, `py-${tier}.db`);
      await run('python3', [script, db], { env: { ...process.env, BASE: base, KEY: t.keys[tier], EXPORT: exportFirst } });
      const { stdout } = await run('python3', [script, db, '--dump'], { maxBuffer: 64 * 1024 * 1024 });
      await expectEqualsCrawl(t.keys[tier], stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as ApiListing));
    };
    await check('starter', '0');
    await check('pro', '1');
    await day(3);
    await check('starter', '0');
    await check('pro', '0');
  });

  // An outside probe: after a change of tier, a new walk (the cursor deleted) left the other
  // view's listings in the mirror; sync.sh and sync.ts empty it when no cursor is stored.
  it('client/sync.py empties the mirror when no cursor is stored', async () => {
    const script = path.join(projectRoot, 'client/sync.py');
    for (const exportFirst of ['0', '1']) {
      const db = path.join(tmp, `py-left-${exportFirst}.db`);
      await run('python3', [script, db], { env: { ...process.env, BASE: base, KEY: t.keys.pro, EXPORT: exportFirst } });
      // A listing of another view, left behind; no cursor.
      const sql = `import sqlite3; db = sqlite3.connect(${JSON.stringify(db)}); db.execute("INSERT INTO listings VALUES ('lst_left_behind', '{}')"); db.execute("DELETE FROM state"); db.commit()`;
      await run('python3', ['-c', sql]);
      await run('python3', [script, db], { env: { ...process.env, BASE: base, KEY: t.keys.pro, EXPORT: exportFirst } });
      const { stdout } = await run('python3', [script, db, '--dump'], { maxBuffer: 64 * 1024 * 1024 });
      await expectEqualsCrawl(t.keys.pro, stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as ApiListing));
    }
  });
});
