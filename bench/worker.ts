// Runs one benchmark job (a JSON argument, see lib.ts Job) in this process and prints its result as one
// line `RESULT {...}`. bench/bench.ts starts one worker per job, so each job's RSS is its own.
import { readFileSync } from 'node:fs';
import { selectBackend } from '../src/runtime/backend.js';
import { compile } from '../src/pipeline.js';
import { buildPopulation, makeBatch, mean, median, MemorySampler, naiveLoop, timeSteps, vmHwm, type CompileResult, type Job, type StepResult } from './lib.js';

async function runSteps(job: Extract<Job, { kind: 'netc' | 'naive' }>): Promise<StepResult> {
  const { tf } = await selectBackend(job.backend, { log: () => {} });
  const memory = new MemorySampler();
  const baselineRss = memory.sample();
  const { x, y } = makeBatch(tf, job.model);
  const t0 = performance.now();
  let step: () => Promise<void> | void;
  let lastLoss: () => number;
  let profileStep: (() => unknown) | undefined;
  if (job.kind === 'netc') {
    const pop = buildPopulation(tf, job.model, job.lowering, job.n);
    let last = NaN;
    step = () => {
      const losses = pop.trainStep(x, y);
      const values = losses.dataSync();
      losses.dispose();
      last = mean(Array.from(values));
    };
    lastLoss = () => last;
    profileStep = () => pop.trainStep(x, y);
  } else {
    ({ step, lastLoss } = naiveLoop(tf, job.model, job.members, job.method, x, y));
  }
  const setupMs = performance.now() - t0;
  memory.sample();
  const times = await timeSteps(step, job, memory);
  const mem = tf.memory();
  const result: StepResult = {
    msMedian: median(times),
    msMean: mean(times),
    msMin: Math.min(...times),
    steps: times.length,
    warmup: job.warmup,
    setupMs,
    baselineRss,
    peakRss: memory.peak,
    vmHwm: vmHwm(),
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
const result = job.kind === 'compile' ? runCompile(job) : await runSteps(job);
process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
