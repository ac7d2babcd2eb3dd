// Runs one benchmark job (a JSON argument, see lib.ts Job) in this process and prints its result as one
// line `RESULT {...}`. bench/bench.ts starts one worker per job, so each job's RSS is its own.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { selectBackend } from '../src/runtime/backend.js';
import { compile } from '../src/pipeline.js';
import { buildPopulation, engineMismatch, makeBatch, mean, median, MemorySampler, naiveLoop, timedSteps, vmHwm, type CompileResult, type Job, type StepResult, type TrainData, type TrainRunResult, type Unavailable } from './lib.js';
import type { Population } from '../src/runtime/population.js';

async function runSteps(job: Extract<Job, { kind: 'netc' | 'naive' }>): Promise<StepResult | Unavailable> {
  const { tf } = await selectBackend(job.backend, { log: () => {} });
  const memory = new MemorySampler();
  const baselineRss = memory.sample();
  const { x, y } = makeBatch(tf, job.model);
  const t0 = performance.now();
  let step: () => Promise<void> | void;
  let lastLoss: () => number;
  let profileStep: (() => unknown) | undefined;
  if (job.kind === 'netc') {
    let pop: Population;
    try {
      pop = buildPopulation(tf, job.model, job.lowering, job.n, job.engine);
    } catch (e) {
      // the fused engine may refuse a model it does not cover: the row says why instead of failing the run
      if (job.engine === 'fused') return { unavailable: `the population would not build with engine 'fused': ${(e as Error).message}` };
      throw e;
    }
    const mismatch = engineMismatch(job.engine, pop);
    if (mismatch !== undefined) {
      if (job.engine === 'fused') return { unavailable: mismatch };
      throw new Error(mismatch);
    }
    let last = NaN;
    // a GPU backend reads back asynchronously (webgpu in Node has no dataSync)
    // one batch object for every step: the step's argument costs nothing per call
    const batch = { kind: 'tensors', x, y } as const;
    step =
      job.backend === 'webgpu'
        ? async () => {
            const losses = pop.step(batch);
            const values = await losses.data();
            losses.dispose();
            last = mean(Array.from(values));
          }
        : () => {
            const losses = pop.step(batch);
            const values = losses.dataSync();
            losses.dispose();
            last = mean(Array.from(values));
          };
    lastLoss = () => last;
    profileStep = () => pop.step(batch);
  } else {
    ({ step, lastLoss } = naiveLoop(tf, job.model, job.members, job.method, x, y));
  }
  const setupMs = performance.now() - t0;
  memory.sample();
  const timed = await timedSteps(step, job, memory);
  const mem = tf.memory();
  const result: StepResult = {
    ...timed,
    setupMs,
    baselineRss,
    tfBytes: mem.numBytes,
    tfTensors: mem.numTensors,
    lastLoss: lastLoss(),
  };
  if (job.kind === 'netc' && job.profile && profileStep) {
    const info = await tf.profile(profileStep as () => never);
    const kernels: Record<string, [number, number]> = {};
    let total = 0;
    for (const k of info.kernels) {
      const ms = typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0;
      const entry = (kernels[k.name] ??= [0, 0]);
      entry[0] += ms;
      entry[1] += 1;
      // a custom-gradient op is profiled as one kernel whose time includes the kernels it runs
      if (k.name !== 'forward') total += ms;
    }
    (info.result as unknown as { dispose(): void }).dispose();
    result.profile = { kernels, totalKernelMs: total, kernelCount: info.kernels.length };
  }
  return result;
}

/** The largest RSS sampled from the training's first line until summary.json appeared (its last checkpoint written). */
function trainingPeak(samples: { at: number; rss: number }[], from: number | undefined, to: number | undefined): number | undefined {
  if (from === undefined) throw new Error('netc train printed no "training ..." line to time the training from');
  const inside = samples.filter((s) => s.at >= from && (to === undefined || s.at <= to));
  // none: the training was over before a timer could run (too short to say)
  return inside.length > 1 ? Math.max(...inside.map((s) => s.rss)) : undefined;
}

/**
 * `bin/netc.js train` run as a user's `npx netc` runs it (by its `#!` line, with the node flags there), in a
 * process of its own, its RSS read from /proc/PID/status every 25 ms (the training's window as runTrain's: its
 * "training" line to summary.json), its peak (VmHWM) as it exits (bench/vmhwm.cjs, preloaded, prints it); the
 * numbers are its summary.json's.
 */
async function runTrainCli(job: Extract<Job, { kind: 'train' }>): Promise<TrainRunResult> {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const out = mkdtempSync(join(tmpdir(), 'netc-bench-train-'));
  const samples: { at: number; rss: number }[] = [];
  let trainingFrom: number | undefined;
  let trainedAt: number | undefined;
  let talk = '';
  try {
    const t0 = performance.now();
    const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${JSON.stringify(join(root, 'bench', 'vmhwm.cjs'))}`.trim() };
    const child = spawn(join(root, 'bin', 'netc.js'), ['train', job.file, ...job.args, '--out', out, '--force'], { stdio: ['ignore', 'pipe', 'pipe'], env });
    child.stdout.on('data', (d: Buffer) => void (talk += d));
    child.stderr.on('data', (d: Buffer) => {
      if (trainingFrom === undefined && /(^|\n)training /.test(talk + d)) trainingFrom = performance.now();
      talk += d;
    });
    const status = () => {
      try {
        return readFileSync(`/proc/${child.pid}/status`, 'utf8');
      } catch {
        return '';
      }
    };
    const sampler = setInterval(() => {
      if (trainedAt === undefined && existsSync(join(out, 'summary.json'))) trainedAt = performance.now();
      const rss = /VmRSS:\s+(\d+) kB/.exec(status());
      if (rss) samples.push({ at: performance.now(), rss: Number(rss[1]) * 1024 });
    }, 25);
    const code = await new Promise<number | null>((done) => child.on('close', done));
    clearInterval(sampler);
    const wallMs = performance.now() - t0;
    if (code !== 0) throw new Error(`netc train exited with ${code}: ${talk.trim().split('\n').slice(-3).join(' | ')}`);
    const hwm = /netc-bench VmHWM (\d+) kB/.exec(talk);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    return {
      seconds: summary.train_seconds,
      memberStepsPerSecond: summary.member_steps_per_second,
      steps: summary.steps,
      members: summary.members,
      backend: summary.backend,
      lowering: summary.lowering,
      engine: typeof summary.engine === 'string' ? summary.engine : null,
      wallMs,
      baselineRss: samples[0]?.rss ?? NaN,
      peakRss: hwm ? Number(hwm[1]) * 1024 : Math.max(...samples.map((s) => s.rss)),
      ...(job.sampleRss ? { trainingPeakRss: trainingPeak(samples, trainingFrom, trainedAt) } : {}),
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** `netc train` from the sources, in this process; the numbers are its summary.json's. */
async function runTrain(job: Extract<Job, { kind: 'train' }>): Promise<TrainRunResult> {
  if (job.cli) return runTrainCli(job);
  // imported here, not above, so that the step jobs' processes hold no more than they did; from dist/, as
  // `npx netc train` runs it (through tsx the same code trains about twice as slowly), which bench.ts builds
  const { main } = (await import(pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli', 'main.js')).href)) as typeof import('../src/cli/main.js');
  const memory = new MemorySampler();
  const baselineRss = memory.sample();
  const out = mkdtempSync(join(tmpdir(), 'netc-bench-train-'));
  let talk = '';
  // with sampleRss: RSS every 50 ms (the trainer lets timers run about every 50 ms), and when training began
  const samples: { at: number; rss: number }[] = [];
  let trainingFrom: number | undefined;
  const io = {
    out: (t: string) => void (talk += t),
    err: (t: string) => {
      if (trainingFrom === undefined && t.startsWith('training ')) trainingFrom = performance.now();
      if (job.sampleRss) samples.push({ at: performance.now(), rss: process.memoryUsage().rss });
      talk += t;
    },
  };
  // the training's window: from its first line to summary.json (written after the last checkpoint)
  let trainedAt: number | undefined;
  const sampler = job.sampleRss
    ? setInterval(() => {
        if (trainedAt === undefined && existsSync(join(out, 'summary.json'))) trainedAt = performance.now();
        samples.push({ at: performance.now(), rss: process.memoryUsage().rss });
      }, 50)
    : undefined;
  try {
    const t0 = performance.now();
    const code = await main(['train', job.file, ...job.args, '--out', out, '--force'], io);
    const wallMs = performance.now() - t0;
    if (sampler) clearInterval(sampler);
    memory.sample();
    if (code !== 0) throw new Error(`netc train exited with ${code}: ${talk.trim().split('\n').slice(-3).join(' | ')}`);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    return {
      seconds: summary.train_seconds,
      memberStepsPerSecond: summary.member_steps_per_second,
      steps: summary.steps,
      members: summary.members ?? summary.member_ids?.length ?? NaN,
      backend: summary.backend,
      lowering: summary.lowering,
      engine: typeof summary.engine === 'string' ? summary.engine : null,
      wallMs,
      baselineRss,
      peakRss: Math.max(memory.peak, vmHwm() ?? 0),
      ...(job.sampleRss ? { trainingPeakRss: trainingPeak(samples, trainingFrom, trainedAt) } : {}),
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The training split of a file's data and every epoch's order, as the trainer draws them (trainer.ts: epochOrder with the run's seed). */
async function runDataset(job: Extract<Job, { kind: 'dataset' }>): Promise<{ count: number; epochs: number }> {
  const [{ epochOrder }, { loadDataset }, { splitData }] = await Promise.all([import('../src/data/batches.js'), import('../src/data/load.js'), import('../src/data/split.js')]);
  const state = compile(readFileSync(job.file, 'utf8'), job.file);
  const program = state.program;
  if (!program?.train || !state.ensemble) throw new Error(`${job.file} did not compile: ${state.diagnostics.map((d) => d.message).join('; ')}`);
  const train = program.train;
  const seed = program.ensemble.seed;
  const { train: ds } = splitData(await loadDataset(train.data, { baseDir: dirname(job.file), seed }), train.validation, train.test);
  if (ds.featureShape.join() !== '2' || ds.labels.kind !== 'classes' || ds.labels.classes !== 2) throw new Error(`${job.file}: a dataset job wants [2] features and two classes`);
  const orders = Array.from({ length: job.epochs }, (_, e) => Array.from(epochOrder(ds.count, train.shuffle, seed, e)));
  const data: TrainData = { count: ds.count, x: Array.from(ds.x), y: Array.from(ds.y), batch: train.batch, orders };
  writeFileSync(job.out, JSON.stringify(data));
  return { count: ds.count, epochs: job.epochs };
}

function runCompile(job: Extract<Job, { kind: 'compile' }>): CompileResult {
  const files = job.files.map((file) => {
    const source = readFileSync(file, 'utf8');
    const once = () => {
      const t0 = performance.now();
      const state = compile(source, file);
      const ms = performance.now() - t0;
      if (!state.ensemble) throw new Error(`${file} did not compile: ${state.diagnostics.map((d) => d.message).join('; ')}`);
      return { ms, members: state.ensemble.members };
    };
    const cold = once();
    const runs = Array.from({ length: job.runs }, () => once().ms);
    return { file, members: cold.members, coldMs: cold.ms, medianMs: median(runs), runs: job.runs };
  });
  return { files };
}

const job = JSON.parse(process.argv[2]) as Job;
const result = job.kind === 'compile' ? runCompile(job) : job.kind === 'train' ? await runTrain(job) : job.kind === 'dataset' ? await runDataset(job) : await runSteps(job);
process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
