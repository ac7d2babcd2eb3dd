// npm run bench [-- --quick] [-- --out DIR] [-- --only forum,lenet,compile,scale] [-- --no-torch]
//
// Time per training step of netc's fused ensembles against a naive loop of separate tf.sequential models,
// and against the same workloads in PyTorch on one thread (bench/torch_bench.py, where `import torch` works),
// memory per configuration, and compile time of every example; writes DIR/results.json and DIR/RESULTS.md
// (DIR: bench/, or bench/quick/ for the quick smoke run, so that it never overwrites a full run's). Every configuration runs in a worker process of its own (bench/worker.ts), one after
// another, so that its peak RSS is its own and no two measurements share the machine.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import type { Lowering } from '../src/layers/forward.js';
import type { BackendChoice, CompileResult, Job, ModelName, NaiveMethod, StepResult, Timing, TorchJob, TorchMethod, TorchResult } from './lib.js';
import { measureScale, scaleRatio, type ScalePlan, type ScaleRow } from './scale.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);

// ---- options --------------------------------------------------------------------------------------

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const outIndex = argv.indexOf('--out');
const outDir = outIndex >= 0 ? argv[outIndex + 1] : quick ? join(here, 'quick') : here;
const onlyIndex = argv.indexOf('--only');
const only = new Set(onlyIndex >= 0 ? argv[onlyIndex + 1].split(',') : ['forum', 'lenet', 'compile', 'scale']);
const noTorch = argv.includes('--no-torch');

/** The measured configurations. Quick mode: small sizes, short budgets (a smoke run). */
const plan = quick
  ? {
      forumN: [1, 5, 15],
      forumSmallLoweringsUpTo: 15,
      naiveMaxMembers: 15,
      lenetN: [1, 2],
      lenetOtherLoweringsAt: [2],
      lenetCpuCheck: false,
      fast: { warmup: 2, budgetMs: 150, minSteps: 5, maxSteps: 2000 } as Timing,
      slow: { warmup: 1, budgetMs: 200, minSteps: 2, maxSteps: 20 } as Timing,
      compileRuns: 3,
      scale: { lenet: [{ members: 2, steps: 4 }], forum: [] } as ScalePlan,
      // a tiny PyTorch row: the forum MLP as bmm at N=15
      torch: { forum: { 15: ['bmm'] }, lenet: {} } as TorchPlan,
      torchLoopMaxMembers: 15,
    }
  : {
      forumN: [1, 5, 15, 100, 1000],
      forumSmallLoweringsUpTo: 100,
      naiveMaxMembers: 100,
      lenetN: [1, 8, 30],
      lenetOtherLoweringsAt: [8],
      lenetCpuCheck: true,
      fast: { warmup: 5, budgetMs: 1000, minSteps: 10, maxSteps: 5000 } as Timing,
      slow: { warmup: 1, budgetMs: 3000, minSteps: 5, maxSteps: 30 } as Timing,
      compileRuns: 9,
      scale: { lenet: [{ members: 8, steps: 32 }, { members: 30, steps: 10 }], forum: [{ members: 1000, steps: 200 }], repeats: 3 } as ScalePlan,
      torch: {
        forum: { 15: ['bmm', 'vmap', 'loop'], 100: ['bmm', 'vmap', 'loop'], 1000: ['bmm', 'vmap', 'loop'] },
        lenet: { 1: ['loop'], 8: ['loop', 'grouped'], 30: ['loop', 'grouped'] },
      } as TorchPlan,
      // the PyTorch loop at N > this trains this many models per step and is scaled, as the naive loop is
      torchLoopMaxMembers: 100,
    };

/** Which PyTorch methods run at which N, per model. */
type TorchPlan = Record<ModelName, Record<number, TorchMethod[]>>;

// ---- running workers ------------------------------------------------------------------------------

interface Row {
  model: ModelName;
  impl: 'naive' | 'netc' | 'torch';
  lowering?: Lowering;
  /** torch rows: 'torch' (PyTorch on the CPU, one thread) */
  backend: BackendChoice | 'torch';
  method?: NaiveMethod | TorchMethod;
  n: number;
  /** naive: models really trained (fewer than n: msPerStep is extrapolated) */
  measuredMembers: number;
  extrapolated: boolean;
  /** ms per step for all n members (extrapolated where `extrapolated`) */
  msPerStep: number;
  /** the measured ms per step of measuredMembers (torch rows: no tfBytes) */
  measured?: StepResult | TorchResult;
  error?: string;
  membersPerGbRss?: number;
  membersPerGbTf?: number;
}

async function runWorker<T>(job: Job): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'worker.ts'), JSON.stringify(job)], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (code === 0 && line) resolve(JSON.parse(line.slice(7)) as T);
      else reject(new Error(`worker exited with ${code}: ${lastLines(err || out)}`));
    });
  });
}

function lastLines(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '' && l.length < 400);
  return lines.slice(-3).join(' | ');
}

const log = (line: string) => process.stdout.write(line + '\n');
const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3));
const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

// ---- PyTorch --------------------------------------------------------------------------------------

const torchScript = join(here, 'torch_bench.py');
/** The threads a PyTorch process may use: one, as the wasm backend has. */
const torchEnv = { ...process.env, OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1' };

/**
 * A Python that can import torch, or why there is none: NETC_BENCH_PYTHON when set, else python3 on the
 * PATH, then Debian's /usr/bin/python3 (where apt's python3-torch lives, when PATH's python3 is another).
 */
function findTorch(): { python: string; torch: string; vmap: string | null; python_version: string } | { why: string } {
  if (noTorch) return { why: '--no-torch' };
  const candidates = process.env.NETC_BENCH_PYTHON ? [process.env.NETC_BENCH_PYTHON] : ['python3', '/usr/bin/python3'];
  const failures: string[] = [];
  for (const python of candidates) {
    const r = spawnSync(python, [torchScript, '--probe'], { encoding: 'utf8', timeout: 120_000, env: torchEnv });
    const line = r.stdout?.split('\n').find((l) => l.startsWith('PROBE '));
    if (r.status === 0 && line) {
      const info = JSON.parse(line.slice(6)) as { torch: string; vmap: string | null; python: string };
      return { python, torch: info.torch, vmap: info.vmap, python_version: info.python };
    }
    const why = r.error ? (r.error as NodeJS.ErrnoException).code ?? r.error.message : lastLines(r.stderr ?? '').split(' | ').pop();
    failures.push(`${python}: ${why}`);
  }
  return { why: `no Python with torch (${failures.join('; ')})` };
}

function runTorch(python: string, job: TorchJob): Promise<TorchResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [torchScript, JSON.stringify(job)], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: torchEnv });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (code === 0 && line) resolve(JSON.parse(line.slice(7)) as TorchResult);
      else reject(new Error(`torch_bench.py exited with ${code}: ${lastLines(err || out)}`));
    });
  });
}

async function measure(row: Omit<Row, 'msPerStep' | 'measured' | 'extrapolated'>, job: Job | (() => Promise<TorchResult>)): Promise<Row> {
  const what = row.impl === 'naive' ? `naive ${row.method}` : row.impl === 'torch' ? `torch ${row.method}` : `netc ${row.lowering}`;
  const label = `${row.model} N=${row.n} ${what}${row.impl === 'torch' ? '' : ` on ${row.backend}`}`;
  try {
    const r = typeof job === 'function' ? await job() : await runWorker<StepResult>(job);
    const scale = row.n / row.measuredMembers;
    const tfBytes = 'tfBytes' in r ? r.tfBytes : undefined;
    const result: Row = {
      ...row,
      extrapolated: scale !== 1,
      msPerStep: r.msMedian * scale,
      measured: r,
      membersPerGbRss: row.measuredMembers / (Math.max(r.peakRss - r.baselineRss, 1) / 1e9),
      membersPerGbTf: tfBytes === undefined ? undefined : row.measuredMembers / (Math.max(tfBytes, 1) / 1e9),
    };
    const extra = result.extrapolated ? ` (extrapolated from ${row.measuredMembers} members: ${fmt(r.msMedian)} ms)` : '';
    log(`  ${label}: ${fmt(result.msPerStep)} ms/step${extra}, median of ${r.steps} (mean ${fmt(r.msMean * scale)}), peak RSS ${mb(r.peakRss)} MB${tfBytes === undefined ? '' : `, tf ${mb(tfBytes)} MB`}`);
    return result;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log(`  ${label}: FAILED ${message}`);
    return { ...row, extrapolated: false, msPerStep: NaN, error: message };
  }
}

// ---- the runs -------------------------------------------------------------------------------------

const started = performance.now();
const rows: Row[] = [];
const naiveChoice: Partial<Record<ModelName, { backend: BackendChoice; method: NaiveMethod; candidates: Row[]; note: string }>> = {};
let compileResult: CompileResult | undefined;
let compileError: string | undefined;

log(`netc benchmark${quick ? ' (quick mode: small sizes, short budgets; a smoke run, not a measurement)' : ''}`);
log(`machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; Node ${process.version}; load average at start ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
const loadAtStart = loadavg();

const torchFound = only.has('forum') || only.has('lenet') ? findTorch() : { why: 'no forum or lenet workload in --only' };
const torch = 'python' in torchFound ? torchFound : undefined;
const torchNote = torch
  ? `PyTorch ${torch.torch} (${torch.python}, Python ${torch.python_version}), one thread (torch.set_num_threads(1), OMP/MKL/OpenBLAS threads 1); vmap: ${torch.vmap ?? 'none'}`
  : `PyTorch not measured: ${(torchFound as { why: string }).why}. Install it to get the PyTorch anchors (Debian: apt-get install python3-torch)`;
log(torch ? `torch: ${torchNote}` : `torch: ${torchNote}; carrying on without it`);

/** The PyTorch configurations of a model at one N, measured right after netc's (so side by side in time). */
async function measureTorch(model: ModelName, n: number, timing: Timing): Promise<void> {
  if (!torch) return;
  for (const method of plan.torch[model][n] ?? []) {
    const members = method === 'loop' ? Math.min(n, plan.torchLoopMaxMembers) : n;
    const job: TorchJob = { model, method, n, members, ...timing, minSteps: method === 'loop' ? Math.min(timing.minSteps, 5) : timing.minSteps };
    rows.push(await measure({ model, impl: 'torch', backend: 'torch', method, n, measuredMembers: members }, () => runTorch(torch.python, job)));
  }
}

async function chooseNaive(model: ModelName, candidates: { backend: BackendChoice; method: NaiveMethod; timing: Timing }[]): Promise<void> {
  log(`${model}: the naive loop's fastest backend and method, at N=1`);
  const measured: Row[] = [];
  for (const c of candidates) {
    measured.push(await measure({ model, impl: 'naive', backend: c.backend, method: c.method, n: 1, measuredMembers: 1 }, { kind: 'naive', model, n: 1, members: 1, backend: c.backend, method: c.method, ...c.timing }));
  }
  const best = measured.filter((r) => Number.isFinite(r.msPerStep)).sort((a, b) => a.msPerStep - b.msPerStep)[0];
  if (!best) throw new Error(`no naive ${model} configuration ran`);
  const note = `naive loop: ${best.method === 'minimize' ? 'optimizer.minimize' : 'model.trainOnBatch'} on ${best.backend}, the fastest of ${measured.map((r) => `${r.method}/${r.backend} ${fmt(r.msPerStep)} ms`).join(', ')} at N=1`;
  log(`  -> ${note}`);
  naiveChoice[model] = { backend: best.backend as BackendChoice, method: best.method as NaiveMethod, candidates: measured, note };
}

if (only.has('forum')) {
  const t = plan.fast;
  await chooseNaive('forum', [
    { backend: 'cpu', method: 'trainOnBatch', timing: t },
    { backend: 'cpu', method: 'minimize', timing: t },
    { backend: 'wasm', method: 'trainOnBatch', timing: t },
    { backend: 'wasm', method: 'minimize', timing: t },
  ]);
  const naive = naiveChoice.forum!;
  for (const n of plan.forumN) {
    log(`forum N=${n}`);
    const members = Math.min(n, plan.naiveMaxMembers);
    const naiveTiming = { ...t, minSteps: Math.min(t.minSteps, 5) };
    rows.push(await measure({ model: 'forum', impl: 'naive', backend: naive.backend, method: naive.method, n, measuredMembers: members }, { kind: 'naive', model: 'forum', n, members, backend: naive.backend, method: naive.method, ...naiveTiming }));
    const lowerings: Lowering[] = n <= plan.forumSmallLoweringsUpTo ? ['grouped', 'blockdiag', 'loop'] : ['grouped'];
    for (const lowering of lowerings) {
      const profile = lowering === 'grouped' && n >= 15;
      rows.push(await measure({ model: 'forum', impl: 'netc', lowering, backend: 'wasm', n, measuredMembers: n }, { kind: 'netc', model: 'forum', lowering, n, backend: 'wasm', profile, ...t }));
    }
    await measureTorch('forum', n, t);
  }
}

if (only.has('lenet')) {
  const t = plan.slow;
  const candidates: { backend: BackendChoice; method: NaiveMethod; timing: Timing }[] = [
    { backend: 'wasm', method: 'trainOnBatch', timing: t },
    { backend: 'wasm', method: 'minimize', timing: t },
  ];
  // the cpu backend's Conv2DBackpropFilter takes seconds per step: two steps show it
  if (plan.lenetCpuCheck) candidates.push({ backend: 'cpu', method: 'minimize', timing: { warmup: 1, budgetMs: 0, minSteps: 1, maxSteps: 1 } });
  await chooseNaive('lenet', candidates);
  naiveChoice.lenet!.note +=
    '; wasm has no Conv2DBackpropFilter kernel of its own: the naive models train on wasm only because selectBackend registers netc\'s (src/kernels/wasm-kernels.ts)';
  if (!plan.lenetCpuCheck) naiveChoice.lenet!.note += '; cpu not measured in quick mode';
  const naive = naiveChoice.lenet!;
  for (const n of plan.lenetN) {
    log(`lenet N=${n}`);
    rows.push(await measure({ model: 'lenet', impl: 'naive', backend: naive.backend, method: naive.method, n, measuredMembers: n }, { kind: 'naive', model: 'lenet', n, members: n, backend: naive.backend, method: naive.method, ...t }));
    const lowerings: Lowering[] = plan.lenetOtherLoweringsAt.includes(n) ? ['grouped', 'blockdiag', 'loop'] : ['grouped'];
    for (const lowering of lowerings) {
      const profile = lowering === 'grouped' && n === plan.lenetN[plan.lenetN.length - 1];
      rows.push(await measure({ model: 'lenet', impl: 'netc', lowering, backend: 'wasm', n, measuredMembers: n }, { kind: 'netc', model: 'lenet', lowering, n, backend: 'wasm', profile, ...t }));
    }
    await measureTorch('lenet', n, t);
  }
}

let scaleRows: ScaleRow[] = [];
let scaleQueueNote: string | undefined;
if (only.has('scale')) {
  log('scale-out: netc train in one process, with --workers 2, and through a queue with 2 netc worker processes');
  const measured = await measureScale(join(root, 'bin', 'netc.js'), plan.scale, log);
  scaleRows = measured.rows;
  scaleQueueNote = measured.queueNote;
  if (scaleQueueNote) log(`  queue mode not measured: ${scaleQueueNote}`);
}

if (only.has('compile')) {
  log('compile time of examples/*.net (parse through verify-ensemble)');
  const files = readdirSync(join(root, 'examples'))
    .filter((f) => f.endsWith('.net'))
    .sort()
    .map((f) => `examples/${f}`);
  try {
    compileResult = await runWorker<CompileResult>({ kind: 'compile', files, runs: plan.compileRuns });
    for (const f of compileResult.files) log(`  ${f.file}: median ${fmt(f.medianMs)} ms of ${f.runs} (first, cold: ${fmt(f.coldMs)} ms)`);
  } catch (error) {
    compileError = error instanceof Error ? error.message : String(error);
    log(`  FAILED ${compileError}`);
  }
}

// ---- speed-ups and targets ------------------------------------------------------------------------

interface Target {
  name: string;
  required: string;
  measured: string;
  pass: boolean | null;
  value?: number;
}

const find = (model: ModelName, impl: 'naive' | 'netc', n: number, lowering?: Lowering) =>
  rows.find((r) => r.model === model && r.impl === impl && r.n === n && (impl === 'naive' || r.lowering === lowering) && Number.isFinite(r.msPerStep));
const torchRow = (model: ModelName, method: TorchMethod, n: number) => rows.find((r) => r.model === model && r.impl === 'torch' && r.method === method && r.n === n && Number.isFinite(r.msPerStep));
/** torch ms / netc grouped ms at the same N: >= 1 when netc is as fast as PyTorch or faster. */
const overTorch = (model: ModelName, n: number, method: TorchMethod, lowering: Lowering = 'grouped') => {
  const t = torchRow(model, method, n);
  const netc = find(model, 'netc', n, lowering);
  return t && netc ? t.msPerStep / netc.msPerStep : undefined;
};
const speedup = (model: ModelName, n: number, lowering: Lowering) => {
  const naive = find(model, 'naive', n);
  const netc = find(model, 'netc', n, lowering);
  return naive && netc ? naive.msPerStep / netc.msPerStep : undefined;
};

const targets: Target[] = [];
const ratioTarget = (model: ModelName, n: number, required: number, what: string) => {
  const s = speedup(model, n, 'grouped');
  targets.push({ name: `${what}: naive / netc grouped at N=${n}`, required: `>= ${required}x`, measured: s === undefined ? 'not measured' : `${s.toFixed(1)}x`, pass: s === undefined ? null : s >= required, value: s });
};
const notMeasuredTorch = torch ? 'not measured' : 'not measured (no PyTorch here)';
/** netc grouped at least as fast as a PyTorch configuration on the same single core. */
const torchTarget = (model: ModelName, n: number, method: TorchMethod, what: string) => {
  const r = overTorch(model, n, method);
  const t = torchRow(model, method, n);
  const g = find(model, 'netc', n, 'grouped');
  targets.push({
    name: `${what}: torch ${method} / netc grouped at N=${n}, ms per step, one core each`,
    required: '>= 1.0x (netc <= torch)',
    measured: r === undefined || !t || !g ? notMeasuredTorch : `${r.toFixed(2)}x (netc ${fmt(g.msPerStep)} ms, torch ${fmt(t.msPerStep)} ms${t.extrapolated ? ', extrapolated' : ''})`,
    pass: r === undefined ? null : r >= 1,
    value: r,
  });
};
ratioTarget('forum', 15, 20, 'forum MLP');
ratioTarget('forum', 100, 50, 'forum MLP');
ratioTarget('forum', 1000, 150, 'forum MLP');
torchTarget('forum', 100, 'bmm', 'forum MLP');
torchTarget('forum', 1000, 'bmm', 'forum MLP');
{
  const g = find('lenet', 'netc', 30, 'grouped');
  targets.push({ name: 'LeNet-5: netc grouped at N=30 on wasm, time per step', required: '<= 2000 ms', measured: g ? `${fmt(g.msPerStep)} ms` : 'not measured', pass: g ? g.msPerStep <= 2000 : null, value: g?.msPerStep });
  ratioTarget('lenet', 30, 10, 'LeNet-5');
  torchTarget('lenet', 30, 'loop', 'LeNet-5');
  const naive = find('lenet', 'naive', 30);
  const rss = g?.measured && naive?.measured ? g.measured.peakRss / naive.measured.peakRss : undefined;
  targets.push({
    name: 'LeNet-5: peak RSS of netc grouped / the naive loop at N=30',
    required: '<= 2.0x',
    measured: rss === undefined ? 'not measured' : `${rss.toFixed(2)}x (${mb(g!.measured!.peakRss)} MB vs ${mb(naive!.measured!.peakRss)} MB)`,
    pass: rss === undefined ? null : rss <= 2,
    value: rss,
  });
}
for (const w of plan.scale.lenet) {
  const r = scaleRatio(scaleRows, 'LeNet-5', w.members, '--workers 2', 'one process');
  targets.push({ name: `LeNet-5 x${w.members}: --workers 2 / one process, member-steps/s`, required: '>= 1.6x', measured: r === undefined ? 'not measured' : `${r.toFixed(2)}x`, pass: r === undefined ? null : r >= 1.6, value: r });
  const q = scaleRatio(scaleRows, 'LeNet-5', w.members, 'queue, 2 workers', '--workers 2');
  targets.push({ name: `LeNet-5 x${w.members}: queue with 2 workers / --workers 2`, required: '>= 0.9x', measured: q === undefined ? `not measured${scaleQueueNote ? ` (${scaleQueueNote})` : ''}` : `${q.toFixed(2)}x`, pass: q === undefined ? null : q >= 0.9, value: q });
}
for (const w of plan.scale.forum) {
  const r = scaleRatio(scaleRows, 'forum MLP', w.members, '--workers 2', 'one process');
  targets.push({ name: `forum MLP x${w.members}: --workers 2 / one process (reported)`, required: 'report', measured: r === undefined ? 'not measured' : `${r.toFixed(2)}x`, pass: null, value: r });
}
if (compileResult) {
  const worst = compileResult.files.reduce((a, b) => (b.medianMs > a.medianMs ? b : a));
  const worstCold = compileResult.files.reduce((a, b) => (b.coldMs > a.coldMs ? b : a));
  targets.push({
    name: 'compiling any example (median)',
    required: '< 1000 ms',
    measured: `${fmt(worst.medianMs)} ms (${worst.file}); slowest first run ${fmt(worstCold.coldMs)} ms`,
    pass: worst.medianMs < 1000 && worstCold.coldMs < 1000,
    value: worst.medianMs,
  });
}

const seconds = (performance.now() - started) / 1000;
log('');
for (const line of speedTables()) log(line);
log('targets (naive / netc at the same N in this run; netc on wasm, the embedded default):');
for (const t of targets) log(`  ${t.pass === null ? 'n/a ' : t.pass ? 'PASS' : 'MISS'}  ${t.name}: ${t.measured} (target ${t.required})`);
log(`total ${seconds.toFixed(1)} s`);

// ---- files ----------------------------------------------------------------------------------------

const require = createRequire(import.meta.url);
const version = (pkg: string) => {
  try {
    return (require(`${pkg}/package.json`) as { version: string }).version;
  } catch {
    return undefined;
  }
};

const results = {
  generated: new Date().toISOString(),
  quick,
  seconds,
  machine: { cpu: cpus()[0]?.model, cores: cpus().length, memoryBytes: totalmem(), node: process.version, platform: process.platform, loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadavg() },
  versions: { tfjs: version('@tensorflow/tfjs'), tfjsBackendWasm: version('@tensorflow/tfjs-backend-wasm'), torch: torch?.torch ?? null },
  torch: {
    available: torch !== undefined,
    note: torchNote,
    python: torch?.python ?? null,
    blas: (rows.find((r) => r.impl === 'torch' && r.measured)?.measured as TorchResult | undefined)?.blas ?? null,
  },
  method: {
    step: 'one optimizer step of every member on the same batch, then every member\'s loss read back (dataSync); warm-up steps first, then steps are timed until the budget is spent; msPerStep is the median (mean also recorded)',
    timing: { fast: plan.fast, slow: plan.slow },
    memory: 'peakRss: the largest process.memoryUsage().rss sampled after building and after every step, in a worker process of its own; baselineRss: after the backend started, before building; tfBytes: tf.memory().numBytes between steps; membersPerGbRss = measured members / ((peakRss - baselineRss) / 1e9), membersPerGbTf = measured members / (tfBytes / 1e9)',
    naive: naiveChoice,
    extrapolation: `the naive loop at N > ${plan.naiveMaxMembers} trains ${plan.naiveMaxMembers} models per step and is scaled by N / ${plan.naiveMaxMembers}; the PyTorch loop at N > ${plan.torchLoopMaxMembers} likewise`,
    torch:
      'bench/torch_bench.py, one Python process per configuration, one thread; the same step (one Adam step of every member on the same batch, every loss read back with .tolist()/.item()) and the same timing rule; peakRss from /proc/self/statm sampled after every step. forum: bmm = stacked weights and torch.baddbmm, vmap = functorch.vmap(grad_and_value) of one functional model, loop = N nn.Sequential models with an Adam each; lenet: loop = N nn.Module LeNets, grouped = conv2d(groups=N) then baddbmm for the dense layers; LeNet\'s loss is cross_entropy on logits (log-softmax + NLL, the same function as softmax then categorical cross-entropy)',
  },
  rows,
  speedups: rows
    .filter((r) => r.impl === 'netc')
    .map((r) => ({
      model: r.model,
      n: r.n,
      lowering: r.lowering,
      speedup: speedup(r.model, r.n, r.lowering!) ?? null,
      overTorch: Object.fromEntries((plan.torch[r.model][r.n] ?? []).map((m) => [m, overTorch(r.model, r.n, m, r.lowering!) ?? null])),
    })),
  compile: compileResult ?? { error: compileError },
  scale: { rows: scaleRows, queueNote: scaleQueueNote },
  targets,
};
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, 'results.json'), JSON.stringify(results, null, 2) + '\n');
writeFileSync(join(outDir, 'RESULTS.md'), markdown());
log(`wrote ${join(outDir, 'results.json')} and ${join(outDir, 'RESULTS.md')}`);

function markdown(): string {
  const out: string[] = [];
  const mark = (p: boolean | null) => (p === null ? 'n/a' : p ? 'PASS' : 'MISS');
  out.push('# netc benchmark results', '');
  out.push(`Generated by \`npm run bench${quick ? ' -- --quick' : ''}\` on ${results.generated.slice(0, 10)} in ${seconds.toFixed(0)} s${quick ? ' — **quick mode: small sizes and short budgets, a smoke run, not a measurement**' : ''}.`);
  out.push(`Machine: ${results.machine.cpu}, ${results.machine.cores} cores, Node ${process.version}, TF.js ${results.versions.tfjs} (wasm backend: SIMD, single-threaded); load average ${loadAtStart.map((l) => l.toFixed(1)).join(' ')} at the start, ${results.machine.loadAverageAtEnd.map((l) => l.toFixed(1)).join(' ')} at the end.`);
  out.push(`${torchNote}${results.torch.blas ? `; BLAS: ${results.torch.blas.join(', ')}` : ''}.`, '');
  out.push('Time per training step: one optimizer step of every member on the same batch, every loss read back; median of the timed steps after warm-up. netc runs on wasm, the embedded default backend. Speed-up = naive ms / netc ms at the same N.', '');
  out.push(...speedTables());
  if (rows.length > 0) {
    out.push('## Memory', '');
    out.push('Each configuration in a process of its own. Peak RSS: largest `process.memoryUsage().rss` sampled (torch: /proc/self/statm); over baseline: minus the RSS after the backend started (torch: after `import torch`). tf: `tf.memory().numBytes` between steps. Members per GB from each (naive N > measured: the measured models).', '');
    out.push('| model | N | implementation | peak RSS MB | over baseline MB | tf MB | members/GB (RSS) | members/GB (tf) |');
    out.push('|---|---:|---|---:|---:|---:|---:|---:|');
    for (const r of rows) {
      if (!r.measured) continue;
      const m = r.measured;
      const measuredNote = r.extrapolated ? `, ${r.measuredMembers} measured` : '';
      const impl = r.impl === 'naive' ? `naive ${r.method} (${r.backend})${measuredNote}` : r.impl === 'torch' ? `torch ${r.method}${measuredNote}` : `netc ${r.lowering}`;
      const tf = 'tfBytes' in m ? (m.tfBytes / 1e6).toFixed(3) : '—';
      out.push(`| ${r.model} | ${r.n} | ${impl} | ${mb(m.peakRss)} | ${mb(m.peakRss - m.baselineRss)} | ${tf} | ${Math.round(r.membersPerGbRss!)} | ${r.membersPerGbTf === undefined ? '—' : Math.round(r.membersPerGbTf)} |`);
    }
    out.push('');
  }
  if (compileResult) {
    out.push('## Compile time (parse, check, lower, verify, widen, verify-ensemble)', '');
    out.push(`| example | members | median ms (${plan.compileRuns} runs) | first run ms |`);
    out.push('|---|---:|---:|---:|');
    for (const f of compileResult.files) out.push(`| ${f.file} | ${f.members} | ${fmt(f.medianMs)} | ${fmt(f.coldMs)} |`);
    out.push('');
  }
  if (scaleRows.length > 0) {
    out.push('## Scale-out (member-steps/s of `netc train` on wasm, from summary.json)', '');
    out.push('| workload | members | steps | mode | member-steps/s |');
    out.push('|---|---:|---:|---|---:|');
    for (const r of scaleRows) {
      const runs = r.samples && r.samples.length > 1 ? ` (runs: ${r.samples.map((x) => x.toFixed(1)).join(', ')})` : '';
      out.push(`| ${r.workload} | ${r.members} | ${r.steps} | ${r.mode} | ${r.memberStepsPerSecond === null ? `failed: ${r.error}` : `${r.memberStepsPerSecond.toFixed(1)}${runs}`} |`);
    }
    out.push('', 'Each run starts its own processes (`--workers` forks its children; the queue mode gets two fresh `netc worker`s), the modes run in turns, and a row is the median of its runs.');
    if (scaleQueueNote) out.push('', `Queue mode not measured: ${scaleQueueNote}.`);
    out.push('');
  }
  out.push('## Targets', '');
  out.push('| target | required | measured | |');
  out.push('|---|---|---|---|');
  for (const t of targets) out.push(`| ${t.name} | ${t.required} | ${t.measured} | ${mark(t.pass)} |`);
  out.push('');
  const profiled = rows.filter((r) => r.measured && 'profile' in r.measured && r.measured.profile);
  if (profiled.length > 0) {
    out.push('## Kernel profiles (tf.profile of one step, netc grouped)', '');
    out.push('`forward` is a custom-gradient op: its time includes the kernels it runs, so it is left out of the total.', '');
    for (const r of profiled) {
      const p = (r.measured as StepResult).profile!;
      const top = Object.entries(p.kernels)
        .sort((a, b) => b[1][0] - a[1][0])
        .slice(0, 8)
        .map(([k, [ms, calls]]) => `${k} ${fmt(ms)} ms/${calls}`)
        .join(', ');
      out.push(`- ${r.model} N=${r.n}: ${p.kernelCount} kernels, ${fmt(p.totalKernelMs)} ms of kernel time; ${top}`);
    }
    out.push('');
  }
  out.push('See bench/NOTES.md for what was tried to meet the targets.', '');
  return out.join('\n');
}

/** The time-per-step tables with speed-ups, one per model (also printed at the end of a run). */
function speedTables(): string[] {
  const out: string[] = [];
  for (const model of ['forum', 'lenet'] as ModelName[]) {
    const mrows = rows.filter((r) => r.model === model);
    if (mrows.length === 0) continue;
    out.push(model === 'forum' ? '## Forum problem: 2-20-1 MLP (sigmoid), binary cross-entropy, Adam, batch 5' : '## LeNet-5 (examples/lenet.net), batch 64, Adam', '');
    if (naiveChoice[model]) out.push(`Naive baseline: ${naiveChoice[model]!.note}.`, '');
    const ns = [...new Set(mrows.map((r) => r.n))].sort((a, b) => a - b);
    out.push('| N | naive ms/step | netc grouped ms/step | speed-up | netc blockdiag ms/step | speed-up | netc loop ms/step | speed-up |');
    out.push('|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const n of ns) {
      const naive = find(model, 'naive', n);
      const cell = (l: Lowering) => {
        const r = find(model, 'netc', n, l);
        const s = speedup(model, n, l);
        return r ? [fmt(r.msPerStep), s === undefined ? '' : `${s.toFixed(1)}x`] : ['—', ''];
      };
      const naiveCell = naive ? `${fmt(naive.msPerStep)}${naive.extrapolated ? `*` : ''} (${naive.method}, ${naive.backend})` : '—';
      out.push(`| ${n} | ${naiveCell} | ${cell('grouped').join(' | ')} | ${cell('blockdiag').join(' | ')} | ${cell('loop').join(' | ')} |`);
    }
    if (mrows.some((r) => r.extrapolated)) {
      const e = mrows.find((r) => r.extrapolated)!;
      out.push('', `\\* extrapolated: ${e.measuredMembers} of the ${e.n} naive models were trained each step (${fmt(e.measured!.msMedian)} ms), scaled by ${e.n / e.measuredMembers}.`);
    }
    const failed = mrows.filter((r) => r.error);
    for (const f of failed) out.push('', `Failed: ${f.impl} ${f.lowering ?? f.method} N=${f.n}: ${f.error}`);
    out.push('');
    out.push(...torchTable(model));
  }
  return out;
}

/** netc grouped against PyTorch on one thread, next to the naive TF.js loop's speed-up. */
function torchTable(model: ModelName): string[] {
  const trows = rows.filter((r) => r.model === model && r.impl === 'torch');
  if (!torch && only.has(model)) return [`${torchNote}.`, ''];
  if (trows.length === 0) return [];
  const methods = [...new Set(trows.map((r) => r.method as TorchMethod))];
  const out = [`### ${model === 'forum' ? 'Forum MLP' : 'LeNet-5'} against PyTorch ${torch!.torch}, one thread (speed-up = other ms / netc grouped ms: above 1x netc is faster)`, ''];
  out.push(`| N | netc grouped ms/step | naive TF.js ms/step | speed-up | ${methods.map((m) => `torch ${m} ms/step | speed-up`).join(' | ')} |`);
  out.push(`|---:|---:|---:|---:|${methods.map(() => '---:|---:').join('|')}|`);
  for (const n of [...new Set(trows.map((r) => r.n))].sort((a, b) => a - b)) {
    const g = find(model, 'netc', n, 'grouped');
    const naive = find(model, 'naive', n);
    const s = speedup(model, n, 'grouped');
    const cells = methods.map((m) => {
      const t = torchRow(model, m, n);
      const r = overTorch(model, n, m);
      return t ? `${fmt(t.msPerStep)}${t.extrapolated ? '*' : ''} | ${r === undefined ? '' : `${r.toFixed(2)}x`}` : '— | ';
    });
    out.push(`| ${n} | ${g ? fmt(g.msPerStep) : '—'} | ${naive ? `${fmt(naive.msPerStep)}${naive.extrapolated ? '*' : ''}` : '—'} | ${s === undefined ? '' : `${s.toFixed(1)}x`} | ${cells.join(' | ')} |`);
  }
  const e = trows.find((r) => r.extrapolated);
  if (e) out.push('', `\\* extrapolated: ${e.measuredMembers} of the ${e.n} PyTorch models were trained each step (${fmt(e.measured!.msMedian)} ms), scaled by ${e.n / e.measuredMembers}.`);
  for (const f of trows.filter((r) => r.error)) out.push('', `Failed: torch ${f.method} N=${f.n}: ${f.error}`);
  out.push('');
  return out;
}
