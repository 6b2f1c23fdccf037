import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // expect(res).toHaveStatus(200): on failure, the request, the problem and the body.
    setupFiles: ['test/helpers/assertions.ts'],
    // Deadlines for a hang, not speed targets: on a loaded 2-core machine (other test runs, a
    // CPU hog) a test that spawns processes or makes a few hundred requests can take ten
    // times what it takes on a quiet one. Waits inside tests poll for conditions.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Each test file gets its own database cloned from a migrated template, so files may
    // run in parallel; two workers keep the 2-core machine responsive.
    maxWorkers: 2,
    // A worker runs its files one after another in the same process, loading express, knex,
    // pg, zod… once rather than once per file: about a third off the suite's time. The files
    // share no state: each builds its own app, database and Redis prefix, and restores what
    // it mocks.
    isolate: false,
    // The JSON report lets CI print a plain 'N passed, N failed' closing line.
    reporters: ['default', ['json', { outputFile: 'test-output/vitest.json' }]],
  },
});
