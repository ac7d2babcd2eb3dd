// The benchmark's workloads on the webgpu backend (Dawn), for a machine with a GPU: netc grouped against
// the naive loop of tf.sequential models, and netc on wasm (single-threaded) in the same process for
// scale. bench/gpu.sh bundles this file with esbuild (`pack`) and runs the bundle where only `node` is
// there (`run`); it runs from source too: `npx tsx bench/gpu-bench.ts [--quick] [--deadline SECONDS]`.
//
// netc rows run the engine they name: `ops` (TF.js ops), `fused` (the generated step: WGSL kernels on
// webgpu, one WebAssembly call on wasm). Every configuration runs in this one process, one after another
// (a GPU run has one device to share anyway); memory is not measured. A step is what `npm run bench` times: one optimizer step of every
// member on the same batch, then every member's loss read back (`await data()`, the GPU's sync point).
import { existsSync } from 'node:fs';
import { arch, cpus, loadavg, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tfjs from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { selectBackend } from '../src/runtime/backend.js';
import { registerWasmKernels } from '../src/kernels/wasm-kernels.js';
import type { TF } from '../src/kernels/tf.js';
import { buildPopulation, makeBatch, mean, median, MemorySampler, naiveLearningRate, naiveModel, timeSteps, type ModelName, type Timing } from './lib.js';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const deadlineIndex = argv.indexOf('--deadline');
const deadlineS = deadlineIndex >= 0 ? Number(argv[deadlineIndex + 1]) : 270;
const wasmOnly = argv.includes('--wasm-only');
const here = dirname(fileURLToPath(import.meta.url));
const started = performance.now();
const elapsedS = () => (performance.now() - started) / 1000;
const log = (line: string) => process.stdout.write(line + '\n');
const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));

type Backend = 'webgpu' | 'wasm';
interface Config {
  backend: Backend;
  model: ModelName;
  impl: 'netc' | 'naive';
  /** netc rows: the engine (default ops) */
  engine?: 'ops' | 'fused';
  n: number;
  /** naive: models really trained (fewer than n: extrapolated) */
  members?: number;
}
interface Row extends Config {
  msPerStep?: number;
  msMin?: number;
  steps?: number;
  lastLoss?: number;
  skipped?: string;
  error?: string;
}

const fast: Timing = quick ? { warmup: 2, budgetMs: 300, minSteps: 3, maxSteps: 200 } : { warmup: 3, budgetMs: 2000, minSteps: 5, maxSteps: 2000 };
// quick: one LeNet step (on a software Vulkan driver one step of one LeNet takes seconds)
const slow: Timing = quick ? { warmup: 0, budgetMs: 0, minSteps: 1, maxSteps: 1 } : { warmup: 2, budgetMs: 4000, minSteps: 3, maxSteps: 100 };

const gpuConfigs: Config[] = quick
  ? [
      { backend: 'webgpu', model: 'forum', impl: 'netc', n: 15, engine: 'fused' },
      { backend: 'webgpu', model: 'forum', impl: 'netc', n: 15 },
      { backend: 'webgpu', model: 'forum', impl: 'naive', n: 15, members: 2 },
      { backend: 'webgpu', model: 'lenet', impl: 'netc', n: 1, engine: 'fused' },
      { backend: 'webgpu', model: 'lenet', impl: 'netc', n: 1 },
    ]
  : [
      // the fused WGSL step first: on a real GPU these are the rows that count
      { backend: 'webgpu', model: 'forum', impl: 'netc', n: 15, engine: 'fused' },
      { backend: 'webgpu', model: 'forum', impl: 'netc', n: 1000, engine: 'fused' },
      { backend: 'webgpu', model: 'forum', impl: 'netc', n: 100000, engine: 'fused' },
      { backend: 'webgpu', model: 'lenet', impl: 'netc', n: 8, engine: 'fused' },
      { backend: 'webgpu', model: 'lenet', impl: 'netc', n: 30, engine: 'fused' },
      { backend: 'webgpu', model: 'forum', impl: 'netc', n: 15 },
      { backend: 'webgpu', model: 'forum', impl: 'netc', n: 100 },
      { backend: 'webgpu', model: 'forum', impl: 'netc', n: 1000 },
      { backend: 'webgpu', model: 'forum', impl: 'netc', n: 10000 },
      { backend: 'webgpu', model: 'forum', impl: 'naive', n: 15, members: 15 },
      { backend: 'webgpu', model: 'lenet', impl: 'netc', n: 1 },
      { backend: 'webgpu', model: 'lenet', impl: 'netc', n: 8 },
      { backend: 'webgpu', model: 'lenet', impl: 'netc', n: 30 },
      { backend: 'webgpu', model: 'lenet', impl: 'netc', n: 100 },
      { backend: 'webgpu', model: 'lenet', impl: 'naive', n: 30, members: 3 },
      { backend: 'webgpu', model: 'forum', impl: 'netc', n: 100000 },
    ];
const wasmConfigs: Config[] = quick
  ? [
      { backend: 'wasm', model: 'forum', impl: 'netc', n: 15, engine: 'fused' },
      { backend: 'wasm', model: 'forum', impl: 'netc', n: 15 },
      { backend: 'wasm', model: 'lenet', impl: 'netc', n: 1 },
    ]
  : [
      { backend: 'wasm', model: 'forum', impl: 'netc', n: 15, engine: 'fused' },
      { backend: 'wasm', model: 'forum', impl: 'netc', n: 1000, engine: 'fused' },
      { backend: 'wasm', model: 'forum', impl: 'netc', n: 100000, engine: 'fused' },
      { backend: 'wasm', model: 'forum', impl: 'netc', n: 15 },
      { backend: 'wasm', model: 'forum', impl: 'netc', n: 1000 },
      { backend: 'wasm', model: 'forum', impl: 'naive', n: 15, members: 15 },
      { backend: 'wasm', model: 'lenet', impl: 'netc', n: 30, engine: 'fused' },
      { backend: 'wasm', model: 'lenet', impl: 'netc', n: 30 },
      { backend: 'wasm', model: 'lenet', impl: 'naive', n: 30, members: 3 },
    ];

/** The .wasm files: next to the bundle (bench/gpu.sh pack copies them to wasm/), or in node_modules. */
function wasmDir(): string {
  for (const dir of [process.env.NETC_WASM_DIR, join(here, 'wasm'), join(here, '..', 'node_modules', '@tensorflow', 'tfjs-backend-wasm', 'dist')]) {
    if (dir && existsSync(join(dir, 'tfjs-backend-wasm-simd.wasm'))) return dir;
  }
  throw new Error('the .wasm files of @tensorflow/tfjs-backend-wasm were not found (set NETC_WASM_DIR)');
}

async function useBackend(backend: Backend): Promise<string> {
  if (backend === 'webgpu') {
    let line = '';
    await selectBackend('webgpu', { log: (l) => (line = l) });
    return line;
  }
  setWasmPaths(wasmDir() + '/');
  if (!(await tfjs.setBackend('wasm'))) throw new Error('the wasm backend did not start');
  await tfjs.ready();
  registerWasmKernels(tfjs as unknown as TF);
  return `backend: wasm (${(await tfjs.env().getAsync('WASM_HAS_SIMD_SUPPORT')) ? 'SIMD' : 'no SIMD'}, single-threaded)`;
}

async function measure(c: Config): Promise<Row> {
  const tf = tfjs;
  const timing = c.model === 'forum' ? fast : slow;
  const { x, y } = makeBatch(tf, c.model);
  let last = NaN;
  let step: () => Promise<void>;
  let dispose: () => void;
  if (c.impl === 'netc') {
    const pop = buildPopulation(tf, c.model, 'grouped', c.n, c.engine ?? 'ops');
    if (pop.engine !== (c.engine ?? 'ops')) {
      pop.dispose();
      throw new Error(`engine ${c.engine} does not run here: ${pop.engineNote ?? 'no reason given'}`);
    }
    const batch = { kind: 'tensors', x, y } as const;
    step = async () => {
      const losses = pop.step(batch);
      last = mean(Array.from(await losses.data()));
      losses.dispose();
    };
    dispose = () => pop.dispose();
  } else {
    const members = c.members ?? c.n;
    const lossFn = (yp: tfjs.Tensor) => (c.model === 'forum' ? tf.metrics.binaryCrossentropy(y, yp) : tf.metrics.categoricalCrossentropy(y, yp));
    const nets = Array.from({ length: members }, () => ({ m: naiveModel(tf, c.model), opt: tf.train.adam(naiveLearningRate[c.model]) }));
    step = async () => {
      let sum = 0;
      for (const { m, opt } of nets) {
        const cost = opt.minimize(() => tf.mean(lossFn(m.apply(x) as tfjs.Tensor)) as tfjs.Scalar, true)!;
        sum += (await cost.data())[0];
        cost.dispose();
      }
      last = sum / members;
    };
    dispose = () => nets.forEach(({ m, opt }) => (m.dispose(), opt.dispose()));
  }
  try {
    const times = await timeSteps(step, timing, new MemorySampler());
    const scale = c.n / (c.members ?? c.n);
    return { ...c, msPerStep: median(times) * scale, msMin: Math.min(...times) * scale, steps: times.length, lastLoss: last };
  } finally {
    dispose();
    tf.dispose([x, y]);
  }
}

log(`netc GPU benchmark${quick ? ' (quick: a smoke run, not a measurement)' : ''}`);
log(`machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${platform()}-${arch()}; Node ${process.version}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')}; TF.js ${tfjs.version.tfjs}`);

const rows: Row[] = [];
const backends: Backend[] = wasmOnly ? ['wasm'] : ['webgpu', 'wasm'];
const notes: Record<string, string> = {};
for (const backend of backends) {
  let line: string;
  try {
    line = await useBackend(backend);
  } catch (error) {
    notes[backend] = `not available: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
    log(`${backend}: ${notes[backend]}`);
    continue;
  }
  notes[backend] = line;
  log(line);
  for (const c of backend === 'webgpu' ? gpuConfigs : wasmConfigs) {
    const label = `${c.backend} ${c.model} N=${c.n} ${c.impl === 'netc' ? `netc grouped ${c.engine ?? 'ops'}` : `naive loop${c.members && c.members < c.n ? ` (${c.members} trained, scaled)` : ''}`}`;
    if (elapsedS() > deadlineS) {
      rows.push({ ...c, skipped: `past the ${deadlineS} s deadline` });
      log(`  ${label}: skipped (past the ${deadlineS} s deadline)`);
      continue;
    }
    try {
      const r = await measure(c);
      rows.push(r);
      log(`  ${label}: ${fmt(r.msPerStep!)} ms/step, ${Math.round((c.n * 1000) / r.msPerStep!)} member-steps/s (median of ${r.steps}, min ${fmt(r.msMin!)}), loss ${r.lastLoss!.toFixed(4)}  [${elapsedS().toFixed(0)} s]`);
    } catch (error) {
      const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
      rows.push({ ...c, error: message });
      log(`  ${label}: FAILED ${message}`);
    }
  }
}

// ratios measured in this run
const find = (backend: Backend, model: ModelName, impl: 'netc' | 'naive', n: number, engine: 'ops' | 'fused' = 'ops') =>
  rows.find((r) => r.backend === backend && r.model === model && r.impl === impl && r.n === n && (impl === 'naive' || (r.engine ?? 'ops') === engine) && r.msPerStep !== undefined);
log('');
log('ratios in this run, against the op path (other ms / netc grouped on TF.js ops on webgpu; above 1x that is faster):');
for (const model of ['forum', 'lenet'] as ModelName[]) {
  for (const g of rows.filter((r) => r.backend === 'webgpu' && r.model === model && r.impl === 'netc' && (r.engine ?? 'ops') === 'ops' && r.msPerStep !== undefined)) {
    const parts: string[] = [];
    const naiveGpu = find('webgpu', model, 'naive', g.n);
    if (naiveGpu) parts.push(`naive loop on webgpu ${(naiveGpu.msPerStep! / g.msPerStep!).toFixed(1)}x`);
    const wasm = find('wasm', model, 'netc', g.n);
    if (wasm) parts.push(`netc ops on wasm ${(wasm.msPerStep! / g.msPerStep!).toFixed(2)}x`);
    const naiveWasm = find('wasm', model, 'naive', g.n);
    if (naiveWasm) parts.push(`naive loop on wasm ${(naiveWasm.msPerStep! / g.msPerStep!).toFixed(1)}x`);
    log(`  ${model} N=${g.n}: netc webgpu ops ${fmt(g.msPerStep!)} ms/step; ${parts.join(', ') || 'nothing else at this N'}`);
  }
}
log('');
log('the fused step (WGSL on webgpu, WebAssembly on wasm) against the op path, member-steps/s:');
for (const [model, n] of [...new Set(rows.filter((r) => r.engine === 'fused').map((r) => `${r.model} ${r.n}`))].map((k) => k.split(' '))) {
  const rate = (r?: Row) => (r ? `${Math.round((Number(n) * 1000) / r.msPerStep!)}` : '—');
  const m = model as ModelName;
  const [gf, go, wf] = [find('webgpu', m, 'netc', Number(n), 'fused'), find('webgpu', m, 'netc', Number(n)), find('wasm', m, 'netc', Number(n), 'fused')];
  log(`  ${model} N=${n}: webgpu fused WGSL ${rate(gf)}, webgpu ops ${rate(go)}${gf && go ? ` (${(go.msPerStep! / gf.msPerStep!).toFixed(1)}x)` : ''}, wasm fused ${rate(wf)}${gf && wf ? ` (webgpu fused / wasm fused ${(wf.msPerStep! / gf.msPerStep!).toFixed(2)}x)` : ''}`);
}
log(`total ${elapsedS().toFixed(1)} s`);
log(`RESULT ${JSON.stringify({ quick, node: process.version, arch: arch(), backends: notes, rows, seconds: elapsedS() })}`);
// Dawn keeps the process alive (its device and instance): leave once the results are out
process.exit(0);
