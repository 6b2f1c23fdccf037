import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The files that take longest (10 to 25 s each on this 2-core machine, measured 2026-11-23),
// started first so that none of them starts late and runs on alone while the other workers
// have finished. Vitest orders files by the durations it cached on an earlier run of the
// checkout; a fresh clone has none and would take them in path order. The rest keep
// vitest's order. A file missing from this list only runs in that order, nothing else.
const SLOW_FIRST = [
  'test/cli/ingest.test.ts',
  'test/ingest/demo.test.ts',
  'test/api/quota.test.ts',
  'test/cli/instances.test.ts',
  'test/api/changes-concurrency.test.ts',
  'test/ingest/streaming.test.ts',
  'test/integrator/architecture.test.ts',
  'test/cli/server-start.test.ts',
];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SLOW_FIRST.indexOf(relative(f.project.config.root, f.moduleId).split('\\').join('/'));
      return i === -1 ? SLOW_FIRST.length : i;
    };
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
  }
}
