// The generated training step on TF.js's wasm backend: the module (src/step/) is instantiated on the
// backend's own memory, and each call trains every member in place: the population's variables, its
// optimizer slots and the batch are read and written where TF.js keeps them, by their heap offsets. The
// population stays TF.js variables, so checkpoints, extraction, shards and schedules see no difference.
import type { TF, Tensor, Variable } from '../kernels/tf.js';
import type { EnsembleIR } from '../ensemble/ensemble-ir.js';
import type { GeneratedStep, TableEntry } from '../step/generate.js';
import type { StepCode } from '../step/step-code.js';
import type { OptimizerState } from '../kernels/optimizers.js';
import { Rng } from '../util/rng.js';
import { envVar } from '../util/env.js';
import { advanceBetaPowers, derivedValues, StepHyper } from './step-hyper.js';
import { layerKind } from '../layers/registry.js';
import { hasRule } from '../layers/layer-kind.js';
import type { ThreadPool } from './threads.js';
import { Residence, runThreaded, type Region } from './threaded-steps.js';

interface TensorInfo {
  dataId: object;
  shape: number[];
  dtype: string;
}

interface WasmBackend {
  wasm: { asm: { memory: WebAssembly.Memory }; tfjs: { registerTensor(id: number, size: number, memoryOffset: number): void; disposeData(id: number): void } };
  dataIdMap: { get(id: object): { id: number; memoryOffset: number; refCount: number } | undefined };
  dataIdNextNumber: number;
  makeOutput(shape: number[], dtype: string): TensorInfo;
}

/** What the fused step needs of a population. */
export interface FusedHost {
  tf: TF;
  ir: EnsembleIR;
  n: number;
  optimizer: string;
  variables: Map<string, Variable[]>;
  /** a parameter's optimizer slots by name (m, v, accum, ...) */
  slots(param: string): Map<string, Variable>;
  /** Adam's beta1^t and beta2^t per member, and the shared layers' (the file's betas), advanced by each step */
  state: Pick<OptimizerState, 'accBeta1' | 'accBeta2' | 'sharedAccBeta1' | 'sharedAccBeta2'>;
  /** the file's value of a hyperparameter key: what the shared layers' parameters step with */
  base(key: string): number;
  /** per-member values of a hyperparameter key, in population order (`lr` as the next step applies it) */
  hyper(key: string): number[];
  /** whether `lr` changes from step to step (an lr_schedule) */
  scheduled: boolean;
  /** every hyperparameter may change between any two steps, unannounced (a compiled module's population): read them all at each step */
  volatile?: boolean;
  /** the run's generated code (its step plan's), which every population of the run shares */
  code: StepCode;
  /** the seed and the members' ids, which name their dropout streams, and the steps taken (the stream's step) */
  seed: number;
  memberIds: number[];
  step(): number;
  /** the worker threads that run several steps to a call (runHostSteps), where there are any (`--threads`) */
  threads?: ThreadPool;
}

/**
 * The fewest members a thread is given: below it, a call runs on fewer threads, as a thread's share of a
 * call would take little more than waking it. Chosen, not measured: this project's 2-core machine was
 * too loaded to time it when threads came (docs/step.md).
 */
export const MEMBERS_PER_THREAD = 8;

/** How many threads a call of several steps takes for n members, of `threads` at most (MEMBERS_PER_THREAD). */
export function threadsFor(n: number, threads: number): number {
  return Math.max(1, Math.min(threads, Math.floor(n / MEMBERS_PER_THREAD)));
}

/** How a training step runs (PopulationSpec.engine): `auto` is `fused` where the generated step covers the model. */
export type Engine = 'auto' | 'ops' | 'fused';

/** The engine when none is named: NETC_ENGINE (`ops`, `fused`, `auto`) where a process has it, else `auto`. */
export function defaultEngine(): Engine {
  const env = envVar('NETC_ENGINE');
  return env === 'ops' || env === 'fused' ? env : 'auto';
}

/**
 * A run's step plan, made once (planStep) and read by its populations, a compiled module's step and
 * `netc train`'s engine line: the engine asked for and the one chosen, the generated step that runs it,
 * where the fused step was asked for but does not run, why not, and the run's code (its configuration and
 * the steps generated for it).
 */
export interface StepPlan {
  /** what was asked for: the option, NETC_ENGINE, or `auto` */
  requested: Engine;
  engine: 'fused' | 'ops';
  /** the generated step that runs a fused plan: the WebAssembly one (wasm) or the WGSL one (webgpu) */
  target?: 'webassembly' | 'wgsl';
  /** the configuration's generated code, made on first ask and shared by every population of the plan */
  code: StepCode;
  /** why the step runs on ops where `auto` or `fused` was asked for */
  why?: string;
  /** the threads that run several steps to a call (`netc train --threads`), where the run has more than one */
  threads?: ThreadPool;
}

/**
 * The step plan of a configuration on this backend. `auto` takes the generated step wherever it covers
 * the model: it was measured faster than TF.js ops for every kind it covers, conv models included
 * (bench/NOTES.md). On wasm the fused step is the WebAssembly one, on webgpu the WGSL one (src/step/wgsl.ts).
 */
export function planStep(tf: TF, requested: Engine | undefined, code: StepCode): StepPlan {
  const asked = requested ?? defaultEngine();
  if (asked === 'ops') return { requested: asked, engine: 'ops', code };
  const why = whyNotHere(tf, code);
  if (why !== undefined) return { requested: asked, engine: 'ops', why, code };
  return { requested: asked, engine: 'fused', target: tf.getBackend() === 'webgpu' ? 'wgsl' : 'webassembly', code };
}

/** A plan on TF.js ops, without asking: a population that runs a compiled module's own step. */
export const opsPlan = (code: StepCode): StepPlan => ({ requested: 'ops', engine: 'ops', code });

/** Why the fused step cannot run here, or undefined. */
function whyNotHere(tf: TF, code: StepCode): string | undefined {
  if (tf.getBackend() === 'webgpu') {
    const gpu = tf.backend() as unknown as { device?: unknown; tensorMap?: unknown; submitQueue?: unknown };
    if (!gpu.device || !gpu.tensorMap || typeof gpu.submitQueue !== 'function') return "this TF.js webgpu backend's device and buffers are not reachable";
    return code.whyNotWgsl();
  }
  if (tf.getBackend() !== 'wasm') return `the ${tf.getBackend()} backend (the generated step runs on wasm and webgpu)`;
  const backend = tf.backend() as unknown as Partial<WasmBackend>;
  if (!backend.wasm?.asm?.memory || !backend.dataIdMap || typeof backend.makeOutput !== 'function') return "this TF.js wasm backend's memory is not reachable";
  return code.whyNotWasm();
}

/** A host step's losses [N] and each metric [N], by name. */
export type HostStepValues = { loss: Float32Array } & Record<string, Float32Array>;

/** One batch every member shares, on the host: x [size, ...input] and y [size, width], row-major. */
export interface HostBatch {
  x: Float32Array;
  y: Float32Array;
  size: number;
}

/** The generated step of one population. */
export class FusedStep {
  private generated?: Generated;
  /** the table, the hyperparameter arrays and the scratch space, in one buffer TF.js owns */
  private arena?: { tensor: Tensor; bytes: number };
  /** runHost()'s batch and outputs */
  private io?: { tensor: Tensor; floats: number };
  private views?: { buffer: ArrayBuffer; f32: Float32Array; i32: Int32Array };
  /** the members' hyperparameter rows, and which the arena holds already */
  private readonly hyper: StepHyper;
  /** what the threads' shared memory holds of the population's parameters and slots between calls */
  private readonly residence = new Residence();

  /**
   * `training` false: an evaluation (the forward pass with dropout off and batchnorm's running statistics,
   * the loss and the metrics), which writes nothing of the population's
   */
  constructor(
    private readonly host: FusedHost,
    private readonly training = true,
  ) {
    this.hyper = new StepHyper(host);
  }

  /** Forget cached hyperparameter values (after PBT, or a changed clipnorm). */
  hyperChanged(): void {
    this.hyper.changed();
  }

  /** Generates the module for batches up to `batch` with these metrics now, so that the first step does not (start-up). */
  prepare(batch: number, metrics: readonly string[]): void {
    this.module(batch, metrics);
  }

  /**
   * One training step of every member on x, y; returns the members' losses [N] and each metric [N]. `rows`,
   * each member's real rows where some have fewer than B (members on their own data): the step reads
   * only those, as the member alone on them would.
   */
  run(x: Tensor, y: Tensor, metrics: readonly string[], rows?: Int32Array): { losses: Tensor; metrics: Record<string, Tensor> } {
    const { tf, n } = this.host;
    const inputRank = this.host.ir.ops[0].shape.length;
    const batch = x.shape[x.rank === inputRank + 1 ? 0 : 1] as number;
    if (this.host.volatile) this.hyperChanged();
    const g = this.module(batch, metrics);
    const backend = tf.backend() as unknown as WasmBackend;
    const outputs = g.outputs.map(() => backend.makeOutput([n], 'float32'));
    this.arenaFor(g);
    // every allocation is made: the addresses, then the views (an allocation may grow the memory)
    const offset = (t: { dataId: object }) => backend.dataIdMap.get(t.dataId)!.memoryOffset;
    this.call(g, batch, {
      backend,
      x: offset(x),
      y: offset(y),
      xStride: x.rank === inputRank + 2 ? (x.size / n) * 4 : 0,
      yStride: y.rank === 3 ? (y.size / n) * 4 : 0,
      outputs: outputs.map(offset),
      base: this.arenaBase(backend),
      ...(rows ? { rows } : {}),
    });
    const made = outputs.map((o) => tf.engine().makeTensorFromTensorInfo(o as never) as Tensor);
    return { losses: made[0], metrics: Object.fromEntries(metrics.map((name, i) => [name, made[i + 1]])) };
  }

  /**
   * One training step of every member on one batch they share, held on the host: x [B, ...input] and
   * y [B, width], row-major. The batch is copied into the step's own buffer and the losses and metrics come
   * back as arrays [N]: no tensor is made, so a step costs one call and a few copies.
   */
  runHost(x: Float32Array, y: Float32Array, batch: number, metrics: readonly string[]): HostStepValues {
    const { tf, n } = this.host;
    if (this.host.volatile) this.hyperChanged();
    const g = this.module(batch, metrics);
    const backend = tf.backend() as unknown as WasmBackend;
    const outFloats = g.outputs.length * n;
    const io = this.ioFor(x.length + y.length + outFloats);
    this.arenaFor(g);
    // every allocation is made: the addresses, then the views
    const ioAt = backend.dataIdMap.get(io.tensor.dataId)!.memoryOffset;
    const yAt = ioAt + x.length * 4;
    const outAt = yAt + y.length * 4;
    const heap = this.heap(backend.wasm.asm.memory).f32;
    heap.set(x, ioAt / 4);
    heap.set(y, yAt / 4);
    this.call(g, batch, {
      backend,
      x: ioAt,
      y: yAt,
      xStride: 0,
      yStride: 0,
      outputs: g.outputs.map((_, i) => outAt + i * n * 4),
      base: this.arenaBase(backend),
    });
    // each output its own array, as a tensor's data would be
    const out = this.heap(backend.wasm.asm.memory).f32;
    const read = (i: number) => out.slice(outAt / 4 + i * n, outAt / 4 + (i + 1) * n);
    const values: HostStepValues = { loss: read(0) };
    metrics.forEach((name, i) => (values[name] = read(i + 1)));
    return values;
  }

  /**
   * Why steps() cannot run this population's steps several to a call (undefined where it can): its
   * shared layers' step and dropout's draws are written per call, and a compiled module's population may
   * change any hyperparameter between two steps.
   */
  stepsUncovered(): string | undefined {
    if (!this.training) return 'an evaluation';
    if (this.host.volatile) return "a compiled module's population";
    return stepsUncoveredBy(this.host.ir);
  }

  /**
   * Up to batches.length training steps on batches every member shares, in one call (steps(),
   * step/steps.ts), as that many runHost() calls compute them: each step gets its own table, batch,
   * outputs and the hyperparameter rows written for it. `ends[j]`: step j ends an interval, where the
   * divergence guard looks at the weights. `stepped()` is called as each step's inputs are written (the
   * host's step count moves on: a scheduled lr is the next step's). The call stops after a step whose
   * losses or (at an interval's end) weights are not finite; `done` says how many ran, and Adam's beta
   * powers are put back to theirs.
   */
  runHostSteps(batches: HostBatch[], ends: readonly boolean[], metrics: readonly string[], stepped: () => void): { done: number; values: HostStepValues[] } {
    const { tf, n, state } = this.host;
    const g = this.module(Math.max(...batches.map((b) => b.size)), metrics);
    const backend = tf.backend() as unknown as WasmBackend;
    const memory = backend.wasm.asm.memory;
    const { table: entries, hyper: keys } = g.step.layout;
    const recordBytes = padded((entries.length + 2) * 4);
    // the io buffer: the records, the flags, each step's batch and hyperparameter rows, then every step's
    // outputs in one block (what a threaded call copies back, and nothing it copies in)
    const stepFloats = (b: HostBatch) => b.x.length + b.y.length + keys.length * n;
    const outFloats = g.outputs.length * n;
    const count = batches.length;
    const inputFloats = (count * recordBytes) / 4 + n + batches.reduce((a, b) => a + stepFloats(b), 0);
    const io = this.ioFor(inputFloats + count * outFloats);
    this.arenaFor(g);
    const ioAt = backend.dataIdMap.get(io.tensor.dataId)!.memoryOffset;
    const base = this.arenaBase(backend);
    const flagsAt = ioAt + count * recordBytes;
    const outputsAt = ioAt + inputFloats * 4;
    const { hyperEntry } = g;
    // the beta powers before the first step: a run that stops early (done < count) goes back to them and
    // advances them again `done` times (the first step's arrays are new, the later steps move them in place:
    // 100,000 members' 40 steps ahead had made 64 MB of arrays)
    const before: [number[], number[]] = [state.accBeta1, state.accBeta2];
    let at = flagsAt + n * 4;
    // the table's entries as the first step's sources give them: only the batch's and the outputs' move
    // from step to step (a parameter made its own by the first step's writableAt stays where it went)
    let values: number[] | undefined;
    for (let j = 0; j < count; j++) {
      const b = batches[j];
      if (this.training) this.advance(false, j > 0);
      const outAt = outputsAt + j * outFloats * 4;
      const addresses: StepAddresses = { backend, x: at, y: at + b.x.length * 4, xStride: 0, yStride: 0, outputs: g.outputs.map((_, i) => outAt + i * n * 4), base };
      const rec = (ioAt + j * recordBytes) / 4;
      if (!values) values = g.sources.map((source) => source(addresses));
      else for (const i of g.perStep) values[i] = g.sources[i](addresses);
      // the views after every allocation (a parameter made its own may grow the memory)
      const { f32, i32 } = this.heap(memory);
      i32.set(values, rec);
      f32.set(b.x, addresses.x / 4);
      f32.set(b.y, addresses.y / 4);
      // the rows written for this step get copies of their own; the others stay where the arena holds them
      const rowsAt = addresses.y + b.y.length * 4;
      this.hyper.rows(keys, (k, row) => {
        f32.set(row, (base + g.hyperAt) / 4 + k * n);
        f32.set(row, rowsAt / 4 + k * n);
        i32[rec + hyperEntry[k]] = rowsAt + k * n * 4;
      });
      i32[rec + entries.length] = b.size;
      i32[rec + entries.length + 1] = ends[j] ? 1 : 0;
      at = rowsAt + keys.length * n * 4;
      stepped();
    }
    const call = { g, records: ioAt, count, recordBytes, flags: flagsAt, used: at - ioAt, base, outputsAt, outFloats };
    const done = this.threadedSteps(call, metrics) ?? this.unthreadedSteps(g, ioAt, count, recordBytes, flagsAt);
    if (this.training && done < count) {
      [state.accBeta1, state.accBeta2] = before;
      for (let j = 0; j < done; j++) this.advance(false, j > 0);
    }
    if (this.training) this.renewIds(backend);
    return { done, values: readOutputs(this.heap(memory).f32, outputsAt, done, n, metrics) };
  }

  /** steps() on this thread, on TF.js's memory: what the pool's shared memory holds of the population is then stale. */
  private unthreadedSteps(g: Generated, records: number, count: number, recordBytes: number, flags: number): number {
    this.residence.moved();
    return g.steps(records, count, this.host.n, recordBytes, flags);
  }

  /**
   * The written records' steps on the host's threads (runThreaded), where there are several for this N:
   * how many ran, or undefined where the call is to run on this thread (no threads, too few members, or
   * threads that stopped after different steps, whose work is dropped: one thread then runs it from the
   * same state).
   */
  private threadedSteps(call: { g: Generated; records: number; count: number; recordBytes: number; flags: number; used: number; base: number; outputsAt: number; outFloats: number }, metrics: readonly string[]): number | undefined {
    const { threads: pool, n } = this.host;
    const threads = pool ? threadsFor(n, pool.threads) : 1;
    if (!pool || threads < 2 || !this.training) return undefined;
    const { g } = call;
    const backend = this.host.tf.backend() as unknown as WasmBackend;
    const { module } = this.host.code.wasm({ maxBatch: g.maxBatch, metrics, clipping: g.clipping, training: true, ranged: true });
    const table = g.step.layout.table;
    const first = this.heap(backend.wasm.asm.memory).i32;
    const regions: Region[] = [];
    const region = (i: number, v: Variable): Region => ({ at: first[call.records / 4 + i], bytes: v.size * 4, back: true, token: v.dataId });
    table.forEach((e, i) => {
      if (e.kind === 'param') regions.push(region(i, this.host.variables.get(e.param)![0]));
      if (e.kind === 'slot') regions.push(region(i, this.host.slots(e.param).get(e.slot)!));
    });
    const hyperBytes = this.hyperBytes(g.step);
    if (hyperBytes) regions.push({ at: call.base + g.hyperAt, bytes: hyperBytes, back: false });
    regions.push({ at: call.records, bytes: call.used, back: false });
    const outputs = { at: call.outputsAt, bytesPerStep: call.outFloats * 4 };
    regions.push({ at: outputs.at, bytes: call.count * outputs.bytesPerStep, back: false, into: false });
    return runThreaded({
      pool,
      module,
      heap: backend.wasm.asm.memory.buffer,
      table,
      records: call.records,
      count: call.count,
      recordBytes: call.recordBytes,
      n,
      flags: call.flags,
      regions,
      outputs,
      residence: this.residence,
      scratchBytes: g.step.layout.arenaBytes + 16,
      threads,
    });
  }

  /** The table, the hyperparameters and the draws written, the generated step called, the parameters' ids renewed. */
  private call(g: Generated, batch: number, at: StepAddresses): void {
    if (this.training) this.advance(g.step.layout.shared.length > 0);
    if (this.training) this.residence.moved();
    const memory = at.backend.wasm.asm.memory;
    const table = this.heap(memory).i32;
    const first = at.base / 4;
    for (let i = 0; i < g.sources.length; i++) table[first + i] = g.sources[i](at);
    this.writeHyper(g, this.heap(memory).f32, at.base);
    this.writeShared(g, this.heap(memory).f32, at.base);
    this.writeDraws(g, memory, at.base, batch);
    if (at.rows) this.heap(memory).i32.set(at.rows, (at.base + g.rowsAt) / 4);
    g.run(at.base, this.host.n, batch);
    if (this.training) this.renewIds(at.backend);
  }

  /**
   * The positions of the members with a NaN or an infinity in a parameter of their own, by the generated
   * module's nonfinite() where it is built (undefined before the first step): what the divergence guard
   * asks at every interval's end, answered without reading the parameters out.
   */
  nonFiniteMembers(): number[] | undefined {
    const g = this.generated;
    if (!g || !this.arena) return undefined;
    const { n } = this.host;
    const backend = this.host.tf.backend() as unknown as WasmBackend;
    const flags = this.ioFor(n);
    const base = this.arenaBase(backend);
    const flagsAt = backend.dataIdMap.get(flags.tensor.dataId)!.memoryOffset;
    // the parameters' entries as they are now (a schedule may have replaced a tensor since the last step)
    const table = this.heap(backend.wasm.asm.memory).i32;
    g.step.layout.table.forEach((e, i) => {
      if (e.kind === 'param') table[base / 4 + i] = backend.dataIdMap.get(this.host.variables.get(e.param)![0].dataId)!.memoryOffset;
    });
    g.nonFinite(base, n, flagsAt);
    const out = this.heap(backend.wasm.asm.memory).f32;
    const found: number[] = [];
    for (let m = 0; m < n; m++) if (out[flagsAt / 4 + m] !== 0) found.push(m);
    return found;
  }

  /** Each dropout layer's uniform draws for this step, member by member, as the op path's memberDraws draws them. */
  private writeDraws(g: Generated, memory: WebAssembly.Memory, base: number, batch: number): void {
    const { seed, memberIds } = this.host;
    const step = this.host.step();
    let at = base + g.drawsAt;
    for (const { op, width } of g.step.layout.draws) {
      const size = batch * width;
      const all = new Float32Array(memory.buffer, at, memberIds.length * size);
      memberIds.forEach((id, i) => {
        const rng = Rng.of(seed, 'dropout', op, id, step);
        for (let j = 0; j < size; j++) all[i * size + j] = rng.uniform();
      });
      at += this.drawsBytes(width, g.maxBatch);
    }
  }

  private drawsBytes(width: number, maxBatch: number): number {
    return this.host.n * maxBatch * width * 4;
  }

  /** The members' hyperparameters into their arrays: those that change every step, and the others when they did. */
  private writeHyper(g: Generated, heap: Float32Array, base: number): void {
    const n = this.host.n;
    this.hyper.rows(g.step.layout.hyper, (k, values) => heap.set(values, (base + g.hyperAt) / 4 + k * n));
  }


  /** The file's hyperparameters for the shared layers' step, one float each (Adam's corrections move every step). */
  private writeShared(g: Generated, heap: Float32Array, base: number): void {
    const keys = g.step.layout.shared;
    const { state } = this.host;
    const value = (key: string): number => {
      if (key === 'bc1') return 1 - state.sharedAccBeta1;
      if (key === 'bc2') return 1 - state.sharedAccBeta2;
      return derivedValues(key, (k) => [this.host.base(k)])[0];
    };
    for (let k = 0; k < keys.length; k++) heap[(base + g.sharedAt) / 4 + k] = value(keys[k]);
  }

  /** Views of the whole wasm memory, made again only when it has grown (its buffer is then a new one). */
  private heap(memory: WebAssembly.Memory): { f32: Float32Array; i32: Int32Array } {
    if (this.views?.buffer !== memory.buffer) this.views = { buffer: memory.buffer, f32: new Float32Array(memory.buffer), i32: new Int32Array(memory.buffer) };
    return this.views;
  }

  /** The module for batches up to `batch` (generated again for a larger one, or when clipping starts or stops). */
  private module(batch: number, metrics: readonly string[]): Generated {
    const clipping = this.hyper.clipping();
    const g = this.generated;
    if (g && g.maxBatch >= batch && g.clipping === clipping && (g.metricNames === metrics || g.metrics === metrics.join())) {
      g.metricNames = metrics;
      return g;
    }
    const { step, module } = this.host.code.wasm({ maxBatch: batch, metrics, clipping, training: this.training });
    const memory = (this.host.tf.backend() as unknown as WasmBackend).wasm.asm.memory;
    const instance = new WebAssembly.Instance(module, { env: { memory } });
    const tableBytes = step.layout.table.length * 4;
    const hyperAt = padded(tableBytes);
    // every part at a multiple of 16 bytes from the table's cache line (see arenaBase)
    const sharedAt = hyperAt + padded(this.hyperBytes(step));
    const drawsAt = sharedAt + padded(step.layout.shared.length * 4);
    const drawsAts = new Map<string, number>();
    let scratchAt = drawsAt;
    for (const d of step.layout.draws) {
      drawsAts.set(d.op, scratchAt);
      scratchAt += padded(this.drawsBytes(d.width, batch));
    }
    // each member's real rows, i32 [N], where a batch is padded
    const rowsAt = scratchAt;
    if (step.layout.table.some((e) => e.kind === 'rows')) scratchAt += padded(this.host.n * 4);
    this.hyper.unwritten();
    this.generated = {
      step,
      run: instance.exports.step as (t: number, n: number, b: number) => void,
      nonFinite: instance.exports.nonfinite as (t: number, n: number, out: number) => void,
      steps: instance.exports.steps as (records: number, count: number, n: number, recordBytes: number, flags: number) => number,
      maxBatch: batch,
      clipping,
      metrics: metrics.join(),
      metricNames: metrics,
      outputs: ['losses', ...metrics],
      hyperAt,
      sharedAt,
      drawsAt,
      rowsAt,
      scratchAt,
      hyperEntry: hyperEntries(step.layout.table),
      perStep: perStepEntries(step.layout.table),
      sources: step.layout.table.map((entry) => this.source(entry, { scratchAt, hyperAt, sharedAt, drawsAt: drawsAts, rowsAt })),
    };
    return this.generated;
  }

  /** Where one entry of the step's table comes from, at each call. */
  private source(entry: TableEntry, where: { scratchAt: number; hyperAt: number; sharedAt: number; drawsAt: Map<string, number>; rowsAt: number }): (at: StepAddresses) => number {
    const { scratchAt, hyperAt } = where;
    switch (entry.kind) {
      case 'arena':
        return (at) => at.base + scratchAt;
      case 'x':
        return (at) => at.x;
      case 'y':
        return (at) => at.y;
      case 'xStride':
        return (at) => at.xStride;
      case 'yStride':
        return (at) => at.yStride;
      case 'rows':
        return (at) => (at.rows ? at.base + where.rowsAt : 0);
      case 'losses':
        return (at) => at.outputs[0];
      case 'metric': {
        const i = 1 + entry.index;
        return (at) => at.outputs[i];
      }
      case 'param': {
        const v = entry.param;
        return (at) => this.writableAt(at.backend, this.host.variables.get(v)![0]);
      }
      case 'slot': {
        const { param, slot } = entry;
        return (at) => this.writableAt(at.backend, this.host.slots(param).get(slot)!);
      }
      case 'hyper': {
        const index = entry.index;
        return (at) => at.base + hyperAt + index * this.host.n * 4;
      }
      case 'shared': {
        const offset = where.sharedAt + entry.index * 4;
        return (at) => at.base + offset;
      }
      case 'draws': {
        const offset = where.drawsAt.get(entry.op)!;
        return (at) => at.base + offset;
      }
    }
  }

  private hyperBytes(step: GeneratedStep): number {
    return step.layout.hyper.length * this.host.n * 4;
  }

  /**
   * Where the table starts in the arena: its buffer's first cache line boundary (TF.js's wasm allocator
   * aligns to 8 bytes). Every scratch buffer lies at a multiple of 16 bytes from it, so no vector the step
   * stores and reads back straddles two cache lines: at 8 bytes off, a quarter of them did, and forum x1000's
   * step took 0.60 ms where aligned it takes 0.54 (the same bits; bench/NOTES.md).
   */
  private arenaBase(backend: WasmBackend): number {
    const at = backend.dataIdMap.get(this.arena!.tensor.dataId)!.memoryOffset;
    return Math.ceil(at / CACHE_LINE) * CACHE_LINE;
  }

  /** One buffer for the table, the hyperparameter arrays and the scratch space, kept between steps. */
  private arenaFor(g: Generated): { tensor: Tensor; bytes: number } {
    const bytes = g.scratchAt + g.step.layout.arenaBytes + 16 + CACHE_LINE;
    if (this.arena && this.arena.bytes >= bytes) return this.arena;
    this.arena?.tensor.dispose();
    const tf = this.host.tf;
    const info = (tf.backend() as unknown as WasmBackend).makeOutput([Math.ceil(bytes / 4)], 'float32');
    this.arena = { tensor: tf.keep(tf.engine().makeTensorFromTensorInfo(info as never) as Tensor), bytes };
    this.hyper.unwritten();
    return this.arena;
  }

  /** The buffer runHost() copies batches into and reads the outputs from, kept between steps (grown for a larger batch). */
  private ioFor(floats: number): { tensor: Tensor; floats: number } {
    if (this.io && this.io.floats >= floats) return this.io;
    this.io?.tensor.dispose();
    const tf = this.host.tf;
    const info = (tf.backend() as unknown as WasmBackend).makeOutput([floats], 'float32');
    this.io = { tensor: tf.keep(tf.engine().makeTensorFromTensorInfo(info as never) as Tensor), floats };
    return this.io;
  }

  /**
   * Gives each parameter a new tensor id at the same memory. TF.js treats a tensor's data as immutable, and
   * its wasm backend keeps XNNPACK operators, with weights packed from a tensor, by the tensor's id: a
   * product that reads a parameter this step changed in place would otherwise reuse the packed old
   * values. Dropping the old id drops those operators; the data stays where it is.
   */
  private renewIds(backend: WasmBackend): void {
    for (const vars of this.host.variables.values()) {
      for (const v of vars) {
        const data = backend.dataIdMap.get(v.dataId)!;
        backend.wasm.tfjs.disposeData(data.id);
        data.id = backend.dataIdNextNumber++;
        backend.wasm.tfjs.registerTensor(data.id, v.size, data.memoryOffset);
      }
    }
  }

  /**
   * A variable's address, its buffer made its own first where another tensor shares it (a clone kept for the best
   * weights, say): the step writes in place, and must not change what someone else holds.
   */
  private writableAt(backend: WasmBackend, v: Variable): number {
    const data = backend.dataIdMap.get(v.dataId)!;
    if (data.refCount === 1) return data.memoryOffset;
    const tf = this.host.tf;
    tf.tidy(() => v.assign(tf.add(v, tf.scalar(0))));
    return backend.dataIdMap.get(v.dataId)!.memoryOffset;
  }

  /** Adam's beta powers one step on, as the op path advances them. */
  private advance(shared: boolean, inPlace = false): void {
    advanceBetaPowers(this.host, shared, (key) => this.hyper.values(key), inPlace);
  }

  dispose(): void {
    this.residence.moved();
    this.arena?.tensor.dispose();
    this.arena = undefined;
    this.io?.tensor.dispose();
    this.io = undefined;
  }
}

/**
 * The outputs of `count` steps, one block from `at` (bytes): each step's losses, then each metric, [N]
 * each. Each an array [N] of its own as a tensor's data would be: views of one copy, made at once (an
 * array per step and output had cost an allocation each).
 */
function readOutputs(heap: Float32Array, at: number, count: number, n: number, metrics: readonly string[]): HostStepValues[] {
  const k = 1 + metrics.length;
  const all = heap.slice(at / 4, at / 4 + count * k * n);
  const results: HostStepValues[] = [];
  for (let j = 0; j < count; j++) {
    const view = (i: number) => all.subarray((j * k + i) * n, (j * k + i + 1) * n);
    const values: HostStepValues = { loss: view(0) };
    for (let i = 0; i < metrics.length; i++) values[metrics[i]] = view(i + 1);
    results.push(values);
  }
  return results;
}

/** The entries of a table whose values move from step to step within a call: the batch's and the outputs' addresses. */
function perStepEntries(table: TableEntry[]): number[] {
  const kinds = new Set<TableEntry['kind']>(['x', 'y', 'losses', 'metric']);
  return table.flatMap((e, i) => (kinds.has(e.kind) ? [i] : []));
}

/** The table entry of each hyperparameter array, by its index in StepLayout.hyper. */
function hyperEntries(table: TableEntry[]): number[] {
  const at: number[] = [];
  table.forEach((e, i) => {
    if (e.kind === 'hyper') at[e.index] = i;
  });
  return at;
}

/** bytes rounded up to a whole 16: where the next part of a buffer starts */
const padded = (bytes: number) => Math.ceil(bytes / 16) * 16;
/** bytes in a cache line (x86's and ARM's): where the arena's table starts */
const CACHE_LINE = 64;

/** A generated module, instantiated, with what each call writes into its table. */
interface Generated {
  step: GeneratedStep;
  run: (table: number, n: number, batch: number) => void;
  /** nonfinite(table, n, out): out[m] NaN where member m's parameters hold a NaN or an infinity, else 0 */
  nonFinite: (table: number, n: number, out: number) => void;
  /** steps(records, count, n, recordBytes, flags): up to count steps, one record each; how many ran */
  steps: (records: number, count: number, n: number, recordBytes: number, flags: number) => number;
  maxBatch: number;
  clipping: boolean;
  metrics: string;
  /** the array of names last asked for (the same array at every step: no join to compare) */
  metricNames: readonly string[];
  /** the outputs made at each call: the losses, then each metric */
  outputs: string[];
  /** where the hyperparameter arrays, the draws and the scratch space start, in bytes from the arena's start */
  hyperAt: number;
  sharedAt: number;
  drawsAt: number;
  /** where each member's real rows are written, where a batch is padded */
  rowsAt: number;
  scratchAt: number;
  /** the table entry of each hyperparameter array, by its index in StepLayout.hyper */
  hyperEntry: number[];
  /** the entries whose values move from step to step within a call of several (perStepEntries) */
  perStep: number[];
  /** each table entry's value at a call */
  sources: ((at: StepAddresses) => number)[];
}

/** What a call's table entries are computed from: the addresses of the batch and of the outputs. */
interface StepAddresses {
  backend: WasmBackend;
  x: number;
  y: number;
  xStride: number;
  yStride: number;
  outputs: number[];
  /** the arena's address */
  base: number;
  /** each member's real rows, where some have fewer than B */
  rows?: Int32Array;
}

/** Why a model's steps cannot run several to a call (FusedStep.stepsUncovered), or undefined where they can. */
export function stepsUncoveredBy(ir: EnsembleIR): string | undefined {
  if (ir.params.some((p) => p.layout === 'shared')) return 'shared layers';
  if (ir.ops.some((op) => op.id > 0 && drawsInStep(op.op))) return "dropout's draws";
  return undefined;
}

/** Whether the layer's generated step reads the host's draws (dropout). */
function drawsInStep(op: string): boolean {
  const rule = layerKind(op)!.wasm;
  return hasRule(rule) && !!rule.draws;
}
