// Mutates the examples thousands of times and asserts that netc never crashes or hangs: every case ends
// in diagnostics or in valid IR. Cases run in a worker that is stopped if one of them takes too long.
import { readdirSync, readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { expect, it } from 'vitest';

const CASES = Number(process.env.NETC_FUZZ_CASES ?? 4000);
const HANG_MS = 5000;

const dir = new URL('../examples/', import.meta.url);
const sources = readdirSync(dir)
  .filter((f) => f.endsWith('.net'))
  .map((f) => ({ path: `examples/${f}`, text: readFileSync(new URL(f, dir), 'utf8') }));

it(`survives ${CASES} mutated examples`, async () => {
  const worker = new Worker(new URL('./fuzz/worker-entry.mjs', import.meta.url), {
    workerData: { sources, cases: CASES, seed: 20261130 },
  });
  let last: { index: number; text: string } | undefined;
  let timer: NodeJS.Timeout | undefined;
  const result = await new Promise<{ type: string; [k: string]: unknown }>((resolve, reject) => {
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => resolve({ type: 'hang' }), HANG_MS);
    };
    arm();
    worker.on('message', (m) => {
      if (m.type === 'case') {
        last = m;
        arm();
      } else resolve(m);
    });
    worker.on('error', reject);
  });
  clearTimeout(timer);
  await worker.terminate();
  if (result.type === 'hang') expect.fail(`case ${last?.index} did not finish within ${HANG_MS} ms:\n${last?.text}`);
  if (result.type === 'fail') expect.fail(`case ${result.index} crashed: ${result.error}\n--- input ---\n${result.text}`);
  const outcomes = result.outcomes as { clean: number; diagnosed: number };
  console.log(`fuzz: ${outcomes.clean} clean, ${outcomes.diagnosed} diagnosed`);
  expect(outcomes.clean + outcomes.diagnosed).toBe(CASES);
  // the mutations must reach both outcomes, or the fuzzer tests nothing
  expect(outcomes.diagnosed).toBeGreaterThan(CASES / 4);
  expect(outcomes.clean).toBeGreaterThan(20);
}, 120_000);
