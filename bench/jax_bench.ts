// The forum step in jax-js (@jax-js/jax: JAX in TypeScript; jit traces a function and generates
// WebAssembly kernels for it), for `npm run bench`. bench/bench.ts runs it once per N in a process of its
// own, as
//
//   node --import tsx bench/jax_bench.ts '{"n": 100, "warmup": 5, "budgetMs": 1000, "minSteps": 10, "maxSteps": 5000}'
//
// and reads the one line `RESULT {...}` it prints (a JaxResult, bench/lib.ts).
//
// What a JAX user writes for N members: one member's loss (2-20-1 sigmoid MLP, binary cross-entropy
// clipped at 1e-7 as TF.js's, mean over the batch of 5), `vmap(valueAndGrad(loss))` over stacked weights
// ([N, 2, 20], [N, 20], [N, 20, 1], [N, 1]) with the batch shared, and Adam (lr 0.02, beta1 0.9, beta2
// 0.999, epsilon 1e-7, as tf.train.adam and netc) written out, all inside one `jit`: one compiled call per
// step, which takes the parameters and moments and returns the new ones with the members' losses. The
// bias corrections are host numbers passed in each step. A step is that call and the N losses read back
// (dataSync), as every other row of the bench reads its losses back. The wasm device; Node has no global
// Worker, so jax-js's wasm backend runs on one thread (it starts worker threads only where
// SharedArrayBuffer and Worker both exist).
import { defaultDevice, init, jit, nn, numpy as np, tree, valueAndGrad, vmap } from '@jax-js/jax';
import { forumBatchValues, lcg, mean, MemorySampler, packageVersion, timedSteps } from './timing.js';
import type { JaxJob, JaxResult } from './lib.js';

type Params = { w1: np.Array; b1: np.Array; w2: np.Array; b2: np.Array };
const names = ['w1', 'b1', 'w2', 'b2'] as const;

const LR = 0.02;
const BETA1 = 0.9;
const BETA2 = 0.999;
const EPSILON = 1e-7;
/** TF.js's binary cross-entropy clips the probabilities to [1e-7, 1 - 1e-7] */
const CLIP = 1e-7;
const BATCH = 5;

/** One member's mean binary cross-entropy on the batch. Every array is used once (jax-js moves arguments: `.ref` keeps one). */
function memberLoss(p: Params, x: np.Array, y: np.Array): np.Array {
  const h = nn.sigmoid(np.matmul(x, p.w1).add(p.b1));
  const q = np.clip(nn.sigmoid(np.matmul(h, p.w2).add(p.b2)), CLIP, 1 - CLIP);
  const ll = y.ref.mul(np.log(q.ref)).add(np.subtract(1, y).mul(np.log(np.subtract(1, q))));
  return np.mean(ll).mul(-1);
}

/** Every member's loss and gradient: the parameters mapped over their first axis, the batch shared. */
const lossAndGrad = vmap(valueAndGrad(memberLoss), [0, null, null]);

/** One training step of every member: losses, gradients and Adam, compiled into one call. */
const step = jit((p: Params, m: Params, v: Params, x: np.Array, y: np.Array, c1: np.Array, c2: np.Array) => {
  const [losses, g] = lossAndGrad(tree.ref(p), x, y);
  const next = { p: {} as Params, m: {} as Params, v: {} as Params };
  for (const k of names) {
    const gk = g[k];
    const mk = m[k].mul(BETA1).add(gk.ref.mul(1 - BETA1));
    const vk = v[k].mul(BETA2).add(gk.ref.mul(gk).mul(1 - BETA2));
    const update = mk.ref.mul(c1.ref).div(np.sqrt(vk.ref.mul(c2.ref)).add(EPSILON)).mul(LR);
    next.p[k] = p[k].sub(update);
    next.m[k] = mk;
    next.v[k] = vk;
  }
  c1.dispose();
  c2.dispose();
  return { ...next, losses };
});

/** Glorot-uniform kernels and zero biases (netc's defaults), stacked over n members. */
function initialParams(n: number): Params {
  const next = lcg(7);
  const glorot = (shape: number[], fanIn: number, fanOut: number) => {
    const limit = Math.sqrt(6 / (fanIn + fanOut));
    const size = shape.reduce((a, b) => a * b, 1);
    return np.array(Float32Array.from({ length: size }, () => (next() * 2 - 1) * limit)).reshape(shape);
  };
  return { w1: glorot([n, 2, 20], 2, 20), b1: np.zeros([n, 20]), w2: glorot([n, 20, 1], 20, 1), b2: np.zeros([n, 1]) };
}

const zerosLike = (n: number): Params => ({ w1: np.zeros([n, 2, 20]), b1: np.zeros([n, 20]), w2: np.zeros([n, 20, 1]), b2: np.zeros([n, 1]) });

async function run(job: JaxJob): Promise<JaxResult> {
  const devices = await init('wasm');
  if (!devices.includes('wasm')) throw new Error(`jax-js has no wasm device here (devices: ${devices.join(', ')})`);
  defaultDevice('wasm');
  const memory = new MemorySampler();
  const baselineRss = memory.sample();
  const t0 = performance.now();
  const { n } = job;
  const batch = forumBatchValues(BATCH);
  const x = np.array(batch.x).reshape([BATCH, 2]);
  const y = np.array(batch.y).reshape([BATCH, 1]);
  let p = initialParams(n);
  let m = zerosLike(n);
  let v = zerosLike(n);
  let t = 0;
  let last = NaN;
  const setupMs = performance.now() - t0;
  let firstStepMs = NaN;
  const once = () => {
    const s0 = performance.now();
    t++;
    const c1 = 1 / (1 - BETA1 ** t);
    const c2 = 1 / (1 - BETA2 ** t);
    const r = step(p, m, v, x.ref, y.ref, np.array(c1), np.array(c2));
    p = r.p;
    m = r.m;
    v = r.v;
    // dataSync realises the losses and releases them (jax-js's move semantics)
    last = mean(Array.from(r.losses.dataSync() as Float32Array));
    if (t === 1) firstStepMs = performance.now() - s0;
  };
  memory.sample();
  return {
    ...(await timedSteps(once, job, memory)),
    setupMs,
    firstStepMs,
    baselineRss,
    lastLoss: last,
    jax: packageVersion('@jax-js/jax') ?? 'unknown',
    device: 'wasm',
    threads: typeof (globalThis as { Worker?: unknown }).Worker === 'undefined' ? 1 : null,
  };
}

const job = JSON.parse(process.argv[2]) as JaxJob;
process.stdout.write(`RESULT ${JSON.stringify(await run(job))}\n`);
