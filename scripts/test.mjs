// `npm test`: the test suite and, beside it, the OpenAPI lint (which needs nothing from the
// tests). The type check is a test of the suite (test/integrator/architecture.test.ts: the
// TypeScript program of tsconfig.json, built once for the type check and for the layering
// rule that reads the types; a separate `tsc --noEmit` built the same program a second time,
// about 14 s of a core). `npm run typecheck` runs tsc alone. The tests write to the terminal
// as they run; the lint is reported at the end. The exit code is non-zero if either failed.
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

const lint = run('npm', ['run', '--silent', 'lint:openapi'], { capture: true });
const tests = await run('vitest', ['run', ...process.argv.slice(2)]);

const report = (name, r) => {
  if (r.code === 0) process.stdout.write(`${name}: ok\n`);
  else process.stderr.write(`\n${r.output.trimEnd()}\n${name}: FAILED\n`);
};
process.stdout.write('\n');
report('OpenAPI lint (npm run lint:openapi)', await lint);
process.exit((await lint).code || tests.code);
