// The fused step's calls of several steps on 1 and on 2 threads (`netc train --threads`, src/runtime/threads.ts):
// forum's model (2-20-1 sigmoid, Adam, batch 5) at N members, the same call alternately on a population
// without threads and on one with a pool of 2, best wall time of each over the repetitions, and whether
// both populations end bit for bit the same. Wall time, not CPU time: threads are about wall time. Run it on
// an otherwise idle machine: `npx tsx bench/threads.ts [N=1000] [steps a call=40] [repetitions=25]`.
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';
import { readFileSync } from 'node:fs';
import { compile } from '../src/pipeline.js';
import { Population } from '../src/runtime/population.js';
import { initMember } from '../src/kernels/init.js';
import { hyperTable } from '../src/runtime/hyper.js';
import { registerWasmKernels } from '../src/kernels/wasm-kernels.js';
import { ThreadPool } from '../src/runtime/threads.js';
import { planStep } from '../src/runtime/fused-step.js';
import { StepCode } from '../src/step/step-code.js';
import type { TF } from '../src/kernels/tf.js';

const T = tf as unknown as TF;
await tf.setBackend('wasm');
await tf.ready();
registerWasmKernels(T);
const [N, STEPS, REPS] = [1000, 40, 25].map((d, i) => Number(process.argv[2 + i] ?? d));
const state = compile(readFileSync('examples/forum.net', 'utf8').replace('members: 15', `members: ${N}`), 'forum.net', { lowering: 'grouped' });
const program = state.program!;
const table = hyperTable(program, state.ir!);

function population(threads: number): Population {
  const plan = planStep(T, 'fused', new StepCode({ ensemble: state.ensemble!, optimizer: program.train!.optimizer.name, loss: program.train!.loss, metrics: [] }));
  if (threads > 1) plan.threads = new ThreadPool(threads);
  return new Population({
    tf: T,
    ensemble: state.ensemble!,
    memberIds: Array.from({ length: N }, (_, i) => i),
    seed: 0,
    optimizer: program.train!.optimizer.name,
    loss: program.train!.loss,
    hyper: (k, m) => table.value(k, m),
    base: (k) => table.base(k),
    initial: (m) => initMember(state.ir!, 0, m),
    plan,
  });
}

const batch = { x: Float32Array.from([0.1, 0.9, 0.4, 0.3, 0.8, 0.2, 0.6, 0.7, 0.5, 0.05]), y: Float32Array.from([1, 0, 1, 1, 0]), size: 5 };
const batches = Array.from({ length: STEPS }, () => batch);
const ends = batches.map(() => false);
const pops = [population(1), population(2)];
const best = [Infinity, Infinity];
for (let r = 0; r < REPS; r++) {
  pops.forEach((pop, i) => {
    const t0 = performance.now();
    pop.step({ kind: 'ahead', batches, ends, names: ['accuracy'] });
    // the first two repetitions warm up (the workers start, the shared memory grows and is first touched)
    if (r > 1) best[i] = Math.min(best[i], performance.now() - t0);
  });
}
const rate = (ms: number) => Math.round((N * STEPS) / (ms / 1000)).toLocaleString('en');
const [a, b] = [await pops[0].exportState(), await pops[1].exportState()];
const same = [...a].every(([k, v]) => Buffer.from(v.buffer, v.byteOffset, v.byteLength).equals(Buffer.from(b.get(k)!.buffer, b.get(k)!.byteOffset, b.get(k)!.byteLength)));
console.log(`forum x${N}, ${STEPS} steps a call: 1 thread ${best[0].toFixed(2)} ms (${rate(best[0])} member-steps/s), 2 threads ${best[1].toFixed(2)} ms (${rate(best[1])}): x${(best[0] / best[1]).toFixed(2)}; the same bits: ${same}`);
process.exit(0);
