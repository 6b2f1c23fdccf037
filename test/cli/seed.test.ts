import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/lib/paths.js';

// `npm run db:seed` exits 2 on a usage error, as `npm run keys` and `npm run ingest` do (an
// outside probe: it exited 1, as for a failure of the seeding itself), before it opens any
// database (DATABASE_URL points nowhere here).
function seed(args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/seed.ts', ...args], { cwd: projectRoot, env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, timeout: 120_000 }, (err, _stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stderr });
    });
  });
}

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
