import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30000,
    hookTimeout: 60000,
    pool: 'forks',
    // Each test file gets its own database cloned from a migrated template, so files may
    // run in parallel; two workers keep the 2-core machine responsive.
    maxWorkers: 2,
    // The JSON report lets CI print a plain 'N passed, N failed' closing line.
    reporters: ['default', ['json', { outputFile: 'test-output/vitest.json' }]],
  },
});
