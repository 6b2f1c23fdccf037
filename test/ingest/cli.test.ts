import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/paths.js';
import { createTestDb, type TestDb } from '../helpers/pg.js';
import { fixture } from './helpers.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function ingest(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  return new Promise((resolve) => {
    // node --import tsx is what `npm run ingest` runs, without npx's own start-up (seconds on a busy machine).
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/ingest.ts', ...args], { cwd: projectRoot, env: { ...base, ...env }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

const lastJson = (out: string) => JSON.parse(out.trim().split('\n').at(-1)!);

// Each test spawns the CLI two or three times: a process start can take seconds on a busy machine.
describe('npm run ingest (the CLI)', { timeout: 120_000 }, () => {
  let t: TestDb;
  let dir: string;
  beforeAll(async () => {
    t = await createTestDb();
    dir = mkdtempSync(path.join(tmpdir(), 'ingest-cli-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t?.drop();
  });

  it('exit 0 with a report; --json prints it as one JSON object on the last line; --rejects writes ndjson', async () => {
    const rejects = path.join(dir, 'rejects.ndjson');
    const r = await ingest(['--source', 'moselle-immo', '--format', 'csv', fixture('moselle-immo.csv'), '--json', '--rejects', rejects], { DATABASE_URL: t.url });
    expect(r.code, r.stderr).toBe(0);
    const report = lastJson(r.stdout);
    expect(report).toMatchObject({ source: 'moselle-immo', status: 'ok', read: 5, created: 4, updated: 0, unchanged: 0, reactivated: 0, withdrawn: 0, merged: 0, flagged: 0, rejected: 1 });
    const lines = readFileSync(rejects, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toEqual([{ external_id: 'MI-5541', position: 'line 6', reason: 'price in CHF: only EUR is accepted' }]);

    const plain = await ingest(['--source', 'moselle-immo', '--format', 'csv', fixture('moselle-immo.csv')], { DATABASE_URL: t.url });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/unchanged\s+4/);
    expect(plain.stdout).toMatch(/line 6 MI-5541: price in CHF/);
  });

  it('exit 1 when the file cannot be read or parsed, with a clear message', async () => {
    const bad = path.join(dir, 'truncated.xml');
    writeFileSync(bad, readFileSync(fixture('immo-nord.openimmo.xml'), 'utf8').slice(0, 1500));
    const r = await ingest(['--source', 'immo-nord', '--format', 'openimmo', bad], { DATABASE_URL: t.url });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not well-formed.*Nothing was changed/);
  });

  it('exit 2 on a usage error, and when DATABASE_URL is not set', async () => {
    // Sequential: parallel spawns only fight over the two cores.
    const noSource = await ingest(['--format', 'csv', fixture('moselle-immo.csv')], { DATABASE_URL: t.url });
    expect(noSource.code).toBe(2);
    expect(noSource.stderr).toMatch(/--source is required[\s\S]*Usage:/);
    const unknownOption = await ingest(['--source', 'x', '--format', 'xls', '--bogus', 'f.xls'], { DATABASE_URL: t.url });
    expect(unknownOption.code).toBe(2);
    const noDb = await ingest(['--source', 'moselle-immo', '--format', 'csv', fixture('moselle-immo.csv')], {});
    expect(noDb.code).toBe(2);
    expect(noDb.stderr).toMatch(/DATABASE_URL is not set/);
  });

  it('exit 3 when the withdrawal guard refuses a snapshot; --allow-mass-withdrawal overrides it', async () => {
    const empty = path.join(dir, 'empty.json');
    writeFileSync(empty, JSON.stringify({ agency: 'Moselle', mode: 'full', listings: [] }));
    const csvHeaderOnly = path.join(dir, 'header-only.csv');
    writeFileSync(csvHeaderOnly, readFileSync(fixture('moselle-immo.csv'), 'utf8').split('\n')[0] + '\n');
    const r = await ingest(['--source', 'moselle-immo', '--format', 'csv', csvHeaderOnly, '--json'], { DATABASE_URL: t.url });
    expect(r.code).toBe(3);
    expect(lastJson(r.stdout)).toMatchObject({ status: 'refused', refusal: { live: 4, would_withdraw: 4 } });
    expect(await t.db('listings').where({ source: 'moselle-immo', status: 'active' }).count('* as n').first()).toEqual({ n: 4 });
    const forced = await ingest(['--source', 'moselle-immo', '--format', 'csv', csvHeaderOnly, '--allow-mass-withdrawal', '--json'], { DATABASE_URL: t.url });
    expect(forced.code).toBe(0);
    expect(lastJson(forced.stdout)).toMatchObject({ status: 'ok', withdrawn: 4 });
  });
});
