// `npm test`: the type check, the OpenAPI lint and the test suite, all three at once. The
// type check (about 10 s of one core, several times that on a busy machine) and the lint need
// nothing from the tests, and the tests spend much of their time waiting on PostgreSQL and on
// the processes they start. The tests write to the terminal as they run; the other two are
// reported at the end. The exit code is non-zero if any of the three failed.
import { spawn } from 'node:child_process';

// npm puts node_modules/.bin first on the PATH of its scripts.
function run(command, args, { capture = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let output = '';
    child.stdout?.on('data', (d) => (output += d));
    child.stderr?.on('data', (d) => (output += d));
    child.on('error', (err) => resolve({ code: 1, output: String(err) }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

const typecheck = run('tsc', ['--noEmit'], { capture: true });
const lint = run('npm', ['run', '--silent', 'lint:openapi'], { capture: true });
const tests = await run('vitest', ['run', ...process.argv.slice(2)]);

const report = (name, r) => {
  if (r.code === 0) process.stdout.write(`${name}: ok\n`);
  else process.stderr.write(`\n${r.output.trimEnd()}\n${name}: FAILED\n`);
};
process.stdout.write('\n');
report('Type check (tsc --noEmit)', await typecheck);
report('OpenAPI lint (npm run lint:openapi)', await lint);
process.exit((await typecheck).code || (await lint).code || tests.code);
