import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { runKeysCli } from '../../src/cli/keys-command.js';
import { useTestContext } from '../helpers/context.js';
import { bearer, buildTestApp } from '../helpers/factory.js';
import { freePort } from '../helpers/redis-server.js';

const spawnCli = promisify(execFile);
const t = useTestContext();

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// The command in-process (what `npm run keys` runs, minus the process around it).
async function keys(...args: string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runKeysCli(args, {
    stdout: (s) => void (stdout += s),
    stderr: (s) => void (stderr += s),
    env: { ...process.env, DATABASE_URL: t.url, LOG_LEVEL: 'silent' },
  });
  return { code, stdout, stderr };
}

// The real entry point, as a process: exit codes and streams.
async function keysProcess(...args: string[]): Promise<Run> {
  try {
    // node --import tsx: what `npm run keys` runs, without npx's own start-up on a busy machine.
    const { stdout, stderr } = await spawnCli(process.execPath, ['--import', 'tsx', 'src/cli/keys.ts', ...args], {
      env: { ...process.env, DATABASE_URL: t.url, LOG_LEVEL: 'silent' },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe('npm run keys', () => {
  it('creates a key (printed once), lists, changes tier and revokes it', async () => {
    const created = await keys('create', '--email', 'Ops@Example.com', '--tier', 'free', '--name', 'ci key', '--json');
    expect(created.code, created.stderr).toBe(0);
    const key = JSON.parse(created.stdout.trim().split('\n').at(-1)!);
    expect(key).toMatchObject({ tier: 'free', name: 'ci key' });
    expect(key.id).toMatch(/^key_/);
    expect(key.key).toMatch(/^lfk_[A-Za-z0-9_-]{43}$/);

    const app = await buildTestApp(t.db);
    const ok = await request(app).get('/api/v1/listings').set(bearer(key.key));
    expect(ok).toHaveStatus(200);
    expect(ok.headers['ratelimit-limit']).toBe('100');

    // the account is found again whatever the letter case of the address
    const second = await keys('create', '--email', 'ops@example.com', '--tier', 'pro', '--json');
    expect(second.code).toBe(0);
    const listed = await keys('list', '--email', 'OPS@example.com', '--json');
    const rows = JSON.parse(listed.stdout.trim().split('\n').at(-1)!);
    expect(rows.map((r: { tier: string }) => r.tier)).toEqual(['free', 'pro']);
    expect(listed.stdout).not.toContain(key.key);
    expect(rows[0].key).toBe(`${key.key.slice(0, 8)}…${key.key.slice(-4)}`);

    const human = await keys('list');
    expect(human.stdout).toContain(key.id);
    expect(human.stdout).not.toContain(key.key);
    // A header row names the columns, which line up with it.
    const [header, ...lines] = human.stdout.trimEnd().split('\n');
    expect(header.split(/\s{2,}/)).toEqual(['ID', 'TIER', 'KEY', 'EMAIL', 'NAME', 'LAST USED', 'STATE']);
    const row = lines.find((l) => l.startsWith(key.id))!;
    expect(row.indexOf(`${key.key.slice(0, 8)}…`)).toBe(header.indexOf('KEY'));
    expect(row.indexOf('active')).toBe(header.indexOf('STATE'));

    expect((await keys('set-tier', key.id, 'starter')).code).toBe(0);
    const starter = await request(app).get('/api/v1/listings').set(bearer(key.key));
    expect(starter.headers['ratelimit-limit']).toBe('5000');

    expect((await keys('revoke', key.id)).code).toBe(0);
    const revoked = await request(app).get('/api/v1/listings').set(bearer(key.key));
    expect(revoked).toHaveStatus(401);
    expect(revoked.body.code).toBe('invalid_key');
    expect((await keys('revoke', key.id)).code).toBe(1);
    // A revoked key keeps the tier it had: set-tier refuses it as revoke does.
    const again = await keys('set-tier', key.id, 'enterprise');
    expect([again.code, again.stderr]).toEqual([1, `No active key with id ${key.id}\n`]);
    expect((await t.db('api_keys').where({ id: key.id }).first()).tier).toBe('starter');
  });

  it('answers usage errors with exit code 2 and the usage text', async () => {
    const cases = [
      ['create', '--email', 'x@example.com', '--tier', 'gold'],
      ['create', '--email', 'not-an-email', '--tier', 'free'],
      ['create', '--tier', 'free'],
      ['frobnicate'],
      ['set-tier', 'key_x', 'platinum'],
      ['revoke'],
      ['create', '--email', `${'a'.repeat(65)}@example.com`, '--tier', 'free'],
      ['create', '--bogus'],
    ];
    const results = await Promise.all(cases.map((args) => keys(...args)));
    results.forEach((r, i) => {
      expect(r.code, cases[i].join(' ')).toBe(2);
      expect(r.stderr).toContain('Usage:');
    });
    // Each message names what is wrong, and only that.
    const problems = (r: { stderr: string }) => r.stderr.split('\n\nUsage:')[0];
    expect(problems(results[0])).toBe('--tier: unknown tier "gold": use free, starter, pro or enterprise');
    expect(problems(results[1])).toBe('--email: "not-an-email" is not a valid email address');
    expect(problems(results[2])).toBe('--email is required');
    expect(problems(results[4])).toBe('unknown tier "platinum": use free, starter, pro or enterprise');
    expect(problems(results[6])).toBe(`--email: "${'a'.repeat(65)}@example.com" is not a valid email address: the part before the @ has at most 64 characters`);
    // An account made before that rule (the regression check of stop 52) still gets keys and is listed.
    const old = `${'b'.repeat(65)}@example.com`;
    await t.db('accounts').insert({ email: old });
    expect((await keys('create', '--email', old, '--tier', 'pro')).code).toBe(0);
    const listed = await keys('list', '--email', old, '--json');
    expect([listed.code, JSON.parse(listed.stdout).map((k: { email: string }) => k.email)]).toEqual([0, [old]]);
    const both = await keys('create', '--tier', 'gold');
    expect(both.code).toBe(2);
    expect(problems(both)).toBe('--email is required\n--tier: unknown tier "gold": use free, starter, pro or enterprise');
    const none = await keys();
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage:');
  });

  // A key's name is shown by `keys list` on a terminal and on the key page: the same rule as
  // the page's form (src/domain/key-name.ts), and no control character in any argument.
  it('refuses control characters in any argument (exit 2, naming the option) and stores nothing', async () => {
    const email = 'ctl@example.com';
    const cases: [string[], string][] = [
      [['create', '--email', email, '--tier', 'free', '--name', 'ci\u001b[2J\u001b]0;owned\u0007'], '--name contains a control character (U+001B); control characters cannot be used'],
      [['create', '--email', email, '--tier', 'free', '--name', 'nul\u0000'], '--name contains a control character (U+0000); control characters cannot be used'],
      [['create', '--email', email, '--tier', 'free', '--name', 'csi\u009b2J'], '--name contains a control character (U+009B); control characters cannot be used'],
      [['create', '--email', `ctl\u001b@example.com`, '--tier', 'free'], '--email contains a control character (U+001B); control characters cannot be used'],
      [['revoke', 'key_\u0000'], 'argument 2 contains a control character (U+0000); control characters cannot be used'],
      [['create', '--email', email, '--tier', 'free', '--name', 'x'.repeat(61)], '--name: at most 60 characters'],
      [['create', '--email', email, '--tier', 'free', '--name', '   '], '--name: give a name, or leave --name out'],
      [['create', '--email', email, '--tier', 'free', '--name', '\u3164'], '--name: give a name, or leave --name out'],
      [['create', '--email', email, '--tier', 'free', '--name', 'a\u200bb'], '--name: visible characters only (no control or text-direction characters)'],
    ];
    for (const [args, message] of cases) {
      const r = await keys(...args);
      expect(r.code, JSON.stringify(args)).toBe(2);
      expect(r.stderr.split('\n\nUsage:')[0], JSON.stringify(args)).toBe(message);
    }
    const listed = await keys('list', '--email', email, '--json');
    expect(JSON.parse(listed.stdout.trim().split('\n').at(-1)!)).toEqual([]);
    // White space is collapsed as on the key page.
    const ok = await keys('create', '--email', email, '--tier', 'free', '--name', '  nightly   sync ', '--json');
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout.trim().split('\n').at(-1)!).name).toBe('nightly sync');
  });

  // An outside probe of stop 47: an 80 KB name was accepted, being one character ('Z' and
  // accents stacked on it) as the 60-character rule counts them.
  it('refuses a name of more than 480 code points, however few characters it shows', async () => {
    const email = 'bytes@example.com';
    for (const name of ['Z' + '\u0301'.repeat(40_000), 'q\u0301\u0301\u0301\u0301\u0301\u0301\u0301\u0301'.repeat(60)]) {
      const r = await keys('create', '--email', email, '--tier', 'free', '--name', name);
      expect(r.code).toBe(2);
      expect(r.stderr.split('\n\nUsage:')[0]).toBe('--name: at most 480 Unicode code points (a character built of several, accents stacked on a letter or joined emoji, counts each)');
    }
    const ok = await keys('create', '--email', email, '--tier', 'free', '--name', '𝒜'.repeat(60), '--json');
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout.trim().split('\n').at(-1)!).name).toBe('𝒜'.repeat(60));
  });

  it('--help, -h and help print the usage on stdout and exit 0', async () => {
    const cases = [['--help'], ['-h'], ['help'], ['create', '--help']];
    const results = await Promise.all(cases.map((args) => keys(...args)));
    for (const [i, r] of results.entries()) {
      expect(r.code, cases[i].join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^Usage:\n/);
      expect(r.stdout).toContain('npm run keys -- create --email E --tier free|starter|pro|enterprise');
      expect(r.stderr).toBe('');
    }
  });

  // Spawning a process can take seconds on a busy machine.
  it('as a process: exit codes 0, 1 and 2 and the streams they write to', { timeout: 120_000 }, async () => {
    const [help, usage, missing] = await Promise.all([keysProcess('--help'), keysProcess('create', '--tier', 'gold'), keysProcess('revoke', 'key_0000000000000000')]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage:\n/);
    expect(help.stderr).toBe('');
    expect(usage.code).toBe(2);
    expect(usage.stdout).toBe('');
    expect(usage.stderr).toMatch(/^--email is required\n--tier: unknown tier "gold": use free, starter, pro or enterprise\n\nUsage:/);
    expect(missing.code, missing.stderr).toBe(1);
    expect(missing.stderr).toBe('No active key with id key_0000000000000000\n');
  });
});

// An outside probe of stop 51: without DATABASE_URL and with no server running, `keys create`
// made a key in an embedded database of its own without a word; a server run with DATABASE_URL
// then answered that key 401. It still works there, and says which database it used.
describe('npm run keys without DATABASE_URL and no server running', () => {
  it('says it uses the embedded PostgreSQL it starts for itself', { timeout: 180_000 }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'keys-embedded-'));
    try {
      let stdout = '';
      let stderr = '';
      const code = await runKeysCli(['list'], {
        stdout: (s) => void (stdout += s),
        stderr: (s) => void (stderr += s),
        env: { ...process.env, DATABASE_URL: '', EMBEDDED_PG_DIR: path.join(dir, 'pg'), EMBEDDED_PG_PORT: String(await freePort()), LOG_LEVEL: 'silent' },
      });
      expect(code, stderr).toBe(0);
      expect(stderr).toBe(`note: DATABASE_URL is not set and no \`npm start\` runs on the embedded PostgreSQL: using the embedded database in ${path.join(dir, 'pg')}, which a server serves only when it starts without DATABASE_URL\n`);
      expect(stdout).toMatch(/no keys/i);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
