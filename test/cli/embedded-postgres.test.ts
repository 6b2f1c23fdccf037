import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../../src/db/embedded.js';
import { projectRoot } from '../../src/lib/paths.js';
import { freePort } from '../helpers/redis-server.js';


async function query(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

function postmasterPid(dir: string): number | null {
  const file = path.join(dir, 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : null;
}

// Gone, or a zombie waiting for init to reap it.
function isGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2) === 'Z';
  } catch {
    return true;
  }
}

describe('startEmbeddedPostgres', () => {
  let root: string;
  let dir: string;
  let port: number;
  const handles: EmbeddedPostgresHandle[] = [];
  const start = async () => {
    const h = await startEmbeddedPostgres({ dir, port });
    handles.push(h);
    return h;
  };

  beforeAll(async () => {
    // mkdtemp makes a 0700 folder; the postgres user must be able to walk through it.
    root = await mkdtemp(path.join(os.tmpdir(), 'embedded-pg-test-'));
    await chmod(root, 0o755);
    dir = path.join(root, 'pg');
    port = await freePort();
  });

  afterAll(async () => {
    for (const h of handles) await h.stop();
    // Whatever a failed test left running must not outlive the run.
    const pid = postmasterPid(dir);
    if (pid && !isGone(pid)) process.kill(pid, 'SIGQUIT');
    await rm(root, { recursive: true, force: true });
  });

  it('initialises a cluster once, then starts it warm', async () => {
    const first = await start();
    expect(first.freshlyInitialised).toBe(true);
    expect(first.url).toMatch(new RegExp(`^postgres://postgres:[^@]+@127\\.0\\.0\\.1:${port}/listings$`));
    const [{ version }] = await query(first.url, 'select version()');
    expect(version).toMatch(/^PostgreSQL 15\./);
    await query(first.url, 'create extension if not exists pg_trgm');
    await first.stop();
    expect(postmasterPid(dir)).toBeNull();

    const warm = await start();
    expect(warm.freshlyInitialised).toBe(false);
    expect(warm.url).toBe(first.url);
    const rows = await query(warm.url, `select extname from pg_extension where extname = 'pg_trgm'`);
    expect(rows).toHaveLength(1);
    await warm.stop();
  });

  it('takes over from a server this process started but never stopped', async () => {
    const forgotten = await start();
    const oldPid = postmasterPid(dir)!;
    const fresh = await start();
    expect(isGone(oldPid)).toBe(true);
    expect(postmasterPid(dir)).not.toBe(oldPid);
    expect(await query(fresh.url, 'select 1 as one')).toEqual([{ one: 1 }]);
    // Stopping the stale handle is harmless and quick; it must not touch the new server.
    await forgotten.stop();
    expect(await query(fresh.url, 'select 1 as one')).toEqual([{ one: 1 }]);
    await fresh.stop();
  });

  it('stops an orphaned server left by a parent killed with SIGKILL', async () => {
    const moduleUrl = pathToFileURL(path.join(projectRoot, 'src/db/embedded.ts')).href;
    const code = `
      const { startEmbeddedPostgres } = await import(${JSON.stringify(moduleUrl)});
      await startEmbeddedPostgres({ dir: ${JSON.stringify(dir)}, port: ${port} });
      console.log('READY');
      setInterval(() => {}, 1000);`;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the parent did not start its server:\n${output}`)), 90_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('READY')) {
          clearTimeout(timer);
          resolve();
        }
      };
      parent.stdout.on('data', onData);
      parent.stderr.on('data', onData);
      parent.once('exit', () => reject(new Error(`the parent exited early:\n${output}`)));
    });
    const orphanPid = postmasterPid(dir)!;
    const exited = new Promise((resolve) => parent.once('exit', resolve));
    parent.kill('SIGKILL');
    await exited;
    expect(isGone(orphanPid)).toBe(false);

    const h = await start();
    expect(h.freshlyInitialised).toBe(false);
    expect(isGone(orphanPid)).toBe(true);
    expect(await query(h.url, 'select 1 as one')).toEqual([{ one: 1 }]);
    await h.stop();
  }, 300_000);

  it('fails fast and clearly when the port is taken', async () => {
    const blocker = net.createServer();
    const busyPort = await freePort();
    await new Promise<void>((resolve) => blocker.listen(busyPort, '127.0.0.1', resolve));
    try {
      // Fails on what the server says (it cannot bind), not after a readiness wait ran out.
      await expect(startEmbeddedPostgres({ dir, port: busyPort })).rejects.toThrow(`port ${busyPort} on 127.0.0.1 is already in use`);
      expect(postmasterPid(dir)).toBeNull();
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });
});
