import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importFeed, recoverInterruptedImports } from '../../src/ingest/index.js';
import { LOCK_RUN, LOCK_WRITE } from '../../src/db/advisory-locks.js';
import { projectRoot } from '../../src/lib/paths.js';
import { useTestContext } from '../helpers/context.js';
import { CSV_HEADER_LINE, csvFeed, csvRow, gazetteer } from './helpers.js';

// An import in a process of its own (the CLI), reading a FIFO the test writes: it stays in
// the middle of its import for as long as the test wants, and can be killed there.
interface Child {
  proc: ChildProcess;
  exited: Promise<number | null>;
  stderr: () => string;
}

function ingestFromFifo(url: string, source: string, fifo: string): Child {
  const env = { ...process.env, DATABASE_URL: url };
  // Node itself (tsx as its loader), not npx: the signal must reach the importing process.
  const args = ['--import', 'tsx', 'src/cli/ingest.ts', '--source', source, '--format', 'csv', fifo];
  const proc = spawn(process.execPath, args, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (d) => (err += d));
  proc.stdout!.resume();
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, exited, stderr: () => err };
}

async function waitFor<T>(probe: () => Promise<T | undefined | null | false>, what: string, timeoutMs = 90_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const PLACES = ['Strassen', 'Bertrange', 'Mamer', 'Hesperange'];
const rows = (prefix: string, from: number, n: number) =>
  Array.from({ length: n }, (_, k) => {
    const i = from + k;
    return `${csvRow({ ref: `${prefix}${i}`, place: PLACES[i % 4], price: String(1200 + i), area: String(40 + i), bedrooms: '1' })}\n`;
  }).join('');

describe('an import whose process dies is marked failed, not left running', () => {
  const t = useTestContext();
  let dir: string;
  const children: Child[] = [];
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'ingest-kill-'));
  });
  afterAll(async () => {
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const runningRun = (source: string) => () => t.db('import_runs').where({ source, status: 'running' }).first();
  // Whether some session holds the run's advisory lock (src/repositories/import-runs.ts: LOCK_RUN, id)
  // in this test's database: advisory locks are per database, and pg_locks lists the server's
  // (an import into another database, with a run of the same id, holds a lock of the same key).
  const runLockHeld = async (id: number) => {
    const { rows } = await t.db.raw(
      `SELECT 1 FROM pg_locks
        WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND classid = ? AND objid = ? AND objsubid = 2 AND granted`,
      [LOCK_RUN, id % 2147483647],
    );
    return rows.length > 0;
  };

  it('killed with SIGKILL mid-import: the next import marks its run failed, and nothing of it was written', { timeout: 240_000 }, async () => {
    const fifo = path.join(dir, 'killed.csv');
    execFileSync('mkfifo', [fifo]);
    const child = ingestFromFifo(t.url, 'doomed', fifo);
    children.push(child);
    // Opening the FIFO for writing waits for the child to open it for reading.
    const w = await open(fifo, 'w');
    await w.write(`${CSV_HEADER_LINE}\n${rows('D', 0, 500)}`);
    const run = await waitFor(runningRun('doomed'), 'the child to record its run');
    child.proc.kill('SIGKILL');
    await child.exited;
    await w.close().catch(() => {});
    // PostgreSQL frees the dead import's lock once its backend notices the connection is
    // gone, which on a busy machine comes some time after the process's exit: until then the
    // run rightly looks alive. Wait for that, not for a length of time.
    await waitFor(async () => !(await runLockHeld(run.id)), "PostgreSQL to release the dead import's lock");

    // Dead, and still 'running' until someone looks.
    expect((await t.db('import_runs').where({ id: run.id }).first()).status).toBe('running');
    const r = await importFeed(t.db, { source: 'survivor', format: 'csv', input: { text: csvFeed([rows('S', 0, 1).trim()]) }, gazetteer: gazetteer() });
    expect(r.status).toBe('ok');
    const after = await t.db('import_runs').where({ id: run.id }).first();
    expect(after.status).toBe('failed');
    expect(after.error).toMatch(/^interrupted: the importing process ended without finishing/);
    expect(after.finished_at).toBeInstanceOf(Date);
    expect(await t.db('listings').where({ source: 'doomed' }).first()).toBeUndefined();
    expect(await t.db('sources').where({ name: 'doomed' }).first()).toBeUndefined();
  });

  it('an import that is alive is never marked, whoever looks; it finishes normally', { timeout: 240_000 }, async () => {
    const fifo = path.join(dir, 'alive.csv');
    execFileSync('mkfifo', [fifo]);
    const child = ingestFromFifo(t.url, 'alive', fifo);
    children.push(child);
    const w = await open(fifo, 'w');
    await w.write(`${CSV_HEADER_LINE}\n${rows('A', 0, 200)}`);
    const run = await waitFor(runningRun('alive'), 'the child to record its run');
    expect(await runLockHeld(run.id), 'the live import holds its run lock').toBe(true);

    // Another import, and the server's start-up check, while it runs.
    const other = await importFeed(t.db, { source: 'bystander', format: 'csv', input: { text: csvFeed([rows('B', 0, 1).trim()]) }, gazetteer: gazetteer() });
    expect(other.status).toBe('ok');
    expect(await recoverInterruptedImports(t.db)).toBe(0);
    expect((await t.db('import_runs').where({ id: run.id }).first()).status).toBe('running');

    await w.write(rows('A', 200, 100));
    await w.close();
    expect(await child.exited, child.stderr()).toBe(0);
    const done = await t.db('import_runs').where({ id: run.id }).first();
    expect([done.status, done.counts.read, done.counts.created]).toEqual(['ok', 300, 300]);
  });

  // The regression probe: a dead import's run stayed 'running' after the import that waited for
  // its turn had finished; it had looked for dead runs only at its start, before the wait.
  it('an import that waited for the turn of one that then died marks its run, not the import after it', { timeout: 120_000 }, async () => {
    const [{ id }] = await t.db('import_runs').insert({ source: 'dies-later', mode: 'full', status: 'running', started_at: new Date() }).returning('id');
    // The "live" import: a session holding its run's lock and the write turn.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding!: () => void;
    const taken = new Promise<void>((resolve) => (holding = resolve));
    const holder = t.db.transaction(async (trx) => {
      await trx.raw(`SELECT pg_advisory_xact_lock(?, (?::bigint % 2147483647)::int)`, [LOCK_RUN, id]);
      await trx.raw(`SELECT pg_advisory_xact_lock(?, hashtext('*'))`, [LOCK_WRITE]);
      holding();
      await held;
    });
    await taken;
    const waiting = importFeed(t.db, { source: 'patient', format: 'csv', input: { text: csvFeed([rows('P', 0, 1).trim()]) }, gazetteer: gazetteer() });
    await waitFor(async () => (await t.db('import_runs').where({ source: 'patient', status: 'running' }).first()) ?? false, 'the waiting import to record its run');
    expect((await t.db('import_runs').where({ id }).first()).status).toBe('running');
    release(); // the holder "dies": its locks go
    await holder;
    expect((await waiting).status).toBe('ok');
    expect((await t.db('import_runs').where({ id }).first()).status).toBe('failed');
  });

  it('the check the server runs at start marks dead runs (a row left running by a crash)', async () => {
    // A run row whose owner is gone: nobody holds its lock.
    const [{ id }] = await t.db('import_runs').insert({ source: 'crashed', mode: 'full', status: 'running', started_at: new Date() }).returning('id');
    expect(await recoverInterruptedImports(t.db)).toBe(1);
    const row = await t.db('import_runs').where({ id }).first();
    expect([row.status, row.error]).toEqual(['failed', expect.stringMatching(/^interrupted/)]);
    expect(await recoverInterruptedImports(t.db)).toBe(0);
  });
});
