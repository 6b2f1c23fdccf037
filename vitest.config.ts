import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/helpers/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // expect(res).toHaveStatus(200): on failure, the request, the problem and the body.
    setupFiles: ['test/helpers/assertions.ts'],
    // Deadlines for a hang, not speed targets: on a loaded 2-core machine (other test runs, a
    // CPU hog) a test that spawns processes or makes a few hundred requests can take ten
    // times what it takes on a quiet one. Waits inside tests poll for conditions. 300 s: at a
    // load average of 10-15 (five outside probes beside the suite), two tests of 12 s each
    // passed 60 s (an outside probe); the whole run took 11 min 40 s.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // Each test file gets its own database cloned from a migrated template, so files may
    // run in parallel. Three workers on this 2-core machine: much of a file's time is spent
    // waiting (on PostgreSQL, on the processes it starts, on a browser), so a third worker
    // fills the cores (measured: the suite in 72 s against 94 s with two, the machine equally
    // busy); a fourth only adds its start-up (82 s).
    maxWorkers: 3,
    sequence: { sequencer: SlowFirstSequencer },
    // A worker runs its files one after another in the same process, loading express, knex,
    // pg, zod… once rather than once per file: about a third off the suite's time. The files
    // share no state: each builds its own app, database and Redis prefix, and restores what
    // it mocks.
    isolate: false,
    // The JSON report lets CI print a plain 'N passed, N failed' closing line.
    reporters: ['default', ['json', { outputFile: 'test-output/vitest.json' }]],
  },
});
