// What one core does with SIMD128 WebAssembly, measured with netc's own emitter (src/wasm/): GFLOP/s of
// independent f32x4 multiply-adds (no fused multiply-add: a multiply and an add, 8 flops a vector pair) and
// GB/s of a stream that reads and writes a 64 MB buffer. The physical floor (bench/floor.ts) divides a
// step's FLOPs and bytes by these.
import { ModuleBuilder } from '../src/wasm/module.js';

/**
 * the best of `reps` timings of f(), in ms of this process's CPU time (user + system), each over `inner`
 * calls: on a machine that other processes load, wall time would count their share of the core too
 */
function best(reps: number, f: () => void, inner = 20): number {
  let ms = Infinity;
  for (let r = 0; r < reps; r++) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < inner; i++) f();
    const c = process.cpuUsage(c0);
    ms = Math.min(ms, (c.user + c.system) / 1000 / inner);
  }
  return ms;
}

/** GFLOP/s: 8 independent accumulators, acc = acc * a + b, `iters` times. */
function computeRate(): number {
  const mb = new ModuleBuilder();
  const ACCS = 8;
  mb.func(['i32'], ['f32'], (c) => {
    const iters = c.param(0);
    const accs = Array.from({ length: ACCS }, () => c.local('v128'));
    const [a, b] = [c.local('v128'), c.local('v128')];
    const i = c.local('i32');
    accs.forEach((acc, k) => c.v128Const([k, k + 0.5, k + 0.25, k + 0.75]).set(acc));
    c.v128Const([0.999, 0.999, 0.999, 0.999]).set(a);
    c.v128Const([0.001, 0.001, 0.001, 0.001]).set(b);
    c.for(i, () => c.i32(0), () => c.get(iters), () => {
      for (const acc of accs) c.get(acc).get(a).f32x4Mul().get(b).f32x4Add().set(acc);
    });
    c.get(accs[0]);
    for (const acc of accs.slice(1)) c.get(acc).f32x4Add();
    c.f32x4ExtractLane(0);
  }, 'run');
  const memory = new WebAssembly.Memory({ initial: 1 });
  const run = new WebAssembly.Instance(new WebAssembly.Module(mb.bytes()), { env: { memory } }).exports.run as (n: number) => number;
  const iters = 2_000_000;
  run(iters);
  const ms = best(5, () => run(iters));
  return (iters * ACCS * 8) / (ms * 1e6);
}

/** GB/s: x = x * a + b over a 64 MB buffer, 16 bytes read and 16 written per vector. */
function memoryRate(): number {
  const bytes = 64 << 20;
  const mb = new ModuleBuilder();
  mb.func(['i32'], [], (c) => {
    const end = c.param(0);
    const off = c.local('i32');
    const [a, b] = [c.local('v128'), c.local('v128')];
    c.v128Const([0.999, 0.999, 0.999, 0.999]).set(a);
    c.v128Const([0.001, 0.001, 0.001, 0.001]).set(b);
    c.for(off, () => c.i32(0), () => c.get(end), () => {
      c.get(off).get(off).loadV128().get(a).f32x4Mul().get(b).f32x4Add().storeV128();
    }, 16);
  }, 'run');
  const memory = new WebAssembly.Memory({ initial: bytes / 65536 + 1 });
  const run = new WebAssembly.Instance(new WebAssembly.Module(mb.bytes()), { env: { memory } }).exports.run as (n: number) => void;
  run(bytes);
  const ms = best(5, () => run(bytes));
  return (2 * bytes) / (ms * 1e6);
}

/** The core's measured rates. */
export function simdRates(): { gflops: number; gbps: number; how: string } {
  const gflops = computeRate();
  const gbps = memoryRate();
  return { gflops: Number(gflops.toPrecision(3)), gbps: Number(gbps.toPrecision(3)), how: 'SIMD128 WebAssembly written by src/wasm/: 8 independent f32x4 multiply-add chains; a 64 MB read-modify-write stream' };
}

/**
 * One forum step (2-20-1 sigmoid MLP, binary cross-entropy, Adam, batch 5) of N members, counted from the
 * generated step's work: the products of the forward and backward passes (a multiply-add is 2 flops), the
 * exps (105 a member, each ~30 flops of polynomial and range reduction), Adam's ~14 flops per parameter;
 * memory: each of the 81 parameters' value and two moments read and written once (24 bytes), the
 * activations and gradients staying in cache.
 */
export function forumCost(n: number, batch = 5): { flops: number; bytes: number } {
  const [input, hidden, output] = [2, 20, 1];
  const macs = batch * (input * hidden + hidden * output) * 2 + batch * hidden * output; // forward, dW, dx of layer 2
  const exps = batch * (hidden + output);
  const params = input * hidden + hidden + hidden * output + output;
  return { flops: n * (2 * macs + 30 * exps + 14 * params), bytes: n * params * 24 };
}

/**
 * The multiply-adds of one LeNet-5 step (examples/lenet.net, batch 64) of N members: per example, the
 * forward products (conv 28x28x6 of 5x5x1, conv 10x10x16 of 5x5x6, dense 400-120-84-10), the same again for
 * every kernel's gradient, and again for every input gradient but the first conv's (its input is data).
 */
export function lenetMacs(n: number, batch = 64): number {
  const layers = [28 * 28 * 6 * 25, 10 * 10 * 16 * 150, 400 * 120, 120 * 84, 84 * 10];
  const forward = layers.reduce((a, b) => a + b, 0);
  return n * batch * (2 * forward + forward - layers[0]);
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(simdRates(), forumCost(1000));
