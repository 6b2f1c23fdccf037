import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/paths.js';

// `npm run db:seed` exits 2 on a usage error, as `npm run keys` and `npm run ingest` do (an
// outside probe: it exited 1, as for a failure of the seeding itself), before it opens any
// database (DATABASE_URL points nowhere here).
function run(script: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', script, ...args], { cwd: projectRoot, env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', BENCH_PG_URL: 'postgres://nobody@127.0.0.1:1', TEST_PG_URL: 'postgres://nobody@127.0.0.1:1' }, timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}
const seed = (args: string[]) => run('src/cli/seed.ts', args);

describe('npm run db:seed', () => {
  it('exit 2 on a usage error, with the usage line', async () => {
    for (const [args, message] of [
      [['--bogus'], /Unknown option '--bogus'/],
      [['--listings', 'abc'], /--listings must be a positive integer/],
      [['--seed', '0'], /--seed must be a positive integer/],
      [['--feeds-dir', 'a\u001b[2Jb'], /--feeds-dir contains a control character \(U\+001B\)/],
    ] as const) {
      const r = await seed([...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toContain('Usage: npm run db:seed');
    }
  });
});

// The benchmark and evaluation scripts, and the seed, with --help: their usage and exit 0; with an
// unknown option: the option named, the usage, exit 2 (an outside probe of stop 61: a stack trace
// and exit 1; the seed exited 2 on --help). Nothing is opened: the databases point nowhere.
describe('--help and unknown options of the seed, benchmark and evaluation scripts', () => {
  const scripts = [
    ['src/cli/seed.ts', 'npm run db:seed'],
    ['bench/run.ts', 'npm run bench'],
    ['bench/kind-cpu.ts', 'npm run bench:kinds'],
    ['bench/ingest/import-100k.ts', 'npm run bench:import'],
    ['bench/ingest/ingest-memory.ts', 'npm run bench:ingest-memory'],
    ['test/ingest/eval/run.ts', 'npm run eval:dedup'],
  ] as const;
  for (const [script, command] of scripts) {
    it(script, async () => {
      for (const flag of ['--help', '-h']) {
        const r = await run(script, [flag]);
        expect(r.code, flag).toBe(0);
        expect(r.stdout).toContain(`Usage: ${command}`);
      }
      const bad = await run(script, ['--no-such-option']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/Unknown option '--no-such-option'/);
      expect(bad.stderr).toContain(`Usage: ${command}`);
      expect(bad.stderr).not.toMatch(/\n\s+at /);
    });
  }
});
