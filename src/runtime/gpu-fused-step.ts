// The generated training step on TF.js's WebGPU backend: the WGSL kernels of src/step/wgsl.ts, run on
// the backend's own device, in its own command encoder, on the population's own buffers. Each call
// records one compute pass (a dispatch per layer and direction), and the parameters and optimizer slots
// are read and written in place where TF.js keeps them: the population stays TF.js variables, so
// checkpoints, extraction and schedules see no difference.
import type { TF, Tensor, Variable } from '../kernels/tf.js';
import type { WgslStep } from '../step/wgsl.js';
import { bindingName, type Binding, type StepBuffer } from '../wgsl/kernel-text.js';
import type { FusedHost } from './fused-step.js';
import { advanceBetaPowers, derivedValues, StepHyper } from './step-hyper.js';
import { Rng } from '../util/rng.js';

// GPUBufferUsage's flags (WebGPU's numbers; the globals need not exist where this module loads)
const STORAGE = 0x80;
const COPY_DST = 0x08;

/** The parts of WebGPU this step uses (the device is TF.js's). */
interface Buffer {
  readonly size: number;
  destroy(): void;
}
interface BindGroupLayout {
  readonly __brand?: 'layout';
}
interface Pipeline {
  getBindGroupLayout(index: number): BindGroupLayout;
}
interface Pass {
  setPipeline(p: Pipeline): void;
  setBindGroup(index: number, group: unknown): void;
  dispatchWorkgroups(x: number, y: number): void;
  end(): void;
}
interface Device {
  createBuffer(d: { size: number; usage: number }): Buffer;
  createShaderModule(d: { code: string }): unknown;
  createComputePipeline(d: { layout: 'auto'; compute: { module: unknown; entryPoint: string } }): Pipeline;
  createBindGroup(d: { layout: BindGroupLayout; entries: { binding: number; resource: { buffer: Buffer } }[] }): unknown;
  queue: { writeBuffer(b: Buffer, offset: number, data: Float32Array): void };
  limits?: { maxStorageBufferBindingSize: number };
}
interface TensorData {
  dtype: string;
  resource: Buffer | null;
  values: unknown;
  refCount: number;
}
interface WebGPUBackend {
  device: Device;
  tensorMap: { get(dataId: object): TensorData | undefined };
  uploadToGPU(dataId: object): void;
  makeTensorInfo(shape: number[], dtype: string): { dataId: object; shape: number[]; dtype: string };
  ensureCommandEncoderReady(): void;
  endComputePassEncoder(): void;
  submitQueue(): void;
  commandEncoder: { beginComputePass(): Pass } | null;
}

/** One generated step's kernels, compiled, with what each call binds worked out once. */
interface Built {
  step: WgslStep;
  pipelines: Pipeline[];
  /** every buffer the kernels bind, each once, and each kernel's bindings as indices into it */
  buffers: Binding[];
  uses: number[][];
  /** the hyperparameter rows (names the hyper buffer's layout), and the shared layers' rows: their index and key */
  hyperKeys: string;
  sharedRows: [number, string][];
}

/** The generated WGSL step of one population (with `training` false, its evaluation: the forward pass in inference mode, the losses and metrics). */
export class GpuFusedStep {
  /** compiled kernels by the generated step (the plan's, one per N, batch, metrics, clipping): an evaluation's batches alternate between two sizes (its last is short) */
  private readonly built = new Map<WgslStep, Built>();
  private acts?: Buffer;
  private drawsBuffer?: Buffer;
  private hyperBuffer?: { buffer: Buffer; n: number; keys: string };
  /** the members' hyperparameter rows, and which the buffer holds already */
  private readonly hyper: StepHyper;

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

  /** Whether any member clips its gradients (PBT may set clipnorm): the step then has clipping's kernels. */
  clipping(): boolean {
    return this.hyper.clipping();
  }

  /**
   * Whether a step of `batch` rows runs here: not where the scratch space of every member's values would
   * be larger than one storage binding of the device may be (lavapipe: 128 MiB, forum.net at about 150,000
   * members); such a step runs on TF.js ops, on the same variables.
   */
  runs(batch: number, metrics: readonly string[]): boolean {
    const device = (this.host.tf.backend() as unknown as WebGPUBackend).device;
    const limit = device.limits?.maxStorageBufferBindingSize ?? 128 * 2 ** 20;
    return this.source(batch, metrics).actsFloats * 4 <= limit;
  }

  /** Compiles the kernels for batches of `batch` rows with these metrics now, so that the first step does not. */
  prepare(batch: number, metrics: readonly string[]): void {
    this.kernels(batch, metrics);
  }

  /** The WGSL of the kernels for a batch size and metrics, with clipping's kernels where any member clips now. */
  source(batch: number, metrics: readonly string[]): WgslStep {
    return this.host.code.wgsl({ maxBatch: batch, metrics, clipping: this.clipping(), training: this.training }, this.host.n);
  }

  /** One training step (or an evaluation) of every member on x [B, ...input], y [B, width]: the members' losses [N] and each metric [N]. */
  run(x: Tensor, y: Tensor, metrics: readonly string[]): { losses: Tensor; metrics: Record<string, Tensor> } {
    const { tf, n } = this.host;
    if (this.host.volatile) this.hyperChanged();
    const batch = x.shape[0] as number;
    const built = this.kernels(batch, metrics);
    const backend = tf.backend() as unknown as WebGPUBackend;
    // the kernels read float32: a float32 tensor may still hold an int32 buffer (TF.js's cast of one-hot labels shares it)
    const copies: Tensor[] = [];
    [x, y] = [x, y].map((t) => {
      if (backend.tensorMap.get(t.dataId)?.dtype === 'float32') return t;
      const copy = tf.add(t, tf.scalar(0, 'float32')) as Tensor;
      copies.push(copy);
      return copy;
    });
    const outputs = ['losses', ...metrics].map(() => {
      const info = backend.makeTensorInfo([n], 'float32');
      backend.uploadToGPU(info.dataId);
      return info;
    });
    if (this.training) advanceBetaPowers(this.host, built.sharedRows.length > 0, (key) => this.hyper.values(key));
    this.writeHyper(backend.device, built);
    // every buffer found before the pass begins (making a variable's buffer its own runs TF.js ops)
    const find = this.buffers(backend, built.step, x, y, outputs, metrics);
    const buffers = built.buffers.map(find);
    backend.ensureCommandEncoderReady();
    backend.endComputePassEncoder();
    const pass = backend.commandEncoder!.beginComputePass();
    built.step.kernels.forEach((k, i) => {
      const pipeline = built.pipelines[i];
      pass.setPipeline(pipeline);
      const entries = built.uses[i].map((at, binding) => ({ binding, resource: { buffer: buffers[at] } }));
      pass.setBindGroup(0, backend.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }));
      pass.dispatchWorkgroups(k.groups[0], k.groups[1]);
    });
    pass.end();
    backend.submitQueue();
    tf.dispose(copies);
    this.forgetHostCopies(backend);
    const made = outputs.map((o) => tf.engine().makeTensorFromTensorInfo(o as never) as Tensor);
    return { losses: made[0], metrics: Object.fromEntries(metrics.map((name, i) => [name, made[i + 1]])) };
  }

  /** Where each kind of binding the kernels name is: the batch, the outputs, the population's variables, and the step's own buffers. */
  private buffers(backend: WebGPUBackend, step: WgslStep, x: Tensor, y: Tensor, outputs: { dataId: object }[], metrics: readonly string[]): (b: Binding) => Buffer {
    const on = (dataId: object): Buffer => {
      backend.uploadToGPU(dataId);
      return backend.tensorMap.get(dataId)!.resource!;
    };
    const variable = (v: Variable): Buffer => on(this.writable(backend, v).dataId);
    const fixed: Record<StepBuffer, () => Buffer> = {
      x: () => on(x.dataId),
      y: () => on(y.dataId),
      losses: () => on(outputs[0].dataId),
      acts: () => this.actsBuffer(backend.device, step.actsFloats),
      hyper: () => this.hyperBuffer!.buffer,
      draws: () => this.writeDraws(backend.device, step),
    };
    return (b) => {
      if (b.kind === 'param') return variable(this.host.variables.get(b.param)![0]);
      if (b.kind === 'slot') return variable(this.host.slots(b.param).get(b.slot)!);
      if (b.kind === 'metric') return on(outputs[1 + metrics.indexOf(b.metric)].dataId);
      return fixed[b.kind]();
    };
  }

  /**
   * A variable whose buffer is its own, made so first where another tensor shares it (a clone kept for
   * the best weights, say): the step writes in place, and must not change what someone else holds.
   */
  private writable(backend: WebGPUBackend, v: Variable): Variable {
    const data = backend.tensorMap.get(v.dataId)!;
    if (data.refCount > 1) {
      const tf = this.host.tf;
      tf.tidy(() => v.assign(tf.add(v, tf.scalar(0))));
    }
    return v;
  }

  /** TF.js keeps a copy of what it last read of a tensor: the step changed the variables under it. */
  private forgetHostCopies(backend: WebGPUBackend): void {
    for (const p of this.host.ir.params) {
      for (const v of [this.host.variables.get(p.name)![0], ...this.host.slots(p.name).values()]) {
        const data = backend.tensorMap.get(v.dataId);
        if (data?.resource) data.values = null;
      }
    }
  }

  /** The compiled kernels for this batch size and these metrics (N is the population's). */
  private kernels(batch: number, metrics: readonly string[]): Built {
    const step = this.source(batch, metrics);
    const kept = this.built.get(step);
    if (kept) return kept;
    const device = (this.host.tf.backend() as unknown as WebGPUBackend).device;
    const pipelines = step.kernels.map((k) => device.createComputePipeline({ layout: 'auto', compute: { module: device.createShaderModule({ code: k.code }), entryPoint: 'main' } }));
    // each buffer bound once a step, however many kernels bind it (the draws are written once)
    const at = new Map<string, number>();
    const buffers: Binding[] = [];
    const uses = step.kernels.map((k) =>
      k.bindings.map((b) => {
        const name = bindingName(b);
        if (!at.has(name)) at.set(name, buffers.push(b) - 1);
        return at.get(name)!;
      }),
    );
    const sharedRows = step.hyper.flatMap((key, k): [number, string][] => (key.startsWith('shared:') ? [[k, key.slice('shared:'.length)]] : []));
    // a few sizes at most (a short last batch, a halved population): older ones are let go past four
    if (this.built.size >= 4) this.built.delete(this.built.keys().next().value!);
    const made = { step, pipelines, buffers, uses, hyperKeys: step.hyper.join(), sharedRows };
    this.built.set(step, made);
    return made;
  }

  /**
   * Each dropout layer's uniform draws for this step into the `draws` buffer, member by member, as the op
   * path's memberDraws and the wasm step draw them: member id's stream (seed, 'dropout', op, id, step).
   */
  private writeDraws(device: Device, step: WgslStep): Buffer {
    const { seed, memberIds } = this.host;
    const now = this.host.step();
    if (!this.drawsBuffer || this.drawsBuffer.size < step.drawsFloats * 4) {
      this.drawsBuffer?.destroy();
      this.drawsBuffer = device.createBuffer({ size: step.drawsFloats * 4, usage: STORAGE | COPY_DST });
    }
    const all = new Float32Array(step.drawsFloats);
    for (const { op, at, width } of step.draws) {
      const size = step.batch * width;
      memberIds.forEach((id, i) => {
        const rng = Rng.of(seed, 'dropout', op, id, now);
        for (let j = 0; j < size; j++) all[at + i * size + j] = rng.uniform();
      });
    }
    device.queue.writeBuffer(this.drawsBuffer, 0, all);
    return this.drawsBuffer;
  }

  private actsBuffer(device: Device, floats: number): Buffer {
    if (this.acts && this.acts.size >= floats * 4) return this.acts;
    this.acts?.destroy();
    this.acts = device.createBuffer({ size: floats * 4, usage: STORAGE });
    return this.acts;
  }

  /** The members' hyperparameter rows: those that move every step (Adam's corrections, a scheduled lr), and the others when they changed. */
  private writeHyper(device: Device, { step, hyperKeys: keys, sharedRows }: Built): void {
    const n = this.host.n;
    // a new buffer for a new N, or new rows (clipping started or stopped: clipnorm's row comes and goes)
    if (!this.hyperBuffer || this.hyperBuffer.n !== n || this.hyperBuffer.keys !== keys) {
      this.hyperBuffer?.buffer.destroy();
      this.hyperBuffer = { buffer: device.createBuffer({ size: Math.max(1, step.hyper.length) * n * 4, usage: STORAGE | COPY_DST }), n, keys };
      this.hyper.unwritten();
    }
    this.hyper.rows(step.hyper, (k, values) => device.queue.writeBuffer(this.hyperBuffer!.buffer, k * n * 4, values));
    // the shared layers' step: the file's values at every step (Adam's corrections move), as the wasm step writes them
    for (const [k, key] of sharedRows) device.queue.writeBuffer(this.hyperBuffer!.buffer, k * n * 4, new Float32Array(n).fill(this.sharedValue(key)));
  }

  /** The file's value of a hyperparameter key for the shared layers' step (their beta powers are the file's betas'). */
  private sharedValue(key: string): number {
    const { state } = this.host;
    if (key === 'bc1') return 1 - state.sharedAccBeta1;
    if (key === 'bc2') return 1 - state.sharedAccBeta2;
    return derivedValues(key, (k) => [this.host.base(k)])[0];
  }

  dispose(): void {
    this.acts?.destroy();
    this.acts = undefined;
    this.drawsBuffer?.destroy();
    this.drawsBuffer = undefined;
    this.hyperBuffer?.buffer.destroy();
    this.hyperBuffer = undefined;
  }
}
