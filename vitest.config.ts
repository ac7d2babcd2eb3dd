import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // compiled modules imported by a test read netc/kernels from the sources, as the rest of the test does
  resolve: { alias: { 'netc/kernels': fileURLToPath(new URL('./src/netc-kernels.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker fewer than the cores: one, on CI's two. Most test files wait on child
    // processes (the CLI, workers, a browser) for much of their time, so two share two cores well
    maxWorkers: 2,
  },
});
