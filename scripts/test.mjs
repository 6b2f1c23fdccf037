// `npm test`: the type check, the OpenAPI lint and the test suite. The type check (about 10 s
// of one core, several times that on a busy machine) runs beside the other two rather than
// before them, since the tests spend much of their time waiting on PostgreSQL and on the
// processes they start. Its output is printed at the end, after the tests' own; the exit code
// is non-zero if any of the three failed.
import { spawn } from 'node:child_process';

// npm puts node_modules/.bin first on the PATH of its scripts.
function run(command, args, { capture = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    child.on('error', (err) => resolve({ code: 1, output: String(err) }));
    let output = '';
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const typecheck = run('tsc', ['--noEmit'], { capture: true });
const lint = await run('npm', ['run', '--silent', 'lint:openapi']);
const tests = lint.code === 0 ? await run('vitest', ['run', ...process.argv.slice(2)]) : null;
const types = await typecheck;

if (types.code !== 0) process.stderr.write(`\n${types.output}\nType check (tsc --noEmit) failed.\n`);
else process.stdout.write('\nType check (tsc --noEmit): no errors.\n');
if (lint.code !== 0) process.stderr.write('OpenAPI lint failed: the tests were not run.\n');
process.exit(types.code || lint.code || (tests?.code ?? 1));
