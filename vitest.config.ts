import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The files that take longest, slowest first (measured on 2 cores: 174, 155, 109, 71, 51, 42 and 40 s). Two
// workers share the suite, and a clean checkout (CI) has no timings cached, so vitest would order the files by
// size and could start one of these near the end, leaving one worker idle while it runs. Started first, they
// overlap the many short files instead.
const SLOWEST = ['wgsl-step', 'bench', 'compiled-step', 'browser-module', 'scale', 'browser', 'checkpoint'].map((f) => `/test/${f}.test.ts`);

class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SLOWEST.findIndex((s) => f.moduleId.endsWith(s));
      return i < 0 ? SLOWEST.length : i;
    };
    return sorted.map((f, i) => ({ f, i })).sort((a, b) => rank(a.f) - rank(b.f) || a.i - b.i).map(({ f }) => f);
  }
}

export default defineConfig({
  // compiled modules imported by a test read netc/kernels from the sources, as the rest of the test does
  resolve: { alias: { 'netc/kernels': fileURLToPath(new URL('./src/netc-kernels.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    // a beforeAll that loads TF.js or starts a child can pass vitest's 10 s default on a loaded machine
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker fewer than the cores: one, on CI's two. Most test files wait on child
    // processes (the CLI, workers, a browser) for much of their time, so two share two cores well
    maxWorkers: 2,
    sequence: { sequencer: SlowestFirst },
  },
});
