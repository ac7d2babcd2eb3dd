// A run's generated step, made when something first asks for it and kept: every population of the run
// (halving's survivors, cross-validation's folds, the evaluation beside the training) reads the same code
// instead of generating and compiling its own. It belongs to the run's step plan (runtime/fused-step.ts
// planStep), and `netc ir --after fuse|wgsl` prints from it. Nothing here is generated until asked:
// `netc check` never builds one.
import { generateStep, type GeneratedStep } from './generate.js';
import { generateWgslStep, whyNotWgsl, type WgslStep } from './wgsl.js';
import { whyNotFused, type RunStepConfig } from './plan.js';

/** What one generated step is built for, beyond the run's configuration. */
export interface StepVariant {
  /** the largest batch it is called with (scratch space is sized for it) */
  maxBatch: number;
  metrics: readonly string[];
  /** whether any member clips its gradients now (PBT may start or stop it) */
  clipping: boolean;
  /** false: an evaluation (forward in inference mode, the loss and the metrics) */
  training: boolean;
  /** the threaded variant: a shared memory, and each function takes a member range (StepConfig.ranged) */
  ranged?: boolean;
}

/** A generated WebAssembly step and its module, compiled (by the optimizing tier where V8 lets us ask). */
export interface WasmCode {
  step: GeneratedStep;
  module: WebAssembly.Module;
}

const variantKey = (v: StepVariant): string => `${v.maxBatch}|${v.metrics.join()}|${v.clipping}|${v.training}${v.ranged ? '|ranged' : ''}`;

/** The generated steps of one configuration, each made on first ask. */
export class StepCode {
  private readonly wasmSteps = new Map<string, WasmCode>();
  private readonly wgslSteps = new Map<string, WgslStep>();
  private whyWasm?: { why: string | undefined };
  private whyWgsl?: { why: string | undefined };

  constructor(readonly config: RunStepConfig) {}

  /** How many steps have been generated (WebAssembly and WGSL): what a run's populations made between them. */
  get made(): number {
    return this.wasmSteps.size + this.wgslSteps.size;
  }

  /** Why the WebAssembly step does not cover this configuration, or undefined where it does. */
  whyNotWasm(): string | undefined {
    this.whyWasm ??= { why: whyNotFused(this.config) };
    return this.whyWasm.why;
  }

  /** Why the WGSL step does not cover this configuration, or undefined where it does. */
  whyNotWgsl(): string | undefined {
    this.whyWgsl ??= { why: whyNotWgsl(this.config) };
    return this.whyWgsl.why;
  }

  /** The WebAssembly step for this variant (N is read at run time: one module serves any member count). */
  wasm(v: StepVariant): WasmCode {
    const key = variantKey(v);
    let code = this.wasmSteps.get(key);
    if (!code) {
      const step = generateStep({ ...this.config, metrics: v.metrics, maxBatch: v.maxBatch, clipping: v.clipping, training: v.training, ...(v.ranged ? { ranged: true } : {}) });
      code = { step, module: optimizedModule(step.bytes) };
      this.wasmSteps.set(key, code);
    }
    return code;
  }

  /** The WGSL kernels for this variant and `n` members (their sizes are constants in the text). */
  wgsl(v: StepVariant, n: number): WgslStep {
    const key = `${n}|${variantKey(v)}`;
    let step = this.wgslSteps.get(key);
    if (!step) {
      step = generateWgslStep({ ...this.config, metrics: v.metrics, clipping: v.clipping }, n, v.maxBatch, v.training);
      this.wgslSteps.set(key, step);
    }
    return step;
  }
}

/**
 * The module compiled by the optimizing compiler at once, where the engine lets us say so (Node's V8
 * flags): a step runs thousands of times, and V8's baseline compiler would run the first few hundred at a
 * third of the speed before tiering up. Elsewhere (a browser), as the engine compiles it.
 */
function optimizedModule(bytes: Uint8Array<ArrayBuffer>): WebAssembly.Module {
  const v8 = (globalThis as { process?: { getBuiltinModule?(name: string): unknown } }).process?.getBuiltinModule?.('node:v8') as { setFlagsFromString(flags: string): void } | undefined;
  if (!v8) return new WebAssembly.Module(bytes);
  v8.setFlagsFromString('--no-liftoff');
  try {
    return new WebAssembly.Module(bytes);
  } finally {
    v8.setFlagsFromString('--liftoff');
  }
}
