import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/paths.js';
import { useTestContext } from '../helpers/context.js';
import { fixture } from '../ingest/helpers.js';
import { freePort } from '../helpers/redis-server.js';

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

// The CLI reading standard input ("-"), fed an endless CSV until it stops reading.
function ingestEndlessStdin(args: string[], env: Record<string, string>): Promise<Run & { fed: number }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/ingest.ts', ...args, '-'], { cwd: projectRoot, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    let fed = 0;
    let open = true;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.stdin.on('error', () => (open = false));
    const row = 'E1;Location;Appartement;Studio;1200;30;1;;Mamer;;;;;;01/11/2026 10:00;\n'.repeat(1000);
    const feed = () => {
      while (open && child.exitCode === null) {
        fed += row.length;
        if (!child.stdin.write(row)) return void child.stdin.once('drain', feed);
      }
    };
    child.stdin.write(`${readFileSync(fixture('moselle-immo.csv'), 'utf8').split('\n')[0]}\n`);
    feed();
    const timer = setTimeout(() => child.kill(), 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      open = false;
      resolve({ code: code ?? -1, stdout, stderr, fed });
    });
  });
}

// Each test spawns the CLI two or three times: a process start can take seconds on a busy machine.
describe('npm run ingest (the CLI)', { timeout: 120_000 }, () => {
  const t = useTestContext();
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ingest-cli-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
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
    // A control character in an argument is refused before anything is echoed or stored.
    const control = await ingest(['--source', 'moselle\u001b[2J', '--format', 'csv', fixture('moselle-immo.csv')], { DATABASE_URL: t.url });
    expect(control.code).toBe(2);
    expect(control.stderr).toMatch(/--source contains a control character \(U\+001B\); control characters cannot be used/);
    expect(control.stderr).not.toContain('\u001b');
  });

  // An outside probe: knex printed its own warning ("Acquire connection error", with a stack)
  // before the command's line, for a database whose connections were cut.
  it('exit 4 when the database cannot be reached, in words, without a stack', async () => {
    const url = new URL(t.url);
    url.port = String(await freePort()); // nothing listens there
    const refused = await ingest(['--source', 'moselle-immo', '--format', 'csv', fixture('moselle-immo.csv')], { DATABASE_URL: url.toString() });
    expect(refused.code, refused.stderr).toBe(4);
    expect(refused.stderr).toBe(`ingest: moselle-immo: import failed, nothing was changed: connect ECONNREFUSED 127.0.0.1:${url.port}\n`);
    // A server that takes the connection and drops it at once.
    const cutter = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => cutter.listen(0, '127.0.0.1', resolve));
    try {
      url.port = String((cutter.address() as net.AddressInfo).port);
      const cut = await ingest(['--source', 'moselle-immo', '--format', 'csv', fixture('moselle-immo.csv')], { DATABASE_URL: url.toString() });
      expect(cut.code, cut.stderr).toBe(4);
      expect(cut.stderr).toMatch(/^ingest: moselle-immo: import failed, nothing was changed: [^\n]+\n$/);
    } finally {
      await new Promise((resolve) => cutter.close(resolve));
    }
    // A server that takes the connection and never answers (the regression probe: knex's words
    // to developers, "Timeout acquiring a connection. The pool is probably full").
    const held: net.Socket[] = [];
    const silent = net.createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      url.port = String((silent.address() as net.AddressInfo).port);
      const mute = await ingest(['--source', 'moselle-immo', '--format', 'csv', fixture('moselle-immo.csv')], { DATABASE_URL: url.toString() });
      expect(mute.code, mute.stderr).toBe(4);
      expect(mute.stderr).toBe('ingest: moselle-immo: import failed, nothing was changed: the database did not answer: no connection was ready within 5 s\n');
    } finally {
      for (const s of held) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
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

  it('exit 5 past --max-bytes, for a file and for an endless standard input; /dev/zero stops at once', { timeout: 300_000 }, async () => {
    const before = await t.db('listings').count('* as n').first();
    const small = await ingest(['--source', 'capped', '--format', 'csv', fixture('moselle-immo.csv'), '--max-bytes', '500'], { DATABASE_URL: t.url });
    expect(small.code, small.stderr).toBe(5);
    expect(small.stderr).toMatch(/more than the limit of 500 bytes \(--max-bytes\); nothing of it was read.*Nothing was changed/);

    const endless = await ingestEndlessStdin(['--source', 'capped', '--format', 'csv', '--max-bytes', '2MB'], { DATABASE_URL: t.url });
    expect(endless.code, endless.stderr).toBe(5);
    expect(endless.stderr).toMatch(/larger than the limit of 2 MB/);

    // Stopped by what its first chunk shows (binary), not by reading up to the size limit.
    const zero = await ingest(['--source', 'capped', '--format', 'csv', '/dev/zero'], { DATABASE_URL: t.url });
    expect(zero.code).toBe(1);
    expect(zero.stderr).toMatch(/NUL bytes: it is binary/);
    expect(zero.stderr).not.toMatch(/--max-bytes|limit of/);

    const bad = await ingest(['--source', 'capped', '--format', 'csv', fixture('moselle-immo.csv'), '--max-bytes', 'lots'], { DATABASE_URL: t.url });
    expect(bad.code).toBe(2);
    expect(await t.db('listings').count('* as n').first()).toEqual(before);
  });

  it('exit 3 when a delta would withdraw more than half of the source', async () => {
    const json = readFileSync(fixture('capital-homes.json'), 'utf8');
    const full = path.join(dir, 'capital-full.json');
    writeFileSync(full, json);
    expect((await ingest(['--source', 'capital-homes', '--format', 'json', full], { DATABASE_URL: t.url })).code).toBe(0);
    const doc = JSON.parse(json) as { mode: string; listings: { status: string }[] };
    const delta = path.join(dir, 'capital-delete-all.json');
    writeFileSync(delta, JSON.stringify({ ...doc, mode: 'delta', listings: doc.listings.map((l) => ({ ...l, status: 'deleted' })) }));
    const r = await ingest(['--source', 'capital-homes', '--format', 'json', delta], { DATABASE_URL: t.url });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toMatch(/refused: this delta would withdraw 2 of the source's 2 live listings/);
  });
});
