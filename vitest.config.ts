import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // compiled modules imported by a test read netc/kernels from the sources, as the rest of the test does
  resolve: { alias: { 'netc/kernels': fileURLToPath(new URL('./src/netc-kernels.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    pool: 'forks',
  },
});
