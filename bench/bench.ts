// npm run bench [-- --quick] [-- --out DIR] [-- --only forum,lenet,webgpu,compile,scale,train,seed000,seq] [-- --seq-workloads lstm,transformer,gru] [-- --no-torch] [-- --no-jax] [-- --baseline REF]
//
// Time per training step of netc's fused ensembles (engine `fused`, the generated WebAssembly step, and
// `ops`, TF.js ops with autodiff) against a naive loop of separate tf.sequential models, against the same
// workloads in PyTorch on one thread (bench/torch_bench.py, with every Python whose `import torch` works,
// one row per torch version) and against jax-js (bench/jax_bench.ts, the forum step); `netc train` end to end
// against a PyTorch user's own loop (bench/train_loop.py) and JAX on XLA (bench/jax_xla.py: one XLA thread,
// and every core at N=1000); LeNet-5 in JAX on XLA; Seed 000's workload (bench/seed000.net against
// bench/seed000.py), also as whole processes beside bench/seed000_jax.py (--no-jax: neither JAX); the forum and LeNet steps on webgpu, the generated WGSL step against TF.js's webgpu op path, side
// by side (on a machine without a GPU, Mesa's lavapipe: only the ratio counts); sequence models (bench/seq.ts: LSTM, transformer
// and GRU populations against PyTorch and JAX; not in quick mode unless --only names seq); memory per configuration, and compile time of every example; writes DIR/results.json and
// DIR/RESULTS.md (DIR: bench/, or bench/quick/ for the quick smoke run, so that it never overwrites a full
// run's). Every configuration runs in a process of its own (bench/worker.ts, or the Python or jax-js
// script), one after another, so that its peak RSS is its own and no two measurements share the machine.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Lowering } from '../src/layers/forward.js';
import type { BackendChoice, CompileResult, JaxJob, JaxResult, JaxXlaJob, JaxXlaResult, Job, ModelName, NaiveMethod, NetcEngine, StepResult, Timing, TorchJob, TorchMethod, TorchResult, TrainRunResult, Unavailable } from './lib.js';
import { median } from './lib.js';
import { measureScale, scaleRatio, type ScalePlan, type ScaleRow } from './scale.js';
import { describeFloor, floorMissing, floorMs, forumStepCost, measureRates, type MachineRates } from './floor.js';
import { lenetMacs } from './simd-rates.js';
import { packageVersion } from './timing.js';
import { baselineTable, checkoutBaseline, compareWithBaseline, type BaselineRow } from './baseline.js';
import { measureSeq, seqTables, seqTargets, type SeqPeerResult, type SeqPlan, type SeqRow, type SeqThreads } from './seq.js';
import { findPythonJax, netcHasThreadsOption, ONE_XLA_THREAD, rateTarget, wholeProcessRow, wholeProcessTargets, type Peer, type PythonJax, type WholeProcessRow } from './peers.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);

// ---- options --------------------------------------------------------------------------------------

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const outIndex = argv.indexOf('--out');
const outDir = outIndex >= 0 ? argv[outIndex + 1] : quick ? join(here, 'quick') : here;
const onlyIndex = argv.indexOf('--only');
// seq (sequence models, minutes of TF.js op-path training) is left out of the quick run unless --only names it
const only = new Set(onlyIndex >= 0 ? argv[onlyIndex + 1].split(',') : ['forum', 'lenet', 'webgpu', 'compile', 'scale', 'train', 'seed000', ...(quick ? [] : ['seq'])]);
const noTorch = argv.includes('--no-torch');
const noJax = argv.includes('--no-jax');
// --baseline REF: the fused forum and LeNet steps of this checkout against REF's, in this run (bench/baseline.ts)
const baselineIndex = argv.indexOf('--baseline');
const baselineRef = baselineIndex >= 0 ? argv[baselineIndex + 1] : undefined;
if (baselineRef) only.add('baseline');

/** The measured configurations. Quick mode: small sizes, short budgets (a smoke run). */
const plan = quick
  ? {
      forumN: [15],
      forumSmallLoweringsUpTo: 15,
      naiveMaxMembers: 15,
      lenetN: [2],
      lenetOtherLoweringsAt: [2],
      lenetCpuCheck: false,
      fast: { warmup: 2, budgetMs: 150, minSteps: 5, maxSteps: 2000 } as Timing,
      slow: { warmup: 1, budgetMs: 200, minSteps: 2, maxSteps: 20 } as Timing,
      compileRuns: 3,
      scale: { lenet: [{ members: 2, steps: 4 }], forum: [] } as ScalePlan,
      // a tiny PyTorch row: the forum MLP as bmm at N=15 (with every torch version found)
      torch: { forum: { 15: ['bmm'] }, lenet: {} } as TorchPlan,
      torchOthers: { forum: { 15: ['bmm'] }, lenet: {} } as TorchPlan,
      torchLoopMaxMembers: 15,
      jaxN: [15],
      // netc grouped with engine fused at these N (the other N: ops alone)
      fusedN: [15],
      // the forum step on webgpu, fused WGSL and the op path, at these N
      webgpuN: [15],
      webgpu: { warmup: 2, budgetMs: 300, minSteps: 5, maxSteps: 500 } as Timing,
      // LeNet on webgpu, fused WGSL and the op path: x2, one step (lavapipe runs them on the CPU)
      webgpuLenetN: [2],
      webgpuLenet: { warmup: 0, budgetMs: 0, minSteps: 1, maxSteps: 1 } as Timing,
      // netc train and Seed 000 against these torches: the newest only in quick mode
      allTorchesForTraining: false,
      train: { n: [15], steps: 100, memory: { n: 10000, steps: 5 }, steady: { n: 15, steps: 200 } },
      seed000: { steps: 50, repeats: 1 },
      // JAX on XLA (bench/jax_xla.py): the forum at N=15, one XLA thread, beside netc train; nothing else (it
      // compiles for seconds); Seed 000's whole processes not at all (seconds each)
      jaxXla: { forumN: [15], wholeMachineN: [] as number[], lenetN: [] as number[], lenetSteps: 0 },
      wholeProcessRepeats: 0,
      // sequence models (--only seq): two members, two steps each side (a smoke run)
      seq: { n: 2, netcSteps: { lstm: 2, transformer: 2, gru: 2 }, peerSteps: { lstm: 2, transformer: 2, gru: 2 } } as SeqPlan,
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
      // torch versions besides the newest: the forum MLP as bmm and vmap
      torchOthers: { forum: { 15: ['bmm', 'vmap'], 100: ['bmm', 'vmap'], 1000: ['bmm', 'vmap'] }, lenet: {} } as TorchPlan,
      // the PyTorch loop at N > this trains this many models per step and is scaled, as the naive loop is
      torchLoopMaxMembers: 100,
      jaxN: [15, 100, 1000],
      fusedN: [1, 5, 15, 100, 1000],
      webgpuN: [15, 1000],
      webgpu: { warmup: 5, budgetMs: 3000, minSteps: 10, maxSteps: 2000 } as Timing,
      // LeNet x8 on webgpu: a few steps (on lavapipe one op-path step of LeNet x8 takes seconds)
      webgpuLenetN: [8],
      webgpuLenet: { warmup: 1, budgetMs: 2000, minSteps: 3, maxSteps: 20 } as Timing,
      allTorchesForTraining: true,
      // netc train end to end against a PyTorch user's loop: the forum problem at these N, this many steps
      // and forum x100,000 for its memory: RSS sampled while it trains, and the process's peak
      // and at N=15 long enough that V8 has compiled the trainer's JavaScript (2000 steps are about 30 ms,
      // half of them before that): its ms a step against the bench's step
      train: { n: [15, 100, 1000], steps: 2000, memory: { n: 100000, steps: 40 }, steady: { n: 15, steps: 20000 } },
      // Seed 000's workload: 15 MLPs, 5 rows, batch 5, this many Adam steps (one step an epoch)
      // each side runs this many times, each in a process of its own, and the median counts: one run of
      // 0.1 s varies by a third between runs on this machine
      seed000: { steps: 1000, repeats: 5 },
      // JAX on XLA (bench/jax_xla.py): netc train's forum at each N on one XLA thread, at wholeMachineN with
      // JAX's default threading too (against netc's and PyTorch's defaults); LeNet-5 at lenetN, lenetSteps steps
      jaxXla: { forumN: [15, 100, 1000], wholeMachineN: [1000], lenetN: [30], lenetSteps: 40 },
      // Seed 000 as whole processes (start-up, imports, compile, training): each command this many times, the least counts
      wholeProcessRepeats: 5,
      // sequence models (issue 38): 32 members; netc trains them on TF.js ops (seconds to a minute a step at
      // x32 on 2 cores), so few steps, its first (TF.js's warm-up) among them; the peers a few more after a
      // warm-up step (the transformer's take seconds each too): the section stays near a quarter of an hour
      seq: { n: 32, netcSteps: { lstm: 4, transformer: 3, gru: 4 }, peerSteps: { lstm: 10, transformer: 4, gru: 10 } } as SeqPlan,
    };

/** Which PyTorch methods run at which N, per model (plan.torch: the newest torch found; plan.torchOthers: any other version). */
type TorchPlan = Record<ModelName, Record<number, TorchMethod[]>>;

// ---- running workers ------------------------------------------------------------------------------

interface Row {
  model: ModelName;
  impl: 'naive' | 'netc' | 'torch' | 'jax';
  lowering?: Lowering;
  /** netc rows: the engine asked for (and, where measured, run) */
  engine?: NetcEngine;
  /** torch rows: 'torch' (PyTorch on the CPU, one thread); jax rows: 'jax' (jax-js on its wasm device) */
  backend: BackendChoice | 'torch' | 'jax';
  method?: NaiveMethod | TorchMethod;
  /** torch rows: the torch version (one row per version found) */
  torch?: string;
  n: number;
  /** naive: models really trained (fewer than n: msPerStep is extrapolated) */
  measuredMembers: number;
  extrapolated: boolean;
  /** ms per step for all n members (extrapolated where `extrapolated`) */
  msPerStep: number;
  /** the measured ms per step of measuredMembers (torch and jax rows: no tfBytes) */
  measured?: StepResult | TorchResult | JaxResult;
  error?: string;
  /** why this configuration was not measured (netc fused where the fused engine is not there or does not cover the model) */
  unavailable?: string;
  membersPerGbRss?: number;
  membersPerGbTf?: number;
}

/** Runs a command whose stdout has one line `RESULT {...}`, and parses it. */
function runResult<T>(command: string, args: string[], what: string, env: NodeJS.ProcessEnv = process.env, cwd = root): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (code === 0 && line) resolve(JSON.parse(line.slice(7)) as T);
      else reject(new Error(`${what} exited with ${code}: ${lastLines(err || out)}`));
    });
  });
}

const runWorker = <T>(job: Job): Promise<T> => runResult<T>(process.execPath, ['--import', 'tsx', join(here, 'worker.ts'), JSON.stringify(job)], 'worker');
/**
 * A job in the worker of a checkout (DIR/bench/worker.ts, run in DIR): both sides of --baseline. Both run with
 * V8's optimizing compiler on the main thread (--no-concurrent-recompilation): with it in the background, each
 * process reaches the step's optimized JavaScript early or late by chance and keeps that speed for thousands of
 * steps, on either tree (bench/NOTES.md); on the main thread every process reaches it at the same step.
 */
const runWorkerIn = <T>(dir: string, job: Job): Promise<T> =>
  runResult<T>(process.execPath, ['--no-concurrent-recompilation', '--import', 'tsx', join(dir, 'bench', 'worker.ts'), JSON.stringify(job)], 'worker', process.env, dir);

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

interface TorchFound {
  python: string;
  torch: string;
  vmap: string | null;
  python_version: string;
}

/** A version's numbers, to sort by: '2.13.0+cpu' -> [2, 13, 0]; '1.13.0a0' -> [1, 13, 0]. */
const versionKey = (v: string) => (/^(\d+)\.(\d+)(?:\.(\d+))?/.exec(v) ?? []).slice(1, 4).map((x) => Number(x ?? 0));
const newerFirst = (a: TorchFound, b: TorchFound) => {
  const [x, y] = [versionKey(a.torch), versionKey(b.torch)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (y[i] ?? 0) - (x[i] ?? 0);
  return 0;
};

/**
 * Every Python that can import torch, one per torch version, newest first (the first is the anchor of the
 * targets and runs every PyTorch configuration; the others run plan.torchOthers), or why there is none.
 * Candidates: NETC_BENCH_PYTHON when set (several, separated by ':'), else python3 on the PATH, then
 * Debian's /usr/bin/python3 (where apt's python3-torch lives, when PATH's python3 is another).
 */
function findTorches(): { found: TorchFound[]; why?: string } {
  if (noTorch) return { found: [], why: '--no-torch' };
  const candidates = process.env.NETC_BENCH_PYTHON ? process.env.NETC_BENCH_PYTHON.split(':').filter(Boolean) : ['python3', '/usr/bin/python3'];
  const failures: string[] = [];
  const found: TorchFound[] = [];
  for (const python of candidates) {
    const r = spawnSync(python, [torchScript, '--probe'], { encoding: 'utf8', timeout: 120_000, env: torchEnv });
    const line = r.stdout?.split('\n').find((l) => l.startsWith('PROBE '));
    if (r.status === 0 && line) {
      const info = JSON.parse(line.slice(6)) as { torch: string; vmap: string | null; python: string };
      if (!found.some((f) => f.torch === info.torch)) found.push({ python, torch: info.torch, vmap: info.vmap, python_version: info.python });
      continue;
    }
    const why = r.error ? ((r.error as NodeJS.ErrnoException).code ?? r.error.message) : lastLines(r.stderr ?? '').split(' | ').pop();
    failures.push(`${python}: ${why}`);
  }
  found.sort(newerFirst);
  return found.length ? { found } : { found, why: `no Python with torch (${failures.join('; ')})` };
}

const runTorch = (python: string, job: TorchJob) => runResult<TorchResult>(python, [torchScript, JSON.stringify(job)], 'torch_bench.py', torchEnv);

const jaxScript = join(here, 'jax_bench.ts');
const runJax = (job: JaxJob) => runResult<JaxResult>(process.execPath, ['--import', 'tsx', jaxScript, JSON.stringify(job)], 'jax_bench.ts');

/** How a row is named in the log and the tables: `netc grouped fused`, `torch 2.13.0 bmm`, `jax-js`. */
function rowName(r: Pick<Row, 'impl' | 'method' | 'lowering' | 'engine' | 'torch'>): string {
  if (r.impl === 'naive') return `naive ${r.method}`;
  if (r.impl === 'torch') return `torch ${r.torch} ${r.method}`;
  if (r.impl === 'jax') return 'jax-js';
  return `netc ${r.lowering} ${r.engine}`;
}

type Measured = StepResult | TorchResult | JaxResult;

async function measure(row: Omit<Row, 'msPerStep' | 'measured' | 'extrapolated'>, job: Job | (() => Promise<Measured>)): Promise<Row> {
  const label = `${row.model} N=${row.n} ${rowName(row)}${row.impl === 'torch' || row.impl === 'jax' ? '' : ` on ${row.backend}`}`;
  try {
    const r = typeof job === 'function' ? await job() : await runWorker<StepResult | Unavailable>(job);
    if ('unavailable' in r) {
      log(`  ${label}: — (${r.unavailable})`);
      return { ...row, extrapolated: false, msPerStep: NaN, unavailable: r.unavailable };
    }
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
/** wall-clock seconds of each section of the run (--only's names), to keep the whole run's time in view */
const sectionSeconds: Record<string, number> = {};
const rows: Row[] = [];
const naiveChoice: Partial<Record<ModelName, { backend: BackendChoice; method: NaiveMethod; candidates: Row[]; note: string }>> = {};
let compileResult: CompileResult | undefined;
let compileError: string | undefined;

log(`netc benchmark${quick ? ' (quick mode: small sizes, short budgets; a smoke run, not a measurement)' : ''}`);
log(`machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; Node ${process.version}; load average at start ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
const loadAtStart = loadavg();

const wantsTorch = ['forum', 'lenet', 'train', 'seed000', 'seq'].some((w) => only.has(w));
const torchFound = wantsTorch ? findTorches() : { found: [] as TorchFound[], why: 'no forum, lenet, train or seed000 workload in --only' };
const torches = torchFound.found;
/** the newest torch found: the anchor of the targets, and the one that runs every PyTorch configuration */
const torch = torches[0] as TorchFound | undefined;
const torchNote = torch
  ? `${torches.map((t) => `PyTorch ${t.torch} (${t.python}, Python ${t.python_version}; vmap: ${t.vmap ?? 'none'})`).join(', ')}, one thread (torch.set_num_threads(1), OMP/MKL/OpenBLAS threads 1)${torches.length > 1 ? `; PyTorch ${torch.torch}, the newest, runs every configuration and anchors the targets, the others the forum MLP's bmm and vmap` : ''}`
  : `PyTorch not measured: ${torchFound.why}. Install it to get the PyTorch anchors (pip install torch; Debian: apt-get install python3-torch)`;
log(torch ? `torch: ${torchNote}` : `torch: ${torchNote}; carrying on without it`);

const jaxVersion = packageVersion('@jax-js/jax');
const jaxNote = noJax
  ? 'jax-js not measured: --no-jax'
  : jaxVersion
    ? `jax-js ${jaxVersion} (@jax-js/jax) on its wasm device, one thread (Node has no global Worker, so its wasm backend starts no threads): jit of vmap(valueAndGrad(one member's loss)) and Adam written out, one compiled call per step (bench/jax_bench.ts)`
    : 'jax-js not measured: @jax-js/jax is not installed (npm ci installs it: a devDependency)';
log(`jax: ${jaxNote}`);

// JAX in Python on XLA's CPU backend: the same Pythons as PyTorch's, the first that imports jax
const wantsJaxXla = ['lenet', 'train', 'seed000', 'seq'].some((w) => only.has(w));
const jaxXlaFound: { found?: PythonJax; why?: string } = noJax
  ? { why: '--no-jax' }
  : wantsJaxXla
    ? findPythonJax(here, process.env.NETC_BENCH_PYTHON ? process.env.NETC_BENCH_PYTHON.split(':').filter(Boolean) : ['python3', '/usr/bin/python3'])
    : { why: 'no lenet, train or seed000 workload in --only' };
const jaxXla = jaxXlaFound.found;
const jaxXlaNote = jaxXla
  ? `JAX ${jaxXla.jax} (jaxlib ${jaxXla.jaxlib}; ${jaxXla.python}, Python ${jaxXla.python_version}) on XLA's CPU backend: jit of vmap(value_and_grad(one member's loss)) and Adam written out, the forum's epochs each one lax.scan, XLA's compile outside the time (bench/jax_xla.py); one XLA thread (XLA_FLAGS=${ONE_XLA_THREAD}) unless said`
  : `JAX (Python) not measured: ${jaxXlaFound.why}`;
log(`jax (Python, XLA): ${jaxXlaNote}`);
const runJaxXla = (job: JaxXlaJob) => runResult<JaxXlaResult>(jaxXla!.python, [join(here, 'jax_xla.py'), JSON.stringify(job)], 'jax_xla.py');

/** The PyTorch configurations of a model at one N, with every torch version found, measured right after netc's (so side by side in time). */
async function measureTorch(model: ModelName, n: number, timing: Timing): Promise<void> {
  for (const t of torches) {
    const methods = (t === torch ? plan.torch : plan.torchOthers)[model][n] ?? [];
    for (const method of methods) {
      const members = method === 'loop' ? Math.min(n, plan.torchLoopMaxMembers) : n;
      const job: TorchJob = { model, method, n, members, ...timing, minSteps: method === 'loop' ? Math.min(timing.minSteps, 5) : timing.minSteps };
      rows.push(await measure({ model, impl: 'torch', backend: 'torch', method, torch: t.torch, n, measuredMembers: members }, () => runTorch(t.python, job)));
    }
  }
}

/** The forum step in jax-js at one N (plan.jaxN). */
async function measureJax(n: number, timing: Timing): Promise<void> {
  if (noJax || !jaxVersion || !plan.jaxN.includes(n)) return;
  rows.push(await measure({ model: 'forum', impl: 'jax', backend: 'jax', n, measuredMembers: n }, () => runJax({ n, ...timing })));
}

/** LeNet-5 in JAX on XLA at each N of plan.jaxXla.lenetN: one XLA thread, plan.jaxXla.lenetSteps steps. */
const jaxLenet: (Peer<JaxXlaResult> & { n: number })[] = [];
async function measureJaxLenet(n: number): Promise<void> {
  if (!jaxXla || !plan.jaxXla.lenetN.includes(n)) return;
  try {
    const result = await runJaxXla({ model: 'lenet', n, steps: plan.jaxXla.lenetSteps, threads: 1 });
    jaxLenet.push({ n, result });
    log(`  lenet N=${n} JAX ${result.jax} (XLA, one thread): ${fmt(result.msMedian!)} ms a step, ${result.memberStepsPerSecond.toFixed(1)} member-steps/s over ${result.steps} steps (compile ${result.compileSeconds.toFixed(1)} s, outside)`);
  } catch (e) {
    jaxLenet.push({ n, error: (e as Error).message });
    log(`  lenet N=${n} JAX (XLA): FAILED ${(e as Error).message}`);
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
  const sectionStarted = performance.now();
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
      // the grouped row twice: the generated fused step, and TF.js ops (the other lowerings: ops)
      const engines: NetcEngine[] = lowering === 'grouped' && plan.fusedN.includes(n) ? ['fused', 'ops'] : ['ops'];
      for (const engine of engines) {
        const profile = lowering === 'grouped' && engine === 'ops' && n >= 15;
        rows.push(await measure({ model: 'forum', impl: 'netc', lowering, engine, backend: 'wasm', n, measuredMembers: n }, { kind: 'netc', model: 'forum', lowering, engine, n, backend: 'wasm', profile, ...t }));
      }
    }
    await measureJax(n, t);
    await measureTorch('forum', n, t);
  }
  sectionSeconds['forum'] = (performance.now() - sectionStarted) / 1000;
  log(`  [forum: ${sectionSeconds['forum'].toFixed(0)} s]`);
}

if (only.has('lenet')) {
  const sectionStarted = performance.now();
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
      // the grouped row twice: the generated fused step (what engine auto runs), and TF.js ops
      for (const engine of (lowering === 'grouped' ? ['fused', 'ops'] : ['ops']) as NetcEngine[]) {
        const profile = lowering === 'grouped' && engine === 'ops' && n === plan.lenetN[plan.lenetN.length - 1];
        rows.push(await measure({ model: 'lenet', impl: 'netc', lowering, engine, backend: 'wasm', n, measuredMembers: n }, { kind: 'netc', model: 'lenet', lowering, engine, n, backend: 'wasm', profile, ...t }));
      }
    }
    await measureTorch('lenet', n, t);
    await measureJaxLenet(n);
  }
  sectionSeconds['lenet'] = (performance.now() - sectionStarted) / 1000;
  log(`  [lenet: ${sectionSeconds['lenet'].toFixed(0)} s]`);
}

// ---- this checkout's fused steps against --baseline REF's, turn and turn about ---------------------------

const baselineRounds = quick ? 1 : 5;
let baseline: { ref: string; sha: string; rows: BaselineRow[] } | { ref: string; error: string } | undefined;
if (baselineRef) {
  const sectionStarted = performance.now();
  log(`baseline: this checkout against ${baselineRef}`);
  try {
    const { dir, sha } = checkoutBaseline(root, baselineRef);
    const rows = await compareWithBaseline(runWorkerIn, { ours: root, theirs: dir }, { fast: plan.fast, slow: plan.slow }, baselineRounds, log);
    baseline = { ref: baselineRef, sha, rows };
  } catch (error) {
    baseline = { ref: baselineRef, error: error instanceof Error ? error.message : String(error) };
    log(`  FAILED ${baseline.error}`);
  }
  sectionSeconds['baseline'] = (performance.now() - sectionStarted) / 1000;
}

// ---- netc train end to end, and Seed 000's workload --------------------------------------------------

const workDir = mkdtempSync(join(tmpdir(), 'netc-bench-'));
process.on('exit', () => rmSync(workDir, { recursive: true, force: true }));

/** The forum problem as `netc train` gets it here: forum.net's model and train block, without validation or metrics, for a fixed number of steps. */
const trainFile = (members: number, steps: number) => `model forum(input: [2]) {
  dense(20, activation: sigmoid)
  dense(1, activation: sigmoid)
}
ensemble { members: ${members} seed: 0 }
train { data: xor(n: 1000, noise: 0.3) validation: 0 loss: binary_crossentropy optimizer: adam(lr: 0.02) batch: 5 steps: ${steps} }
`;

interface TrainRow {
  n: number;
  steps: number;
  netc?: TrainRunResult;
  netcError?: string;
  /** bench/train_loop.py with each torch version found */
  torch: { torch: string; python: string; result?: TorchLoopResult; error?: string }[];
  /** bench/jax_xla.py on one XLA thread (at plan.jaxXla.forumN, where a Python imports jax) */
  jax?: Peer<JaxXlaResult>;
  /** at plan.jaxXla.wholeMachineN: each side with its default threading (netc: without --threads; the one-core run where netc train has no such option) */
  machine?: { netc: Peer<TrainRunResult> & { sameAsOneCore: boolean }; jax?: Peer<JaxXlaResult>; torch: (Peer<TorchLoopResult> & { torch: string })[] };
}
interface TorchLoopResult {
  seconds: number;
  memberStepsPerSecond: number;
  steps: number;
  epochs: number;
  lastLoss: number;
  threads: number;
  torch: string;
}

/**
 * dist/ as `npm run build` leaves it, built again where a source file is newer: the netc train rows run
 * the compiled CLI, as a user's `npx netc train` does.
 */
function ensureDist(): void {
  const newest = (dir: string): number => Math.max(0, ...readdirSync(dir, { withFileTypes: true }).map((e) => (e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs)));
  // the bundle that bin/netc.js runs is written last (scripts/bundle-cli.mjs)
  const built = join(root, 'dist', 'bundle', 'main.js');
  if (existsSync(built) && statSync(built).mtimeMs >= newest(join(root, 'src'))) return;
  log('building dist/ (tsc -p tsconfig.build.json, then scripts/bundle-cli.mjs): netc train runs the compiled CLI');
  const r = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed: ${(r.stdout + r.stderr).trim().split('\n').slice(0, 5).join(' | ')}`);
  const b = spawnSync(process.execPath, [join(root, 'scripts', 'bundle-cli.mjs')], { cwd: root, encoding: 'utf8' });
  if (b.status !== 0) throw new Error(`scripts/bundle-cli.mjs failed: ${(b.stdout + b.stderr).trim().split('\n').slice(0, 5).join(' | ')}`);
}
/** The forum and LeNet steps on webgpu: the generated WGSL step and TF.js's op path, side by side (their own table, not the wasm rows'). */
const gpuRows: Row[] = [];
/** The webgpu section's models and member counts. */
const webgpuRuns = (): [ModelName, number, Timing][] => [...plan.webgpuN.map((n): [ModelName, number, Timing] => ['forum', n, plan.webgpu]), ...plan.webgpuLenetN.map((n): [ModelName, number, Timing] => ['lenet', n, plan.webgpuLenet])];
if (only.has('webgpu')) {
  const sectionStarted = performance.now();
  for (const [model, n, timing] of webgpuRuns()) {
    log(`${model} N=${n} on webgpu`);
    for (const engine of ['fused', 'ops'] as NetcEngine[]) {
      gpuRows.push(await measure({ model, impl: 'netc', lowering: 'grouped', engine, backend: 'webgpu', n, measuredMembers: n }, { kind: 'netc', model, lowering: 'grouped', engine, n, backend: 'webgpu', ...timing }));
    }
  }
  sectionSeconds['webgpu'] = (performance.now() - sectionStarted) / 1000;
  log(`  [webgpu: ${sectionSeconds['webgpu'].toFixed(0)} s]`);
}

if (only.has('train') || only.has('seed000') || only.has('seq')) ensureDist();

const trainRows: TrainRow[] = [];
/** forum x plan.train.memory.n by netc train: its RSS while training and the process's peak */
let trainMemory: TrainRunResult | undefined;
let trainMemoryError: string | undefined;
/** forum x plan.train.steady.n by netc train over plan.train.steady.steps: the trainer's own ms a step */
let trainSteady: TrainRunResult | undefined;
let trainSteadyError: string | undefined;
/** that run's ms a step by the trainer's clock */
const steadyMs = (r: TrainRunResult) => (r.seconds * 1000) / plan.train.steady.steps;
/** the torches that netc train and Seed 000 are held against */
const trainingTorches = plan.allTorchesForTraining ? torches : torches.slice(0, 1);
/** The one-core netc train rows pass `--threads 1` where netc train has that option (another branch adds it); without it, netc train runs one thread anyway. */
const netcThreads = only.has('train') && netcHasThreadsOption(join(root, 'bin', 'netc.js'));
const netcOneCore = netcThreads ? ['--threads', '1'] : [];
const netcThreadsNote = netcThreads
  ? 'netc train: --threads 1 in the one-core rows, its default threading in the whole-machine row'
  : 'netc train: no --threads option in `netc train --help` here, so every netc row runs its default (wasm, one thread): the whole-machine row is the one-core run';

/** bench/train_loop.py on the data file: one thread (torch_common's), or torch's default threading (every core). */
async function trainTorchLoop(t: TorchFound, data: string, n: number, steps: number, threads: 'one thread' | 'default threads'): Promise<Peer<TorchLoopResult>> {
  const job = { data, n, steps, ...(threads === 'default threads' ? { threads: 'default' } : {}) };
  try {
    const result = await runResult<TorchLoopResult>(t.python, [join(here, 'train_loop.py'), JSON.stringify(job)], 'train_loop.py', threads === 'one thread' ? torchEnv : process.env);
    log(`  N=${n} torch ${t.torch} loop, ${threads}: ${result.memberStepsPerSecond.toFixed(0)} member-steps/s (${result.seconds.toFixed(2)} s)`);
    return { result };
  } catch (e) {
    log(`  N=${n} torch ${t.torch} loop, ${threads}: FAILED ${(e as Error).message}`);
    return { error: (e as Error).message };
  }
}

/** bench/jax_xla.py's forum on the data file: one XLA thread (1) or JAX's default (null). */
async function trainJax(data: string, n: number, steps: number, threads: 1 | null): Promise<Peer<JaxXlaResult>> {
  const what = threads === 1 ? 'one XLA thread' : 'default threads';
  try {
    const result = await runJaxXla({ model: 'forum', data, n, steps, threads });
    log(`  N=${n} JAX ${result.jax} (XLA), ${what}: ${result.memberStepsPerSecond.toFixed(0)} member-steps/s (${result.seconds.toFixed(3)} s, ${result.trainCpuSeconds.toFixed(3)} s of CPU; compile ${result.compileSeconds.toFixed(1)} s, outside)`);
    return { result };
  } catch (e) {
    log(`  N=${n} JAX (XLA), ${what}: FAILED ${(e as Error).message}`);
    return { error: (e as Error).message };
  }
}

/** The forum at one N with every side's default threading: netc train without --threads, JAX's default, torch's default. */
async function wholeMachine(file: string, data: string, row: TrainRow): Promise<NonNullable<TrainRow['machine']>> {
  let netc: Peer<TrainRunResult> & { sameAsOneCore: boolean } = { result: row.netc, error: row.netcError, sameAsOneCore: true };
  if (netcThreads) {
    try {
      netc = { result: await runWorker<TrainRunResult>({ kind: 'train', file, args: ['--backend', 'wasm'] }), sameAsOneCore: false };
      log(`  N=${row.n} netc train, default threads: ${netc.result!.memberStepsPerSecond.toFixed(0)} member-steps/s`);
    } catch (e) {
      netc = { error: (e as Error).message, sameAsOneCore: false };
      log(`  N=${row.n} netc train, default threads: FAILED ${netc.error}`);
    }
  }
  const jax = jaxXla ? await trainJax(data, row.n, row.steps, null) : undefined;
  const torch: NonNullable<TrainRow['machine']>['torch'] = [];
  for (const t of trainingTorches) torch.push({ torch: t.torch, ...(await trainTorchLoop(t, data, row.n, row.steps, 'default threads')) });
  return { netc, jax, torch };
}

if (only.has('train')) {
  const sectionStarted = performance.now();
  const { steps } = plan.train;
  log(`netc train end to end: the forum problem, ${steps} steps, no validation, against a PyTorch user's loop (bench/train_loop.py) and JAX (bench/jax_xla.py) on the same batches`);
  log(`  ${netcThreadsNote}`);
  for (const n of plan.train.n) {
    const file = join(workDir, `forum-train-${n}.net`);
    writeFileSync(file, trainFile(n, steps));
    const row: TrainRow = { n, steps, torch: [] };
    try {
      row.netc = await runWorker<TrainRunResult>({ kind: 'train', file, args: ['--backend', 'wasm', ...netcOneCore] });
      log(`  N=${n} netc train: ${row.netc.memberStepsPerSecond.toFixed(0)} member-steps/s (${row.netc.seconds.toFixed(2)} s of training, ${(row.netc.wallMs / 1000).toFixed(1)} s with start-up)`);
    } catch (e) {
      row.netcError = (e as Error).message;
      log(`  N=${n} netc train: FAILED ${row.netcError}`);
    }
    const wantsJax = jaxXla !== undefined && plan.jaxXla.forumN.includes(n);
    if (trainingTorches.length || wantsJax) {
      const data = join(workDir, `forum-train-${n}.json`);
      try {
        const batches = 1000 / 5;
        await runWorker({ kind: 'dataset', file, epochs: Math.ceil(steps / batches), out: data });
        for (const t of trainingTorches) row.torch.push({ torch: t.torch, python: t.python, ...(await trainTorchLoop(t, data, n, steps, 'one thread')) });
        if (wantsJax) row.jax = await trainJax(data, n, steps, 1);
        if (plan.jaxXla.wholeMachineN.includes(n)) row.machine = await wholeMachine(file, data, row);
      } catch (e) {
        for (const t of trainingTorches) row.torch.push({ torch: t.torch, python: t.python, error: `the data file: ${(e as Error).message}` });
        if (wantsJax) row.jax = { error: `the data file: ${(e as Error).message}` };
        log(`  N=${n} the data for PyTorch and JAX: FAILED ${(e as Error).message}`);
      }
    }
    trainRows.push(row);
  }
  const steady = plan.train.steady;
  const steadyFile = join(workDir, `forum-train-${steady.n}-steady.net`);
  writeFileSync(steadyFile, trainFile(steady.n, steady.steps));
  try {
    trainSteady = await runWorker<TrainRunResult>({ kind: 'train', file: steadyFile, args: ['--backend', 'wasm'] });
    log(`  N=${steady.n}, ${steady.steps} steps: ${steadyMs(trainSteady).toFixed(4)} ms a step (${trainSteady.memberStepsPerSecond.toFixed(0)} member-steps/s)`);
  } catch (e) {
    trainSteadyError = (e as Error).message;
    log(`  N=${steady.n}, ${steady.steps} steps: FAILED ${trainSteadyError}`);
  }
  const { n: bigN, steps: bigSteps } = plan.train.memory;
  const bigFile = join(workDir, `forum-train-${bigN}.net`);
  writeFileSync(bigFile, trainFile(bigN, bigSteps));
  try {
    trainMemory = await runWorker<TrainRunResult>({ kind: 'train', file: bigFile, args: ['--backend', 'wasm'], sampleRss: true, cli: true });
    log(`  forum x${bigN}, ${bigSteps} steps: peak RSS ${trainMemory.trainingPeakRss === undefined ? 'not sampled (too short)' : mb(trainMemory.trainingPeakRss)} MB while training (its checkpoints included), ${mb(trainMemory.peakRss)} MB for the whole process (the run's files after it)`);
  } catch (e) {
    trainMemoryError = (e as Error).message;
    log(`  forum x${bigN}: FAILED ${trainMemoryError}`);
  }
  sectionSeconds['train'] = (performance.now() - sectionStarted) / 1000;
  log(`  [train: ${sectionSeconds['train'].toFixed(0)} s]`);
}

interface Seed000Torch {
  torch: string;
  python: string;
  naive?: { seconds: number; meanLoss: number };
  merged?: { seconds: number; meanLoss: number };
  /** every run's merged seconds (merged.seconds is their median) */
  mergedRuns?: number[];
  threads?: number;
  error?: string;
}
const seed000: { steps: number; repeats: number; netc: { name: string; args: string[]; result?: TrainRunResult; runs?: number[]; error?: string }[]; torch: Seed000Torch[] } = { steps: plan.seed000.steps, repeats: plan.seed000.repeats, netc: [], torch: [] };
/** Seed 000 as whole processes, as a user types each command: start-up, imports, compile, training and files. */
const wholeProcess: { repeats: number; netc?: WholeProcessRow; torch: WholeProcessRow[]; jax?: WholeProcessRow } = { repeats: plan.wholeProcessRepeats, torch: [] };
async function seed000WholeProcesses(): Promise<void> {
  const k = plan.wholeProcessRepeats;
  log(`  whole processes, ${k} runs each one after another, the least counts:`);
  const said = (r: WholeProcessRow) => log(`    ${r.command}: ${r.seconds === undefined ? `FAILED ${r.error}` : `${r.seconds.toFixed(3)} s (runs ${r.runs.map((x) => x.toFixed(2)).join(', ')})`}`);
  // netc train's defaults (engine, backend, checkpoints); --out only keeps the run out of the checkout's runs/
  wholeProcess.netc = await wholeProcessRow('netc train', 'netc train bench/seed000.net --out $TMP', join(root, 'bin', 'netc.js'), (r) => ['train', 'bench/seed000.net', '--out', join(workDir, `seed000-whole-${r}`)], k, root);
  said(wholeProcess.netc);
  for (const t of trainingTorches) {
    wholeProcess.torch.push(await wholeProcessRow(`PyTorch ${t.torch}'s merged script (one thread)`, `${t.python} bench/seed000.py --merged-only`, t.python, () => ['bench/seed000.py', '--merged-only'], k, root));
    said(wholeProcess.torch[wholeProcess.torch.length - 1]);
  }
  if (jaxXla) {
    wholeProcess.jax = await wholeProcessRow(`JAX ${jaxXla.jax}'s script (one jit(lax.scan), default threads)`, `${jaxXla.python} bench/seed000_jax.py`, jaxXla.python, () => ['bench/seed000_jax.py'], k, root);
    said(wholeProcess.jax);
  }
}

if (only.has('seed000')) {
  const sectionStarted = performance.now();
  const { steps } = plan.seed000;
  log(`Seed 000's workload: 15 MLPs (2-20-1 sigmoid), 5 rows, batch 5, ${steps} Adam steps (bench/seed000.net, bench/seed000.py)`);
  const file = join(here, 'seed000.net');
  // netc train checkpoints on the clock by default (every few minutes, and at the end)
  const variants: { name: string; args: string[] }[] = [
    { name: 'netc train (its defaults: a checkpoint every 5 minutes, and at the end)', args: [] },
    { name: `netc train --checkpoint-every ${steps} (one checkpoint, at the end)`, args: ['--checkpoint-every', String(steps)] },
  ];
  for (const v of variants) {
    const args = ['--backend', 'wasm', ...(steps === 1000 ? [] : ['--epochs', String(steps)]), ...v.args];
    try {
      const results: TrainRunResult[] = [];
      for (let r = 0; r < plan.seed000.repeats; r++) results.push(await runWorker<TrainRunResult>({ kind: 'train', file, args }));
      const runs = results.map((r) => r.seconds);
      const result = results.find((r) => r.seconds === median(runs)) ?? results[0];
      seed000.netc.push({ ...v, args, result, runs });
      log(`  ${v.name}: ${result.seconds.toFixed(3)} s of training, the median of ${runs.map((x) => x.toFixed(3)).join(', ')} (${(result.wallMs / 1000).toFixed(1)} s with start-up)`);
    } catch (e) {
      seed000.netc.push({ ...v, args, error: (e as Error).message });
      log(`  ${v.name}: FAILED ${(e as Error).message}`);
    }
  }
  for (const t of trainingTorches) {
    try {
      const script = [join(here, 'seed000.py'), '--json', '--steps', String(steps)];
      const r = await runResult<Omit<Seed000Torch, 'python'>>(t.python, script, 'seed000.py', torchEnv);
      const runs = [r.merged!.seconds];
      for (let k = 1; k < plan.seed000.repeats; k++) runs.push((await runResult<Omit<Seed000Torch, 'python'>>(t.python, [...script, '--merged-only'], 'seed000.py', torchEnv)).merged!.seconds);
      r.merged!.seconds = median(runs);
      seed000.torch.push({ ...r, mergedRuns: runs, python: t.python });
      log(`  PyTorch ${r.torch}: naive loop ${r.naive!.seconds.toFixed(2)} s, merged ${r.merged!.seconds.toFixed(3)} s, the median of ${runs.map((x) => x.toFixed(3)).join(', ')}`);
    } catch (e) {
      seed000.torch.push({ torch: t.torch, python: t.python, error: (e as Error).message });
      log(`  PyTorch ${t.torch}: FAILED ${(e as Error).message}`);
    }
  }
  if (plan.wholeProcessRepeats > 0) await seed000WholeProcesses();
  sectionSeconds['seed000'] = (performance.now() - sectionStarted) / 1000;
  log(`  [seed000: ${sectionSeconds['seed000'].toFixed(0)} s]`);
}

const seqRows: SeqRow[] = [];
const seqNotes: string[] = [];
if (only.has('seq')) {
  const sectionStarted = performance.now();
  const seqThreads = netcHasThreadsOption(join(root, 'bin', 'netc.js'));
  const python = (script: string, p: { python: string }) => (job: object, threads: SeqThreads) => runResult<SeqPeerResult>(p.python, [join(here, script), JSON.stringify(job)], script, threads === 'one thread' ? torchEnv : process.env);
  seqNotes.push(seqThreads ? 'netc train: --threads 1 in the one-core rows, its defaults in the others (--threads sets the generated step\'s threads; the GRU, which trains on TF.js ops, runs on TF.js\'s wasm backend either way)' : 'netc train has no --threads option here: its one row is its default');
  seqNotes.push(torch ? `PyTorch ${torch.torch} (${torch.python})` : torchNote, jaxXla ? `JAX ${jaxXla.jax} on XLA (${jaxXla.python}), one thread: ${ONE_XLA_THREAD} and the process pinned to one core` : jaxXlaNote);
  // --seq-workloads lstm,gru: only those (a rerun of one workload)
  const pick = argv.indexOf('--seq-workloads');
  const seqPlan: SeqPlan = pick >= 0 ? { ...plan.seq, workloads: argv[pick + 1].split(',') as SeqPlan['workloads'] } : plan.seq;
  seqRows.push(
    ...(await measureSeq(seqPlan, workDir, {
      train: (file, args) => runWorker<TrainRunResult>({ kind: 'train', file, args, cli: true }),
      torch: torch ? python('seq_torch.py', torch) : undefined,
      jax: jaxXla ? python('seq_jax.py', jaxXla) : undefined,
      netcThreads: seqThreads,
      log,
    })),
  );
  sectionSeconds['seq'] = (performance.now() - sectionStarted) / 1000;
  log(`  [seq: ${sectionSeconds['seq'].toFixed(0)} s]`);
}

let scaleRows: ScaleRow[] = [];
let scaleQueueNote: string | undefined;
if (only.has('scale')) {
  const sectionStarted = performance.now();
  log('scale-out: netc train in one process, with --workers 2, and through a queue with 2 netc worker processes');
  const measured = await measureScale(join(root, 'bin', 'netc.js'), plan.scale, log);
  scaleRows = measured.rows;
  scaleQueueNote = measured.queueNote;
  if (scaleQueueNote) log(`  queue mode not measured: ${scaleQueueNote}`);
  sectionSeconds['scale'] = (performance.now() - sectionStarted) / 1000;
  log(`  [scale: ${sectionSeconds['scale'].toFixed(0)} s]`);
}

if (only.has('compile')) {
  const sectionStarted = performance.now();
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
  sectionSeconds['compile'] = (performance.now() - sectionStarted) / 1000;
  log(`  [compile: ${sectionSeconds['compile'].toFixed(0)} s]`);
}

// ---- speed-ups and targets ------------------------------------------------------------------------

interface Target {
  name: string;
  required: string;
  measured: string;
  pass: boolean | null;
  value?: number;
}

const ok = (r: Row) => Number.isFinite(r.msPerStep);
const naiveRow = (model: ModelName, n: number) => rows.find((r) => r.model === model && r.impl === 'naive' && r.n === n && ok(r));
/** A measured netc row: lowering and engine (the lowering tables' columns run ops). */
const netcRow = (model: ModelName, n: number, lowering: Lowering, engine: NetcEngine = 'ops') =>
  rows.find((r) => r.model === model && r.impl === 'netc' && r.n === n && r.lowering === lowering && r.engine === engine && ok(r));
/** netc grouped as a user gets it (engine auto): the fused step where it ran, else ops. What the targets measure. */
const netcBest = (model: ModelName, n: number) => netcRow(model, n, 'grouped', 'fused') ?? netcRow(model, n, 'grouped', 'ops');
const torchRow = (model: ModelName, method: TorchMethod, n: number, version = torch?.torch) =>
  rows.find((r) => r.model === model && r.impl === 'torch' && r.method === method && r.n === n && r.torch === version && ok(r));
const jaxRow = (n: number) => rows.find((r) => r.model === 'forum' && r.impl === 'jax' && r.n === n && ok(r));
/** other ms / netc ms: >= 1 when netc is as fast or faster. */
const over = (other: Row | undefined, netc: Row | undefined) => (other && netc ? other.msPerStep / netc.msPerStep : undefined);
/** torch ms (the newest torch) / netc grouped ms at the same N. */
const overTorch = (model: ModelName, n: number, method: TorchMethod, engine: NetcEngine = 'ops') => over(torchRow(model, method, n), netcRow(model, n, 'grouped', engine));
/** A row's median CPU ms per step, where its process measured it. */
const cpuMs = (r: Row | undefined): number | undefined => (r?.measured as { cpuMsMedian?: number } | undefined)?.cpuMsMedian;
const speedup = (model: ModelName, n: number, lowering: Lowering, engine: NetcEngine = 'ops') => over(naiveRow(model, n), netcRow(model, n, lowering, engine));

const targets: Target[] = [];
const ratioTarget = (model: ModelName, n: number, required: number, what: string) => {
  const g = netcBest(model, n);
  const s = over(naiveRow(model, n), g);
  targets.push({ name: `${what}: naive / netc grouped at N=${n}`, required: `>= ${required}x`, measured: s === undefined ? 'not measured' : `${s.toFixed(1)}x (${g!.engine})`, pass: s === undefined ? null : s >= required, value: s });
};
const notMeasuredTorch = torch ? 'not measured' : 'not measured (no PyTorch here)';
/** netc grouped at least as fast as a PyTorch configuration (the newest torch found) on the same single core. */
const torchTarget = (model: ModelName, n: number, method: TorchMethod, what: string) => {
  const t = torchRow(model, method, n);
  const g = netcBest(model, n);
  const r = over(t, g);
  targets.push({
    name: `${what}: torch ${method} / netc grouped at N=${n}, ms per step, one core each`,
    required: '>= 1.0x (netc <= torch)',
    measured: r === undefined || !t || !g ? notMeasuredTorch : `${r.toFixed(2)}x (netc ${g.engine} ${fmt(g.msPerStep)} ms, torch ${t.torch} ${fmt(t.msPerStep)} ms${t.extrapolated ? ', extrapolated' : ''})`,
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
  const g = netcBest('lenet', 30);
  targets.push({ name: 'LeNet-5: netc grouped at N=30 on wasm, time per step', required: '<= 2000 ms', measured: g ? `${fmt(g.msPerStep)} ms` : 'not measured', pass: g ? g.msPerStep <= 2000 : null, value: g?.msPerStep });
  ratioTarget('lenet', 30, 10, 'LeNet-5');
  torchTarget('lenet', 30, 'loop', 'LeNet-5');
  {
    // the same comparison in CPU time per step: on a machine other processes load, wall time is theirs too
    const t = torchRow('lenet', 'loop', 30);
    const [tc, gc] = [cpuMs(t), cpuMs(g)];
    const r = tc !== undefined && gc !== undefined ? tc / gc : undefined;
    targets.push({
      name: 'LeNet-5: torch loop / netc grouped at N=30, CPU ms per step, one core each',
      required: '>= 1.0x (netc <= torch)',
      measured: r === undefined ? notMeasuredTorch : `${r.toFixed(2)}x (netc ${g!.engine} ${fmt(gc!)} ms, torch ${t!.torch} ${fmt(tc!)} ms)`,
      pass: r === undefined ? null : r >= 1,
      value: r,
    });
  }
  const naive = naiveRow('lenet', 30);
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
{
  // issue 22's first target: `netc train examples/lenet.net` at 30 members, end to end (the scale section's
  // one-process run of 10 steps, summary.json's member-steps/s), against the PyTorch loop's bench step at N=30
  const one = scaleRows.find((r) => r.workload === 'LeNet-5' && r.members === 30 && r.mode === 'one process')?.memberStepsPerSecond ?? undefined;
  const torch = torchRow('lenet', 'loop', 30);
  const torchRate = torch && Number.isFinite(torch.msPerStep) ? 30 / (torch.msPerStep / 1000) : undefined;
  const r = one && torchRate ? one / torchRate : undefined;
  targets.push({
    name: 'LeNet-5 x30: netc train (one process, member-steps/s of its run) / the PyTorch loop (member-steps/s of its bench step)',
    required: '>= 1.0x',
    measured: r === undefined ? 'not measured' : `${r.toFixed(2)}x (netc ${one!.toFixed(1)}, torch ${torch!.torch} loop ${torchRate!.toFixed(1)})`,
    pass: r === undefined ? null : r >= 1,
    value: r,
  });
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

// the physical floor's inputs (bench/floor.ts): empty until the step's cost and the core's rates are measured
const floorRates: MachineRates | undefined = only.has('forum') || only.has('lenet') ? await measureRates() : undefined;
fusedStepTargets();
webgpuTargets();

/** The WGSL step against the webgpu op path at forum N=15 (>= 5x), at N=1000 and LeNet x8 for the record. */
function webgpuTargets(): void {
  if (!only.has('webgpu')) return;
  for (const [model, n] of webgpuRuns()) {
    const mine = gpuRows.filter((r) => r.model === model && r.n === n);
    const [fused, ops] = (['fused', 'ops'] as NetcEngine[]).map((engine) => mine.find((r) => r.engine === engine && ok(r)));
    const r = fused && ops ? ops.msPerStep / fused.msPerStep : undefined;
    const required = model === 'forum' && n === 15 ? 5 : undefined;
    targets.push({
      name: `${model === 'forum' ? 'forum MLP' : 'LeNet'} on webgpu at N=${n}: the TF.js op path / the fused WGSL step, ms per step`,
      required: required === undefined ? '(for the record)' : `>= ${required}.0x`,
      measured: r === undefined ? `not measured${mine.find((g) => g.error)?.error ? ` (${mine.find((g) => g.error)!.error!.split('\n')[0]})` : ''}` : `${r.toFixed(1)}x (fused ${fmt(fused!.msPerStep)} ms, ops ${fmt(ops!.msPerStep)} ms)`,
      pass: r === undefined || required === undefined ? null : r >= required,
      value: r,
    });
  }
}

/** At N=1000 with every side's default threading: netc train against JAX and a PyTorch user's loop (the fastest torch), >= 3x each. */
function wholeMachineTargets(): void {
  const m = trainRows.find((r) => r.n === 1000)?.machine;
  const netc = m?.netc.result?.memberStepsPerSecond;
  const why = m?.netc.error ? `failed: netc: ${m.netc.error}` : 'not measured';
  const jax = m?.jax?.result;
  targets.push(rateTarget('whole machine at N=1000: netc train (its defaults) / JAX on XLA (its default threading), member-steps/s', 3, netc, jax?.memberStepsPerSecond, 'JAX', m?.jax?.error ? `failed: ${m.jax.error}` : jaxXla ? why : 'not measured (no JAX here)'));
  const best = m?.torch.filter((t) => t.result).sort((a, b) => b.result!.memberStepsPerSecond - a.result!.memberStepsPerSecond)[0];
  targets.push(rateTarget("whole machine at N=1000: netc train (its defaults) / a PyTorch user's loop (torch's default threading), member-steps/s", 3, netc, best?.result?.memberStepsPerSecond, `torch ${best?.torch}`, torch ? why : notMeasuredTorch));
}

/**
 * The generated step's targets: netc train against a PyTorch user's own loop (the fastest torch found) and
 * against jax-js's compiled step (its member-steps/s from the step's time, no loop around it), at N = 15, 100
 * and 1000; Seed 000's workload against the fastest merged model; the N=1000 step against the floor.
 */
function fusedStepTargets(): void {
  for (const n of [15, 100, 1000]) {
    const row = trainRows.find((r) => r.n === n);
    const netc = row?.netc?.memberStepsPerSecond;
    const best = row?.torch.filter((t) => t.result).reduce<(typeof row.torch)[number] | undefined>((a, t) => (!a || t.result!.memberStepsPerSecond > a.result!.memberStepsPerSecond ? t : a), undefined);
    const r = netc && best ? netc / best.result!.memberStepsPerSecond : undefined;
    targets.push({
      name: `netc train / a PyTorch user's loop at N=${n}, member-steps/s, one core each`,
      required: '>= 2.0x (the fastest torch)',
      measured: r === undefined ? (row ? notMeasuredTorch : 'not measured') : `${r.toFixed(2)}x (netc ${netc!.toFixed(0)}, torch ${best!.torch} ${best!.result!.memberStepsPerSecond.toFixed(0)})`,
      pass: r === undefined ? null : r >= 2,
      value: r,
    });
    const jax = jaxRow(n);
    const jaxRate = jax ? n / (jax.msPerStep / 1000) : undefined;
    const j = netc && jaxRate ? netc / jaxRate : undefined;
    targets.push({
      name: `netc train / jax-js's compiled step at N=${n}, member-steps/s`,
      required: '>= 2.0x',
      measured: j === undefined ? 'not measured' : `${j.toFixed(2)}x (netc ${netc!.toFixed(0)}, jax-js ${jaxRate!.toFixed(0)} from ${fmt(jax!.msPerStep)} ms a step)`,
      pass: j === undefined ? null : j >= 2,
      value: j,
    });
    const why = row?.jax?.error ? `failed: ${row.jax.error}` : jaxXla ? 'not measured' : 'not measured (no JAX here)';
    targets.push(rateTarget(`netc train / JAX on XLA at N=${n}, member-steps/s, one core each`, 2, netc, row?.jax?.result?.memberStepsPerSecond, 'JAX', why));
  }
  wholeMachineTargets();
  const quickWhy = plan.wholeProcessRepeats === 0 ? 'not measured (quick mode)' : 'not measured';
  const fastestScript = wholeProcess.torch.filter((r) => r.seconds !== undefined).sort((a, b) => a.seconds! - b.seconds!)[0] ?? wholeProcess.torch[0];
  targets.push(...wholeProcessTargets(wholeProcess.netc, [{ label: 'the JAX script (bench/seed000_jax.py)', row: wholeProcess.jax }, { label: 'the merged PyTorch script (bench/seed000.py --merged-only)', row: fastestScript }], quickWhy));
  const netcSeed = seed000.netc[0]?.result?.seconds;
  const merged = seed000.torch.filter((t) => t.merged).reduce<Seed000Torch | undefined>((a, t) => (!a || t.merged!.seconds < a.merged!.seconds ? t : a), undefined);
  const m = netcSeed && merged ? merged.merged!.seconds / netcSeed : undefined;
  targets.push({
    name: "Seed 000's workload: the seed's merged model / netc train, seconds of training",
    required: '>= 2.0x (the fastest torch)',
    measured: m === undefined ? 'not measured' : `${m.toFixed(2)}x (netc ${netcSeed!.toFixed(3)} s, torch ${merged!.torch} ${merged!.merged!.seconds.toFixed(3)} s)`,
    pass: m === undefined ? null : m >= 2,
    value: m,
  });
  const fused = netcRow('forum', 1000, 'grouped', 'fused');
  const cost = forumStepCost(1000);
  const floor = cost && floorRates ? floorMs(cost, floorRates) : undefined;
  const f = fused && floor ? fused.msPerStep / floor : undefined;
  targets.push({
    name: 'forum MLP: netc fused step at N=1000 / the physical floor',
    required: '<= 3.0x',
    measured: f === undefined ? 'not measured' : `${f.toFixed(2)}x (netc ${fmt(fused!.msPerStep)} ms, floor ${fmt(floor!)} ms)`,
    pass: f === undefined ? null : f <= 3,
    value: f,
  });
  const steadyN = plan.train.steady.n;
  const benchStep = netcRow('forum', steadyN, 'grouped', 'fused');
  const trainerMs = trainSteady ? steadyMs(trainSteady) : undefined;
  const overStep = trainerMs !== undefined && benchStep ? trainerMs / benchStep.msPerStep : undefined;
  targets.push({
    name: `netc train's ms per step at N=${steadyN} (${plan.train.steady.steps} steps, its own clock) / the bench's fused step at N=${steadyN}`,
    required: '<= 1.2x',
    measured: overStep === undefined ? (trainSteadyError ? `failed: ${trainSteadyError}` : 'not measured') : `${overStep.toFixed(2)}x (netc train ${fmt(trainerMs!)} ms, the bench's step ${fmt(benchStep!.msPerStep)} ms)`,
    pass: overStep === undefined ? null : overStep <= 1.2,
    value: overStep,
  });
  const big = plan.train.memory.n;
  const limit = 300;
  for (const [what, bytes] of [['while it trains (its checkpoints included)', trainMemory?.trainingPeakRss], ['for the whole process (start-up, training, then the run files: summary.json, report.html)', trainMemory?.peakRss]] as const) {
    const value = bytes === undefined ? undefined : bytes / 1e6;
    targets.push({
      name: `forum x${big} by netc train: peak RSS ${what}, MB`,
      required: `<= ${limit} MB`,
      measured: value === undefined ? (trainMemoryError ? `failed: ${trainMemoryError}` : 'not measured') : `${value.toFixed(0)} MB`,
      pass: value === undefined ? null : value <= limit,
      value,
    });
  }
}

targets.push(...seqTargets(seqRows, 'not measured'));

const seconds = (performance.now() - started) / 1000;
log('');
for (const line of speedTables()) log(line);
for (const line of gpuTable()) log(line);
for (const line of trainTables()) log(line);
for (const line of seqTables(seqRows, seqNotes)) log(line);
log('targets (naive / netc at the same N in this run; netc on wasm, the embedded default):');
for (const t of targets) log(`  ${t.pass === null ? 'n/a ' : t.pass ? 'PASS' : 'MISS'}  ${t.name}: ${t.measured} (target ${t.required})`);
log(`total ${seconds.toFixed(1)} s (${Object.entries(sectionSeconds).map(([k, v]) => `${k} ${v.toFixed(0)} s`).join(', ')})`);

// ---- files ----------------------------------------------------------------------------------------

/** The webgpu rows side by side: the fused WGSL step and the op path at each N. */
function gpuTable(): string[] {
  if (gpuRows.length === 0) return [];
  const out = ['## The forum and LeNet steps on webgpu: the fused WGSL step against TF.js\'s webgpu op path', ''];
  out.push('One step of every member on the same batch, every loss read back with `await data()` (the device\'s sync point), in a process of its own. Without a GPU this is Dawn on Mesa\'s lavapipe (software Vulkan on the CPU): only the ratio counts.', '');
  out.push('| model | N | fused WGSL ms/step | op path ms/step | op path / fused |');
  out.push('|---|---:|---:|---:|---:|');
  for (const [model, n] of webgpuRuns()) {
    const [fused, ops] = (['fused', 'ops'] as NetcEngine[]).map((engine) => gpuRows.find((r) => r.model === model && r.n === n && r.engine === engine));
    const cell = (r?: Row) => (!r ? '—' : ok(r) ? fmt(r.msPerStep) : r.unavailable ? `— (${r.unavailable})` : `failed: ${(r.error ?? '').split('\n')[0]}`);
    out.push(`| ${model} | ${n} | ${cell(fused)} | ${cell(ops)} | ${fused && ops && ok(fused) && ok(ops) ? `${(ops.msPerStep / fused.msPerStep).toFixed(1)}x` : '—'} |`);
  }
  out.push('');
  return out;
}

/** Each torch version's BLAS, from its first measured row (Debian's torch uses whichever libblas.so.3 is installed). */
const blasOf = (version: string) => (rows.find((r) => r.impl === 'torch' && r.torch === version && r.measured)?.measured as TorchResult | undefined)?.blas ?? null;

const results = {
  generated: new Date().toISOString(),
  quick,
  seconds,
  sectionSeconds,
  machine: { cpu: cpus()[0]?.model, cores: cpus().length, memoryBytes: totalmem(), node: process.version, platform: process.platform, loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadavg() },
  versions: { tfjs: packageVersion('@tensorflow/tfjs'), tfjsBackendWasm: packageVersion('@tensorflow/tfjs-backend-wasm'), torch: torch?.torch ?? null, torchAll: torches.map((t) => t.torch), jax: jaxVersion ?? null },
  torch: {
    available: torch !== undefined,
    note: torchNote,
    python: torch?.python ?? null,
    blas: torch ? blasOf(torch.torch) : null,
    /** every torch version found, newest (the anchor) first */
    all: torches.map((t) => ({ ...t, blas: blasOf(t.torch) })),
  },
  jax: { available: !noJax && jaxVersion !== undefined, version: jaxVersion ?? null, note: jaxNote },
  /** JAX in Python on XLA (bench/jax_xla.py, bench/seed000_jax.py): the train rows' `jax` and `machine`, lenetJax, seed000.whole */
  jaxXla: { available: jaxXla !== undefined, version: jaxXla?.jax ?? null, python: jaxXla?.python ?? null, note: jaxXlaNote, netcThreadsOption: netcThreads },
  lenetJax: jaxLenet,
  method: {
    step: 'one optimizer step of every member on the same batch, then every member\'s loss read back (dataSync); warm-up steps first, then steps are timed until the budget is spent; msPerStep is the median (mean also recorded)',
    timing: { fast: plan.fast, slow: plan.slow },
    memory: 'peakRss: the largest process.memoryUsage().rss sampled after building and after every step, in a worker process of its own; baselineRss: after the backend started, before building; tfBytes: tf.memory().numBytes between steps; membersPerGbRss = measured members / ((peakRss - baselineRss) / 1e9), membersPerGbTf = measured members / (tfBytes / 1e9)',
    naive: naiveChoice,
    engines:
      'netc rows name the engine asked for in PopulationSpec.engine: fused (the generated WebAssembly step) and ops (TF.js ops with autodiff); the grouped forum rows run both, every other netc row ops. A fused row is "unavailable" (not measured, with the reason) where the population would not build with it, has no engine property (the fused engine is not in the tree) or reports another engine (it does not cover the model). The targets take netc grouped as engine auto would: fused where it ran, else ops',
    extrapolation: `the naive loop at N > ${plan.naiveMaxMembers} trains ${plan.naiveMaxMembers} models per step and is scaled by N / ${plan.naiveMaxMembers}; the PyTorch loop at N > ${plan.torchLoopMaxMembers} likewise`,
    torch:
      'bench/torch_bench.py, one Python process per configuration, one thread, with every Python that imports torch (one per torch version; the newest runs every configuration, the others the forum MLP\'s bmm and vmap); the same step (one Adam step of every member on the same batch, every loss read back with .tolist()/.item()) and the same timing rule; peakRss from /proc/self/statm sampled after every step. forum: bmm = stacked weights and torch.baddbmm, vmap = vmap(grad_and_value) of one functional model (torch.func; functorch before torch 2), loop = N nn.Sequential models with an Adam each; lenet: loop = N nn.Module LeNets, grouped = conv2d(groups=N) then baddbmm for the dense layers; LeNet\'s loss is cross_entropy on logits (log-softmax + NLL, the same function as softmax then categorical cross-entropy)',
    jax: 'bench/jax_bench.ts, one process per N: jit of (vmap(valueAndGrad(one member\'s loss)) over the stacked weights, then Adam written out), the losses read back with dataSync every step; the same timing rule; jax-js\'s wasm device, one thread; the first step (trace and compile) is a warm-up step',
    train:
      'netc: `netc train FILE --backend wasm` compiled (dist/cli/main.js, as `npx netc train` runs it) in a worker process, FILE the forum model with members N, xor(n: 1000, noise: 0.3), validation 0, no metrics, batch 5, adam(lr: 0.02), steps S; the rate and seconds are summary.json\'s (the trainer\'s own clock: from the first step to the last checkpoint, one at the end; compile, data and backend start-up outside it). PyTorch: bench/train_loop.py on the same examples in the same order (netc\'s training split and epoch orders, written by a worker), stacked weights, torch.baddbmm, one Adam, each member\'s epoch-mean loss kept on the tensor side and read back at each epoch\'s end; timed from the first step to the last epoch\'s read-back',
    jaxXla:
      'bench/jax_xla.py, one Python process per configuration: forum, on the train rows\' data file (netc\'s batches), stacked weights, jit of vmap(value_and_grad(one member\'s loss)) and Adam written out, each epoch one lax.scan, each epoch\'s losses read back; every epoch length compiled and run once before the clock (XLA\'s compile outside); one XLA thread (XLA_FLAGS set before jax is imported) or, at wholeMachineN, JAX\'s default beside netc train without --threads (where it has the option) and train_loop.py with torch\'s default threading; lenet: the same jit of vmap(value_and_grad) with Adam, one warm-up step, then lenetSteps steps each read back. Seed 000 whole processes: each command spawned wholeProcessRepeats times one after another, the least wall time counts',
    seed000:
      'bench/seed000.net (15 members, csv of 5 rows, validation 0, batch 5, adam(lr: 0.02), one step an epoch) by `netc train` as in train, its summary.json train_seconds; bench/seed000.py: the naive loop (15 nn.Modules and 15 Adams, one after another) and the merged model (stacked weights, baddbmm, one Adam), each timed from its first step to its last on one thread, the losses read back at the end',
  },
  rows,
  speedups: rows
    .filter((r) => r.impl === 'netc')
    .map((r) => ({
      model: r.model,
      n: r.n,
      lowering: r.lowering,
      engine: r.engine,
      speedup: speedup(r.model, r.n, r.lowering!, r.engine) ?? null,
      overTorch: Object.fromEntries((plan.torch[r.model][r.n] ?? []).map((m) => [m, r.lowering === 'grouped' ? (overTorch(r.model, r.n, m, r.engine) ?? null) : null])),
      overJax: r.model === 'forum' && r.lowering === 'grouped' ? (over(jaxRow(r.n), netcRow(r.model, r.n, 'grouped', r.engine)) ?? null) : null,
    })),
  webgpu: gpuRows,
  train: { steps: plan.train.steps, rows: trainRows, memory: { ...plan.train.memory, result: trainMemory ?? null, error: trainMemoryError ?? null }, steady: { ...plan.train.steady, result: trainSteady ?? null, error: trainSteadyError ?? null } },
  seed000: { ...seed000, whole: wholeProcess },
  floor: { rates: floorRates ?? null, costs: plan.forumN.map((n) => ({ n, cost: forumStepCost(n) ?? null })), missing: floorRates && plan.forumN.every((n) => forumStepCost(n)) ? null : floorMissing },
  compile: compileResult ?? { error: compileError },
  scale: { rows: scaleRows, queueNote: scaleQueueNote },
  seq: { plan: only.has('seq') ? plan.seq : null, rows: seqRows, notes: seqNotes },
  targets,
  baseline: baseline ?? null,
};
mkdirSync(outDir, { recursive: true });
writeFileSync(join(outDir, 'results.json'), JSON.stringify(results, null, 2) + '\n');
writeFileSync(join(outDir, 'RESULTS.md'), markdown());
log(`wrote ${join(outDir, 'results.json')} and ${join(outDir, 'RESULTS.md')}`);

function markdown(): string {
  const out: string[] = [];
  const mark = (p: boolean | null) => (p === null ? 'n/a' : p ? 'PASS' : 'MISS');
  out.push('# netc benchmark results', '');
  out.push(`Generated by \`npm run bench${quick ? ' -- --quick' : ''}\` on ${results.generated.slice(0, 10)} in ${seconds.toFixed(0)} s (${Object.entries(sectionSeconds).map(([k, v]) => `${k} ${v.toFixed(0)} s`).join(', ')})${quick ? ' — **quick mode: small sizes and short budgets, a smoke run, not a measurement**' : ''}.`);
  out.push(`Machine: ${results.machine.cpu}, ${results.machine.cores} cores, Node ${process.version}, TF.js ${results.versions.tfjs} (wasm backend: SIMD, single-threaded); load average ${loadAtStart.map((l) => l.toFixed(1)).join(' ')} at the start, ${results.machine.loadAverageAtEnd.map((l) => l.toFixed(1)).join(' ')} at the end.`);
  const blas = results.torch.all.filter((t) => t.blas).map((t) => `${t.torch}: ${t.blas!.join(', ')}`);
  out.push(`${torchNote}${blas.length ? `; BLAS: ${blas.join('; ')}` : ''}.`, '');
  out.push(`${jaxNote}.`, '');
  out.push(`${jaxXlaNote}.`, '');
  out.push('Time per training step: one optimizer step of every member on the same batch, every loss read back; median of the timed steps after warm-up. netc runs on wasm, the embedded default backend. Speed-up = naive ms / netc ms at the same N.', '');
  out.push(...speedTables());
  if (baseline) out.push(...('error' in baseline ? [`## This checkout against ${baseline.ref}`, '', `Not measured: ${baseline.error}`, ''] : baselineTable(baseline.rows, baseline.ref, baseline.sha, baselineRounds)));
  out.push(...gpuTable());
  out.push(...trainTables());
  out.push(...seqTables(seqRows, seqNotes));
  if (rows.length > 0) {
    out.push('## Memory', '');
    out.push('Each configuration in a process of its own. Peak RSS: largest `process.memoryUsage().rss` sampled (torch: /proc/self/statm); over baseline: minus the RSS after the backend started (torch: after `import torch`; jax-js: after its wasm device started). tf: `tf.memory().numBytes` between steps. Members per GB from each (naive N > measured: the measured models).', '');
    out.push('| model | N | implementation | peak RSS MB | over baseline MB | tf MB | members/GB (RSS) | members/GB (tf) |');
    out.push('|---|---:|---|---:|---:|---:|---:|---:|');
    for (const r of rows) {
      if (!r.measured) continue;
      const m = r.measured;
      const measuredNote = r.extrapolated ? `, ${r.measuredMembers} measured` : '';
      const impl = r.impl === 'naive' ? `naive ${r.method} (${r.backend})${measuredNote}` : `${rowName(r)}${measuredNote}`;
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
  out.push('netc grouped in a target is what engine auto gives: the fused step where it ran, else ops (the engine is in brackets).', '');
  out.push('| target | required | measured | |');
  out.push('|---|---|---|---|');
  for (const t of targets) out.push(`| ${t.name} | ${t.required} | ${t.measured} | ${mark(t.pass)} |`);
  out.push('');
  const profiled = rows.filter((r) => r.measured && 'profile' in r.measured && r.measured.profile);
  if (profiled.length > 0) {
    out.push('## Kernel profiles (tf.profile of one step, netc grouped, engine ops)', '');
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

/** Footnote marks for reasons a cell is empty, numbered in the order met: `—¹` in the cell, `¹ reason` under the table. */
function footnotes() {
  const marks = ['¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
  const reasons: string[] = [];
  return {
    mark(reason: string): string {
      let i = reasons.indexOf(reason);
      if (i < 0) i = reasons.push(reason) - 1;
      return marks[i] ?? `(${i + 1})`;
    },
    lines(): string[] {
      return reasons.length ? ['', ...reasons.map((r, i) => `${marks[i] ?? `(${i + 1})`} ${r}`)] : [];
    },
  };
}

/** The cell of a row that may be unmeasured: its ms (`*` when extrapolated), or `—` with a footnote saying why. */
function msCell(r: Row | undefined, notes: ReturnType<typeof footnotes>): string {
  if (!r) return '—';
  if (r.unavailable) return `—${notes.mark(`${rowName(r)}: not measured: ${r.unavailable}.`)}`;
  if (r.error) return `—${notes.mark(`${rowName(r)} N=${r.n} failed: ${r.error}`)}`;
  return `${fmt(r.msPerStep)}${r.extrapolated ? '*' : ''}`;
}

/** The time-per-step tables with speed-ups, one per model (also printed at the end of a run). */
function speedTables(): string[] {
  const out: string[] = [];
  for (const model of ['forum', 'lenet'] as ModelName[]) {
    const mrows = rows.filter((r) => r.model === model && (r.impl === 'naive' || r.impl === 'netc'));
    if (mrows.length === 0) continue;
    out.push(model === 'forum' ? '## Forum problem: 2-20-1 MLP (sigmoid), binary cross-entropy, Adam, batch 5' : '## LeNet-5 (examples/lenet.net), batch 64, Adam', '');
    if (naiveChoice[model]) out.push(`Naive baseline: ${naiveChoice[model]!.note}.`, '');
    const notes = footnotes();
    const fused = mrows.some((r) => r.impl === 'netc' && r.engine === 'fused');
    const columns: [Lowering, NetcEngine, string][] = [...(fused ? [['grouped', 'fused', 'netc fused'] as [Lowering, NetcEngine, string]] : []), ['grouped', 'ops', 'netc ops'], ['blockdiag', 'ops', 'netc blockdiag'], ['loop', 'ops', 'netc loop']];
    if (fused) out.push('netc fused and netc ops: the grouped lowering with engine `fused` (the generated WebAssembly step) and engine `ops` (TF.js ops with autodiff); blockdiag and loop run ops.', '');
    else out.push('netc ops: the grouped lowering, engine `ops` (TF.js ops with autodiff); blockdiag and loop run ops too.', '');
    const ns = [...new Set(mrows.map((r) => r.n))].sort((a, b) => a - b);
    out.push(`| N | naive ms/step | ${columns.map(([, , name]) => `${name} ms/step | speed-up`).join(' | ')} |`);
    out.push(`|---:|---:|${columns.map(() => '---:|---:').join('|')}|`);
    for (const n of ns) {
      const naive = naiveRow(model, n);
      const cell = ([lowering, engine]: [Lowering, NetcEngine, string]) => {
        const r = mrows.find((x) => x.impl === 'netc' && x.n === n && x.lowering === lowering && x.engine === engine);
        const s = speedup(model, n, lowering, engine);
        return [msCell(r, notes), s === undefined ? '' : `${s.toFixed(1)}x`];
      };
      const naiveCell = naive ? `${fmt(naive.msPerStep)}${naive.extrapolated ? `*` : ''} (${naive.method}, ${naive.backend})` : '—';
      out.push(`| ${n} | ${naiveCell} | ${columns.map((c) => cell(c).join(' | ')).join(' | ')} |`);
    }
    out.push(...notes.lines());
    if (mrows.some((r) => r.extrapolated)) {
      const e = mrows.find((r) => r.extrapolated)!;
      out.push('', `\\* extrapolated: ${e.measuredMembers} of the ${e.n} naive models were trained each step (${fmt(e.measured!.msMedian)} ms), scaled by ${e.n / e.measuredMembers}.`);
    }
    const failed = mrows.filter((r) => r.error && !(r.impl === 'netc' && columns.some(([l, e]) => l === r.lowering && e === r.engine)));
    for (const f of failed) out.push('', `Failed: ${f.impl} ${f.lowering ?? f.method} N=${f.n}: ${f.error}`);
    out.push('');
    out.push(...(model === 'forum' ? sideBySide() : torchTable(model)));
    if (model === 'lenet') out.push(...jaxLenetTable());
  }
  return out;
}

/** LeNet-5 in JAX on XLA, one thread, against netc grouped's bench step (engine auto's: fused where it ran) at the same N. */
function jaxLenetTable(): string[] {
  if (!jaxLenet.length) return only.has('lenet') && !jaxXla ? [`${jaxXlaNote}.`, ''] : [];
  const out = [`### LeNet-5 in JAX on XLA, one XLA thread: jit(vmap(value_and_grad)) and Adam, ${plan.jaxXla.lenetSteps} steps after one to compile (bench/jax_xla.py)`, ''];
  out.push('| N | JAX ms/step (median) | JAX CPU ms/step | JAX member-steps/s | netc grouped ms/step (engine) | netc member-steps/s | netc ÷ JAX |', '|---:|---:|---:|---:|---:|---:|---:|');
  for (const { n, result, error } of jaxLenet) {
    const g = netcBest('lenet', n);
    const netcRate = g ? n / (g.msPerStep / 1000) : undefined;
    const jax = result ? [fmt(result.msMedian!), fmt(result.cpuMsMedian!), result.memberStepsPerSecond.toFixed(1)] : [`failed: ${error}`, '', ''];
    const ratio = netcRate && result ? `${(netcRate / result.memberStepsPerSecond).toFixed(2)}x` : '';
    out.push(`| ${n} | ${jax.join(' | ')} | ${g ? `${fmt(g.msPerStep)} (${g.engine})` : '—'} | ${netcRate ? netcRate.toFixed(1) : '—'} | ${ratio} |`);
  }
  out.push('');
  return out;
}

/**
 * The forum step side by side: netc (fused and ops), jax-js, every torch version's configurations, the
 * naive TF.js loop and the physical floor, each against netc at the same N.
 */
function sideBySide(): string[] {
  const others = rows.filter((r) => r.model === 'forum' && (r.impl === 'torch' || r.impl === 'jax'));
  if (others.length === 0 && !torch && only.has('forum')) return [`${torchNote}.`, `${jaxNote}.`, ''];
  const ns = [...new Set(others.map((r) => r.n))].sort((a, b) => a - b);
  if (ns.length === 0) return [`${torchNote}.`, `${jaxNote}.`, ''];
  const notes = footnotes();
  const fusedMeasured = ns.some((n) => netcRow('forum', n, 'grouped', 'fused'));
  const bases: NetcEngine[] = fusedMeasured ? ['fused', 'ops'] : ['ops'];
  const versions = [...new Set(others.filter((r) => r.impl === 'torch').map((r) => r.torch!))];
  const methodsOf = (v: string) => [...new Set(others.filter((r) => r.impl === 'torch' && r.torch === v).map((r) => r.method as TorchMethod))];
  type Line = { name: string; at: (n: number) => Row | undefined; self?: NetcEngine };
  const lines: Line[] = [
    { name: 'netc fused (grouped, generated wasm step)', at: (n) => rows.find((r) => r.model === 'forum' && r.impl === 'netc' && r.n === n && r.lowering === 'grouped' && r.engine === 'fused'), self: 'fused' },
    { name: 'netc ops (grouped, TF.js ops)', at: (n) => rows.find((r) => r.model === 'forum' && r.impl === 'netc' && r.n === n && r.lowering === 'grouped' && r.engine === 'ops'), self: 'ops' },
    ...(others.some((r) => r.impl === 'jax') ? [{ name: `jax-js ${jaxVersion} (jit of vmap(valueAndGrad) + Adam, wasm)`, at: (n: number) => rows.find((r) => r.model === 'forum' && r.impl === 'jax' && r.n === n) }] : []),
    ...versions.flatMap((v) => methodsOf(v).map((m) => ({ name: `torch ${v} ${m}`, at: (n: number) => rows.find((r) => r.model === 'forum' && r.impl === 'torch' && r.torch === v && r.method === m && r.n === n) }))),
    { name: `naive TF.js loop (${naiveChoice.forum ? `${naiveChoice.forum.method}, ${naiveChoice.forum.backend}` : 'not measured'})`, at: (n) => naiveRow('forum', n) },
  ];
  const out = [`### Forum step side by side: netc, jax-js, PyTorch${torch ? ` ${versions.join(' and ')}` : ''} and the naive loop, one core each (÷ netc = that ms / netc's ms at the same N: above 1x netc is faster)`, ''];
  out.push(`| implementation | ${ns.map((n) => `N=${n} ms/step | ${bases.map((b) => `÷ netc ${b}`).join(' | ')}`).join(' | ')} |`);
  out.push(`|---|${ns.map(() => `---:|${bases.map(() => '---:').join('|')}`).join('|')}|`);
  for (const line of lines) {
    const cells = ns.map((n) => {
      const r = line.at(n);
      const ratios = bases.map((b) => (line.self === b ? '' : (() => {
        const x = over(r && ok(r) ? r : undefined, netcRow('forum', n, 'grouped', b));
        return x === undefined ? '' : `${x.toFixed(2)}x`;
      })()));
      return [msCell(r, notes), ...ratios].join(' | ');
    });
    out.push(`| ${line.name} | ${cells.join(' | ')} |`);
  }
  // the physical floor: the least time the step's FLOPs and bytes take on this core (bench/floor.ts)
  const floorCells = ns.map((n) => {
    const cost = forumStepCost(n);
    if (!cost || !floorRates) return [`—${notes.mark(`physical floor: ${floorMissing}.`)}`, ...bases.map(() => '')].join(' | ');
    const ms = floorMs(cost, floorRates);
    return [fmt(ms), ...bases.map((b) => {
      const g = netcRow('forum', n, 'grouped', b);
      return g ? `${(ms / g.msPerStep).toFixed(2)}x` : '';
    })].join(' | ');
  });
  out.push(`| physical floor (FLOPs and bytes at measured GFLOP/s and GB/s) | ${floorCells.join(' | ')} |`);
  out.push(...notes.lines());
  if (floorRates) for (const n of ns) {
    const cost = forumStepCost(n);
    if (cost) out.push('', `Floor at N=${n}: ${describeFloor(cost, floorRates)}${floorRates.how ? `; ${floorRates.how}` : ''}.`);
  }
  const e = [...others, ...rows.filter((r) => r.model === 'forum' && r.impl === 'naive')].filter((r) => r.extrapolated && ns.includes(r.n));
  if (e.length) out.push('', `\\* extrapolated: ${e.map((r) => `${rowName(r)} trained ${r.measuredMembers} of the ${r.n} models each step (${fmt(r.measured!.msMedian)} ms), scaled by ${r.n / r.measuredMembers}`).join('; ')}.`);
  if (!torch) out.push('', `${torchNote}.`);
  if (noJax || !jaxVersion) out.push('', `${jaxNote}.`);
  out.push('');
  return out;
}

/** netc grouped (ops) against the newest PyTorch on one thread, next to the naive TF.js loop's speed-up (LeNet). */
function torchTable(model: ModelName): string[] {
  const trows = rows.filter((r) => r.model === model && r.impl === 'torch' && r.torch === torch?.torch);
  if (!torch && only.has(model)) return [`${torchNote}.`, ''];
  if (trows.length === 0) return [];
  const methods = [...new Set(trows.map((r) => r.method as TorchMethod))];
  const out = [`### ${model === 'forum' ? 'Forum MLP' : 'LeNet-5'} against PyTorch ${torch!.torch}, one thread (speed-up = other ms / netc grouped ms: above 1x netc is faster)`, ''];
  out.push(`| N | netc grouped ms/step (engine) | naive TF.js ms/step | speed-up | ${methods.map((m) => `torch ${m} ms/step | speed-up`).join(' | ')} |`);
  out.push(`|---:|---:|---:|---:|${methods.map(() => '---:|---:').join('|')}|`);
  for (const n of [...new Set(trows.map((r) => r.n))].sort((a, b) => a - b)) {
    // netc as engine auto runs it: the fused step where it ran
    const g = netcBest(model, n);
    const engine = g?.engine ?? 'ops';
    const naive = naiveRow(model, n);
    const s = speedup(model, n, 'grouped', engine);
    const cells = methods.map((m) => {
      const t = torchRow(model, m, n);
      const r = overTorch(model, n, m, engine);
      return t ? `${fmt(t.msPerStep)}${t.extrapolated ? '*' : ''} | ${r === undefined ? '' : `${r.toFixed(2)}x`}` : '— | ';
    });
    out.push(`| ${n} | ${g ? `${fmt(g.msPerStep)} (${engine})` : '—'} | ${naive ? `${fmt(naive.msPerStep)}${naive.extrapolated ? '*' : ''}` : '—'} | ${s === undefined ? '' : `${s.toFixed(1)}x`} | ${cells.join(' | ')} |`);
  }
  const e = trows.find((r) => r.extrapolated);
  if (e) out.push('', `\\* extrapolated: ${e.measuredMembers} of the ${e.n} PyTorch models were trained each step (${fmt(e.measured!.msMedian)} ms), scaled by ${e.n / e.measuredMembers}.`);
  for (const f of trows.filter((r) => r.error)) out.push('', `Failed: torch ${f.method} N=${f.n}: ${f.error}`);
  out.push('');
  if (model === 'lenet') out.push(...lenetSideBySide());
  return out;
}

/**
 * LeNet-5 side by side at every N: ms per step, the multiply-adds done per second (the step's MACs at
 * that N / its time), and peak RSS, for netc fused and ops, the naive loop and each PyTorch configuration,
 * beside the core's SIMD128 peak.
 */
function lenetSideBySide(): string[] {
  const lines: { name: string; at: (n: number) => Row | undefined }[] = [
    { name: 'netc fused (grouped, generated wasm step)', at: (n) => netcRow('lenet', n, 'grouped', 'fused') },
    { name: 'netc ops (grouped, TF.js ops)', at: (n) => netcRow('lenet', n, 'grouped', 'ops') },
    { name: `naive TF.js loop${naiveChoice.lenet ? ` (${naiveChoice.lenet.method}, ${naiveChoice.lenet.backend})` : ''}`, at: (n) => naiveRow('lenet', n) },
    ...(['loop', 'grouped'] as TorchMethod[]).map((m) => ({ name: `torch ${torch?.torch ?? ''} ${m}`, at: (n: number) => torchRow('lenet', m, n) })),
  ];
  const ns = plan.lenetN.filter((n) => lines.some((l) => l.at(n)));
  if (!ns.length) return [];
  const peak = floorRates ? floorRates.gflops / 2 : undefined;
  const out = [
    '### LeNet-5 side by side: ms per step, GMAC/s achieved, peak RSS (one core each)',
    '',
    `GMAC/s = the step's multiply-adds (${(lenetMacs(1) / 1e6).toFixed(1)} M per member: the forward products, every layer's dkernel and every layer's dx but the first conv's) / its time${peak ? `; the core's SIMD128 peak: ${peak.toFixed(1)} GMAC/s (${floorRates!.how})` : ''}.`,
    '',
    `| implementation | ${ns.map((n) => `N=${n} ms/step | CPU ms/step | GMAC/s | peak RSS MB`).join(' | ')} |`,
    `|---|${ns.map(() => '---:|---:|---:|---:').join('|')}|`,
  ];
  for (const line of lines) {
    const cells = ns.map((n) => {
      const r = line.at(n);
      if (!r) return '— | | | ';
      const cpu = cpuMs(r);
      // per CPU second where the CPU time was measured: the load of other processes does not count
      const gmacs = lenetMacs(n) / ((cpu ?? r.msPerStep) * 1e6);
      return `${fmt(r.msPerStep)}${r.extrapolated ? '*' : ''} | ${cpu === undefined ? '—' : fmt(cpu)} | ${gmacs.toFixed(2)} | ${r.measured ? mb(r.measured.peakRss) : '—'}`;
    });
    out.push(`| ${line.name} | ${cells.join(' | ')} |`);
  }
  if (peak) out.push(`| SIMD128 peak (bench/simd-rates.ts) | ${ns.map((n) => `${fmt(lenetMacs(n) / (peak * 1e6))} | | ${peak.toFixed(2)} | `).join(' | ')} |`);
  out.push('', 'ms/step: wall-clock median; CPU ms/step: the median of the process\'s CPU time per step (user + system), which other processes on the machine do not inflate; GMAC/s per CPU second.');
  out.push('');
  return out;
}

/** Which engine netc train ran: what its summary.json says, or its default. */
function engineSaid(results: (TrainRunResult | undefined)[]): string {
  const said = [...new Set(results.filter((r) => r?.engine).map((r) => r!.engine!))];
  return said.length ? said.join(', ') : 'the trainer\'s default (auto; summary.json does not say which ran)';
}

/** `netc train` end to end against a PyTorch user's loop, and Seed 000's workload (also printed at the end of a run). */
function trainTables(): string[] {
  const out: string[] = [];
  if (trainRows.length) {
    const versions = [...new Set(trainRows.flatMap((r) => r.torch.map((t) => t.torch)))];
    out.push(`## \`netc train\` end to end: the forum problem, ${plan.train.steps} steps, no validation`, '');
    out.push(
      `member-steps/s (members x steps / training seconds). netc: \`netc train\` on wasm, engine ${engineSaid(trainRows.map((r) => r.netc))}, the trainer's own clock (summary.json: its first step to its last checkpoint, at the end; start-up and compile outside), the compiled CLI (dist/) run in the bench's worker process. PyTorch: bench/train_loop.py, a user's own loop on the same batches (stacked weights, torch.baddbmm, one Adam, epoch losses read back), one thread. netc ÷ torch: above 1x netc is faster.`,
      '',
    );
    const withJax = trainRows.some((r) => r.jax);
    out.push(`| N | netc train member-steps/s | netc s | ${versions.map((v) => `torch ${v} loop member-steps/s | torch s | netc ÷ torch ${v}`).join(' | ')}${withJax ? ' | JAX (XLA, one thread) member-steps/s | JAX s (CPU s) | netc ÷ JAX | target: >= 2x JAX and >= 2x the fastest torch' : ''} |`);
    out.push(`|---:|---:|---:|${versions.map(() => '---:|---:|---:').join('|')}${withJax ? '|---:|---:|---:|---' : ''}|`);
    const notes = footnotes();
    for (const r of trainRows) {
      const netc = r.netc ? [r.netc.memberStepsPerSecond.toFixed(0), r.netc.seconds.toFixed(2)] : [`—${notes.mark(`netc train N=${r.n} failed: ${r.netcError}`)}`, ''];
      const cells = versions.map((v) => {
        const t = r.torch.find((x) => x.torch === v);
        if (!t?.result) return [`—${t?.error ? notes.mark(`torch ${v} N=${r.n} failed: ${t.error}`) : ''}`, '', ''].join(' | ');
        const ratio = r.netc ? `${(r.netc.memberStepsPerSecond / t.result.memberStepsPerSecond).toFixed(2)}x` : '';
        return [t.result.memberStepsPerSecond.toFixed(0), t.result.seconds.toFixed(2), ratio].join(' | ');
      });
      out.push(`| ${r.n} | ${netc.join(' | ')} | ${cells.join(' | ')}${withJax ? ` | ${jaxTrainCells(r, notes).join(' | ')}` : ''} |`);
    }
    out.push(...notes.lines());
    out.push('', `${netcThreadsNote}. ${jaxXlaNote}.`);
    out.push(...machineTable());
    if (!versions.length) out.push('', `${torchNote}.`);
    if (trainSteady) out.push('', `forum x${plan.train.steady.n} by \`netc train\`, ${plan.train.steady.steps} steps: ${fmt(steadyMs(trainSteady))} ms a step by its own clock (${trainSteady.memberStepsPerSecond.toFixed(0)} member-steps/s), long enough that V8 has compiled the trainer's JavaScript; the rows above (${plan.train.steps} steps) include that warm-up.`);
    if (trainMemory) out.push('', `forum x${plan.train.memory.n} by \`netc train\`, ${plan.train.memory.steps} steps (${trainMemory.engine ?? 'auto'} engine): peak RSS ${trainMemory.trainingPeakRss === undefined ? 'not sampled (too short)' : mb(trainMemory.trainingPeakRss)} MB while it trains (\`node bin/netc.js train\` in a process of its own, its VmRSS read from /proc every 25 ms from its "training" line until summary.json appears, so its checkpoints count), ${mb(trainMemory.peakRss)} MB for the whole process (its VmHWM as it exits; the run's files, summary.json, report.html and the leaderboard, are written after the training). MB here are 10^6 bytes.`);
    out.push('');
  }
  if (seed000.netc.length || seed000.torch.length) {
    const anchor = seed000.torch.find((t) => t.merged);
    out.push(`## Seed 000's workload: 15 MLPs (2-20-1 sigmoid), 5 data rows, batch 5, ${seed000.steps} Adam steps`, '');
    out.push(
      `Seconds of training, start-up excluded: netc from summary.json (bench/seed000.net, on wasm, engine ${engineSaid(seed000.netc.map((v) => v.result))}; one step is one epoch here), PyTorch from bench/seed000.py (one thread, the forum question's two versions). netc and the merged model: the median of ${seed000.repeats} runs, each in a process of its own (the naive loop: one). ÷ merged = seconds / the merged PyTorch model's seconds${anchor ? ` (torch ${anchor.torch})` : ''}: netc / merged is the ratio asked about.`,
      '',
    );
    out.push('| implementation | seconds | ÷ merged |');
    out.push('|---|---:|---:|');
    const ratio = (x: number) => (anchor?.merged ? `${(x / anchor.merged.seconds).toFixed(2)}x` : '');
    for (const v of seed000.netc) out.push(`| ${v.name} | ${v.result ? v.result.seconds.toFixed(3) : `failed: ${v.error}`} | ${v.result ? ratio(v.result.seconds) : ''} |`);
    for (const t of seed000.torch) {
      if (t.error) {
        out.push(`| PyTorch ${t.torch} | failed: ${t.error} | |`);
        continue;
      }
      out.push(`| PyTorch ${t.torch}: naive loop (15 nn.Modules, 15 optimizers, one after another) | ${t.naive!.seconds.toFixed(3)} | ${ratio(t.naive!.seconds)} |`);
      out.push(`| PyTorch ${t.torch}: merged (stacked weights, bmm, one optimizer) | ${t.merged!.seconds.toFixed(3)} | ${ratio(t.merged!.seconds)} |`);
    }
    if (!seed000.torch.length) out.push('', `${torchNote}.`);
    out.push('');
  }
  out.push(...wholeProcessTable());
  return out;
}

/** A train row's JAX cells: member-steps/s, seconds, netc's ratio, and whether the one-core targets (2x JAX, 2x the fastest torch) are met. */
function jaxTrainCells(r: TrainRow, notes: ReturnType<typeof footnotes>): string[] {
  const jax = r.jax?.result;
  if (!jax) return [r.jax?.error ? `—${notes.mark(`JAX N=${r.n} failed: ${r.jax.error}`)}` : '—', '', '', ''];
  const netc = r.netc?.memberStepsPerSecond;
  const best = Math.max(0, ...r.torch.filter((t) => t.result).map((t) => t.result!.memberStepsPerSecond));
  const met = netc === undefined ? 'not measured' : netc >= 2 * jax.memberStepsPerSecond && (best === 0 || netc >= 2 * best) ? `met${best === 0 ? ' (JAX; no torch)' : ''}` : 'not met';
  // the CPU seconds beside: on one thread, what the machine's other load does not inflate
  return [jax.memberStepsPerSecond.toFixed(0), `${jax.seconds.toFixed(3)} (${jax.trainCpuSeconds.toFixed(3)})`, netc === undefined ? '' : `${(netc / jax.memberStepsPerSecond).toFixed(2)}x`, met];
}

/** The forum at plan.jaxXla.wholeMachineN with each side's default threading: netc train, JAX, each torch's loop. */
function machineTable(): string[] {
  const rowsWith = trainRows.filter((r) => r.machine);
  if (!rowsWith.length) return [];
  const out = ['', `### The whole machine (${cpus().length} cores): each side's default threading`, '', '| N | implementation | member-steps/s | s | netc ÷ it | target: >= 3x |', '|---:|---|---:|---:|---:|---|'];
  for (const r of rowsWith) {
    const m = r.machine!;
    const netc = m.netc.result?.memberStepsPerSecond;
    out.push(`| ${r.n} | netc train, its defaults${m.netc.sameAsOneCore ? ' (the one-core run: no --threads option)' : ''} | ${netc === undefined ? `failed: ${m.netc.error}` : netc.toFixed(0)} | ${m.netc.result ? m.netc.result.seconds.toFixed(2) : ''} | | |`);
    const peers: [string, Peer<{ memberStepsPerSecond: number; seconds: number }> | undefined][] = [[`JAX on XLA, its default threading`, m.jax], ...m.torch.map((t): [string, Peer<TorchLoopResult>] => [`torch ${t.torch} loop, its default threading`, t])];
    for (const [name, p] of peers) {
      const rate = p?.result?.memberStepsPerSecond;
      const ratio = rate && netc ? netc / rate : undefined;
      out.push(`| ${r.n} | ${name} | ${rate === undefined ? (p?.error ? `failed: ${p.error}` : '—') : rate.toFixed(0)} | ${p?.result ? p.result.seconds.toFixed(2) : ''} | ${ratio === undefined ? '' : `${ratio.toFixed(2)}x`} | ${ratio === undefined ? '' : ratio >= 3 ? 'met' : 'not met'} |`);
    }
  }
  return out;
}

/** Seed 000 as whole processes: each command's least wall time of its runs, netc's against 0.5 s and each script's against netc's. */
function wholeProcessTable(): string[] {
  const w = wholeProcess;
  if (!w.netc) return [];
  const netc = w.netc.seconds;
  const out = [`## Seed 000 as whole processes: Python's or Node's start-up, imports, compile, training (${seed000.steps === 1000 ? '1000' : seed000.steps} steps), files`, ''];
  out.push(`Wall seconds from spawning the command to its exit, ${w.repeats} runs one after another, the least counts (the rest is other processes' load). netc: its defaults (the command a user types, --out a temporary directory); PyTorch: bench/seed000.py --merged-only (one thread, the stacked model); JAX: bench/seed000_jax.py (one jit(lax.scan) of every step, JAX's default threading).`, '');
  out.push('| command | least s | runs | ÷ netc | target |', '|---|---:|---|---:|---|');
  const line = (r: WholeProcessRow, target: string) => {
    const ratio = r.seconds !== undefined && netc !== undefined && r !== w.netc ? `${(r.seconds / netc).toFixed(2)}x` : '';
    out.push(`| ${r.name}: \`${r.command}\` | ${r.seconds === undefined ? `failed: ${r.error}` : r.seconds.toFixed(3)} | ${r.runs.map((x) => x.toFixed(2)).join(', ')} | ${ratio} | ${target} |`);
  };
  line(w.netc, netc === undefined ? '' : `<= 0.5 s: ${netc <= 0.5 ? 'met' : 'not met'}`);
  for (const r of [...(w.jax ? [w.jax] : []), ...w.torch]) line(r, r.seconds === undefined || netc === undefined ? '' : `>= 2x: ${r.seconds / netc >= 2 ? 'met' : 'not met'}`);
  if (!w.jax) out.push('', `${jaxXlaNote}.`);
  out.push('');
  return out;
}
