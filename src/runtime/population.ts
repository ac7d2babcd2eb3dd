// A population: N members of one ensemble IR, living in fused TF.js variables, with their optimizer
// state and hyperparameters. It runs the widened forward pass op by op, the fused loss (the sum of the
// members' mean losses, so each member gets exactly its own gradient, and a shared layer's parameters,
// one variable that every member reads, the sum of theirs) and the fused optimizer step.
import type { EnsembleIR, WideParam } from '../ensemble/ensemble-ir.js';
import { fusedShape } from '../core/layout.js';
import type { Act, ForwardContext, Params } from '../layers/forward.js';
import { layerKind } from '../layers/registry.js';
import { blockMembers, blocksToMembers, groupedMembers, membersToBlocks } from '../layers/widened.js';
import { blockVector } from '../kernels/block-vector.js';
import { blockMask, fuse, nonFiniteRows, placeMember, stackMemberRange, stackMembers, stacksInPlace, unfuse } from '../kernels/fused.js';
import { wasmHeap } from '../kernels/matmul.js';
import { memberLosses, memberMetric } from '../kernels/losses.js';
import { applyGradients, createState, hyperValues, sharedValue, type OptimizerState, type SharedSlots, type Slot } from '../kernels/optimizers.js';
import { gatherMembers } from '../kernels/member-axis.js';
import type { TF, Tensor, Variable } from '../kernels/tf.js';
import { applyUpdates, memberDraws, type ModulePopulation, type StepInputs } from '../kernels/module-population.js';
import { StepCode } from '../step/step-code.js';
import { opsPlan, planStep, FusedStep, type Engine, type StepPlan, type FusedHost, type HostBatch, type HostStepValues } from './fused-step.js';
import { GpuFusedStep } from './gpu-fused-step.js';

export interface PopulationSpec {
  tf: TF;
  ensemble: EnsembleIR;
  /** the members' ids: they name their random streams, so a member is the same member in any population */
  memberIds: number[];
  seed: number;
  optimizer: string;
  loss: { name: string; args: Record<string, unknown> };
  /** per-member hyperparameter value by key (`lr`, `dropout_1.rate`) and member id */
  hyper(key: string, member: number): number;
  /** multiplies member id's lr in optimizer step t (the train block's lr_schedule); absent: lr is constant */
  lrFactor?(member: number, step: number): number;
  /**
   * the file's value of a hyperparameter (HyperTable.base), what a shared layer's parameters train with;
   * needed to train a population with shared layers
   */
  base?(key: string): number;
  /** each member's initial parameter values, by name (from initMember or a checkpoint); a shared layer's are read from the first member's */
  initial(member: number): Map<string, Float32Array>;
  /** a compiled module's forward pass (netc compile), run in place of the ops in IR order */
  forward?: ModuleForward;
  /** a compiled module's training step, run in place of step()'s own ops */
  step?: ModuleStep;
  /**
   * how a training step runs: `fused`, the generated step (one WebAssembly call on wasm, one compute
   * pass of WGSL kernels on webgpu, for the models each covers); `ops`, TF.js ops with autodiff (the reference); `auto` (default, or NETC_ENGINE):
   * fused where it applies
   */
  engine?: Engine;
  /** the run's step plan (planStep), made once for every population of the run; absent: made here from `engine` */
  plan?: StepPlan;
}

export type { Engine };

/** A compiled module's forward(pop, x, s): member-first outputs [N, B, ...]. */
export type ModuleForward = (pop: ModulePopulation, x: Tensor, s: StepInputs) => Tensor;
/** A compiled module's step(pop, x, y, metrics): the members' losses [N] and each named metric [N]. */
export type ModuleStep = (pop: ModulePopulation, x: Tensor, y: Tensor, metrics: readonly string[]) => { losses: Tensor; metrics: Record<string, Tensor> };

/** Named metrics of a tensor step: each [N], handed to `take` (the caller disposes them). */
export interface StepMetrics {
  names: readonly string[];
  take(values: Record<string, Tensor>): void;
}
/** A batch on the device: x [N, B, ...] (each member's own) or [B, ...] (shared), y likewise; rows as MemberBatch.rows. */
export interface TensorBatch {
  kind: 'tensors';
  x: Tensor;
  y: Tensor;
  metrics?: StepMetrics;
  rows?: Int32Array;
}
/** A batch every member shares, as row-major arrays on the host: x [size, ...input], y [size, width]. */
export interface HostBatchStep {
  kind: 'host';
  x: Float32Array;
  y: Float32Array;
  size: number;
  names: readonly string[];
}
/** k host batches run ahead in one call; `ends[i]`: step i ends an interval (its weights are checked). */
export interface StepsAhead {
  kind: 'ahead';
  batches: HostBatch[];
  ends: readonly boolean[];
  names: readonly string[];
}
/** What Population.step() takes: where the batch is held says which path runs it. */
export type StepBatch = TensorBatch | HostBatchStep | StepsAhead;

/** What gather() hands a new population: fused tensors by parameter name and by slot key. */
interface Gathered {
  params: Map<string, Tensor[]>;
  slots: Map<string, Map<string, Tensor>>;
  accBeta1: number[];
  accBeta2: number[];
  sharedAccBeta: [number, number];
  step: number;
}

/** A value between ops: widened (Act), or one tensor per member under the loop lowering. */
export type Value = Act | Tensor[];

export interface ForwardPass {
  /** the model input: [B, ...], shared by every member, or [N, B, ...], each member's own (`split:`) */
  input(x: Tensor): Value;
  /** runs op `id` of the ensemble IR on the values of its inputs */
  op(id: number, inputs: Value[]): Value;
  /** the output, member-first [N, B, ...] */
  output(v: Value): Tensor;
}

/**
 * The spec of a population of a compiled program's members 0..N-1, with the hyperparameter table's values
 * and the given initial weights (what a trace or a test builds; the trainer adds schedules and shards).
 */
export function programSpec(
  tf: TF,
  program: { ensemble: { seed: number }; train?: { optimizer: { name: string }; loss: PopulationSpec['loss'] } },
  ensemble: EnsembleIR,
  table: { value(key: string, member: number): number; base(key: string): number },
  initial: PopulationSpec['initial'],
): PopulationSpec {
  return {
    tf,
    ensemble,
    memberIds: Array.from({ length: ensemble.members }, (_, i) => i),
    seed: program.ensemble.seed,
    optimizer: program.train!.optimizer.name,
    loss: program.train!.loss,
    hyper: (key, m) => table.value(key, m),
    base: (key) => table.base(key),
    initial,
  };
}

let populations = 0;

/** Backends whose dataSync() is a plain read of host memory; the others (webgpu, webgl) are read with data(). */
const HOST_MEMORY = new Set(['cpu', 'wasm', 'tensorflow']);

/** Whether this TF.js reads tensors synchronously from host memory (where a scan on the host is cheap too). */
export const readsHostMemory = (tf: TF): boolean => HOST_MEMORY.has(tf.getBackend());

export class Population {
  readonly tf: TF;
  readonly ir: EnsembleIR;
  readonly n: number;
  readonly memberIds: number[];
  /** fused variables by parameter name; `separate` parameters have one per member */
  readonly variables = new Map<string, Variable[]>();
  readonly masks = new Map<string, Tensor>();
  readonly slots: Slot[] = [];
  readonly state: OptimizerState;
  /** optimizer steps taken */
  stepsTaken = 0;
  /** the parameters of shared layers: one variable, no member axis, the same for every member */
  readonly sharedParams = new Set<string>();
  /** the ops whose value depends on a parameter (a gradient must reach it), by id */
  private readonly trained: Set<number>;
  private readonly uid = populations++;
  private hyperCache = new Map<string, Tensor>();
  /** this population as a compiled module's step sees it (its own variables, not copies) */
  readonly module: ModulePopulation;
  private sharedCache = new Map<string, Tensor | undefined>();
  /** the generated training step, where it runs this population's steps */
  private readonly fused?: FusedStep;
  /** the generated evaluation (forward in inference mode, loss, metrics), beside the generated step */
  private readonly evaluator?: FusedStep;
  /** the generated WGSL step on webgpu, where it runs this population's steps */
  private readonly gpuStep?: GpuFusedStep;
  /** on webgpu, the WGSL evaluation (forward in inference mode, losses and metrics) */
  private readonly gpuEvaluator?: GpuFusedStep;
  /** the step plan this population runs: the engine chosen, the generated step and why not */
  readonly plan: StepPlan;
  /** how step() runs (the plan's engine): the generated step (`fused`), or TF.js ops (`ops`) */
  get engine(): 'fused' | 'ops' {
    return this.plan.engine;
  }
  /** why the step runs on ops where the fused step was asked for (the plan's why) */
  get engineNote(): string | undefined {
    return this.plan.why;
  }

  /**
   * `from` (used by gather()) gives the fused tensors to start from, parameters and optimizer slots, in
   * place of the members' initial values.
   */
  constructor(
    readonly spec: PopulationSpec,
    from?: Gathered,
  ) {
    const { tf, ensemble } = spec;
    this.tf = tf;
    this.ir = ensemble;
    this.memberIds = spec.memberIds;
    this.n = spec.memberIds.length;
    this.trained = dependsOnParams(ensemble);
    // `let`, dropped once the variables hold it: the closures this constructor makes keep its scope alive,
    // and with it every variable a closure of the scope reads (32 MB of initial values at 100,000 members)
    let initial = from ? undefined : this.initialValues();
    // built in a tidy: a variable copies its initial tensor, which is then disposed
    tf.tidy(() => {
      for (const p of ensemble.params) {
        const name = (m?: number) => `netc${this.uid}/${p.name}${m === undefined ? '' : `#${m}`}`;
        let start: Tensor[];
        if (from) start = from.params.get(p.name)!;
        else {
          const own = initial!.get(p.name)!;
          start = own.length === 1 && p.layout !== 'separate' ? [tf.tensor(own[0], p.layout === 'shared' ? p.shape : fusedShape(p.layout, p.shape, this.n))] : own.map((data) => tf.tensor(data, p.shape));
        }
        const vars = start.map((t, m) => tf.variable(t, p.trainable, name(p.layout === 'separate' ? m : undefined)));
        this.variables.set(p.name, vars);
        if (p.layout === 'blockdiag') this.masks.set(p.name, tf.keep(tf.tensor(blockMask(p.shape, this.n), fusedShape(p.layout, p.shape, this.n))));
        if (p.trainable) vars.forEach((v, m) => this.slots.push(this.slot(p, v, p.layout === 'separate' ? m : undefined)));
        if (p.layout === 'shared') this.sharedParams.add(p.name);
      }
    });
    initial = undefined;
    let state: OptimizerState | undefined;
    tf.tidy(() => void (state = createState(tf, spec.optimizer, this.slots, this.n)));
    this.state = state!;
    if (from) {
      tf.tidy(() => {
        for (const [key, slots] of this.state.tensors) for (const [slotName, v] of slots) v.assign(from.slots.get(key)!.get(slotName)!);
      });
      this.state.accBeta1 = from.accBeta1;
      this.state.accBeta2 = from.accBeta2;
      [this.state.sharedAccBeta1, this.state.sharedAccBeta2] = from.sharedAccBeta;
      this.stepsTaken = from.step;
    }
    this.module = this.moduleView();
    const code = () => new StepCode({ ensemble, optimizer: spec.optimizer, loss: spec.loss, metrics: [] });
    this.plan = spec.step || spec.forward ? opsPlan(code()) : (spec.plan ?? planStep(tf, spec.engine, code()));
    if (this.plan.engine === 'fused') {
      const host: FusedHost = {
        tf,
        ir: ensemble,
        n: this.n,
        optimizer: spec.optimizer,
        variables: this.variables,
        slots: (param) => this.state.tensors.get(param) ?? new Map(),
        state: this.state,
        hyper: (key) => this.hyper(key),
        base: (key) => (spec.base ? spec.base(key) : this.hyper(key)[0]),
        scheduled: !!spec.lrFactor,
        seed: spec.seed,
        memberIds: this.memberIds,
        step: () => this.stepsTaken,
        code: this.plan.code,
        ...(this.plan.threads ? { threads: this.plan.threads } : {}),
      };
      if (this.plan.target === 'wgsl') {
        this.gpuStep = new GpuFusedStep(host);
        this.gpuEvaluator = new GpuFusedStep(host, false);
      } else {
        this.fused = new FusedStep(host);
        this.evaluator = new FusedStep(host, false);
      }
    }
  }


  /**
   * The members' initial values by parameter: one fused array (or, for `separate`, each member's own),
   * filled member by member, so that only one member's own arrays are alive at a time (100,000 members
   * would otherwise hold 100,000 maps of arrays at once).
   */
  private initialValues(): Map<string, Float32Array[]> {
    const { ensemble } = this.spec;
    const out = new Map<string, Float32Array[]>();
    for (const p of ensemble.params) {
      if (p.layout === 'separate') out.set(p.name, []);
      else if (p.layout !== 'shared') out.set(p.name, [new Float32Array(fusedShape(p.layout, p.shape, this.n).reduce((a, b) => a * b, 1))]);
    }
    this.memberIds.forEach((id, m) => {
      const own = this.spec.initial(id);
      for (const p of ensemble.params) {
        const values = own.get(p.name)!;
        // a shared layer's parameters: the first member's
        if (p.layout === 'shared') {
          if (m === 0) out.set(p.name, [values]);
        } else if (p.layout === 'separate') out.get(p.name)!.push(values);
        else placeMember(p.layout, p.shape, this.n, out.get(p.name)![0], m, values);
      }
    });
    return out;
  }

  private moduleView(): ModulePopulation {
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const self = this;
    const params: Record<string, Variable> = {};
    const slots: Record<string, Variable> = {};
    for (const p of this.ir.params) {
      const vars = this.variables.get(p.name)!;
      const keys = p.layout === 'separate' ? vars.map((_, m) => `${p.name}#${m}`) : [p.name];
      keys.forEach((key, i) => {
        params[key] = vars[i];
        for (const [slotName, v] of this.state.tensors.get(key) ?? []) slots[`${key}:${slotName}`] = v;
      });
    }
    return {
      tf: this.tf,
      memberIds: this.memberIds,
      seed: this.spec.seed,
      get step() {
        return self.stepsTaken;
      },
      set step(value: number) {
        self.stepsTaken = value;
      },
      params,
      masks: Object.fromEntries(this.masks),
      slots,
      state: this.state,
      hyper: (key) => this.hyper(key),
    };
  }

  /**
   * A new population whose member i is this one's member at positions[i] (weights, optimizer state,
   * Adam's beta powers), named ids[i]. Compaction passes the positions that stay; PBT passes, for each
   * member, the one it copies. A shared layer's parameters and slots belong to no member: they are kept
   * as they are. This population is left as it was; dispose it when done.
   */
  gather(positions: number[], ids: number[] = positions.map((p) => this.memberIds[p])): Population {
    const { tf } = this;
    const k = positions.length;
    const params = new Map<string, Tensor[]>();
    const slots = new Map<string, Map<string, Tensor>>();
    const take = (p: WideParam, vars: Variable[]): Tensor[] => {
      if (p.layout === 'shared') return [tf.clone(vars[0])];
      if (p.layout === 'separate') return positions.map((i) => tf.clone(vars[i]));
      const g = gatherMembers(tf, vars[0], p.layout, p.shape, this.n, positions);
      if (p.layout !== 'blockdiag') return [g];
      // a gathered block-diagonal tensor carries stray off-diagonal blocks: mask them away
      const masked = tf.mul(g, tf.tensor(blockMask(p.shape, k), g.shape));
      return [masked];
    };
    tf.tidy(() => {
      for (const p of this.ir.params) {
        params.set(p.name, take(p, this.variables.get(p.name)!).map((t) => tf.keep(t)));
        if (!p.trainable) continue;
        for (const slotName of this.slotNames()) {
          const gathered = take(p, this.slotVariables(p, slotName)).map((t) => tf.keep(t));
          const keys = p.layout === 'separate' ? gathered.map((_, m) => `${p.name}#${m}`) : [p.name];
          keys.forEach((key, i) => {
            if (!slots.has(key)) slots.set(key, new Map());
            slots.get(key)!.set(slotName, gathered[i]);
          });
        }
      }
    });
    const next = new Population(
      { ...this.spec, memberIds: ids, ensemble: { ...this.ir, members: k }, plan: this.plan },
      {
        params,
        slots,
        accBeta1: positions.map((i) => this.state.accBeta1[i]),
        accBeta2: positions.map((i) => this.state.accBeta2[i]),
        sharedAccBeta: [this.state.sharedAccBeta1, this.state.sharedAccBeta2],
        step: this.stepsTaken,
      },
    );
    for (const ts of params.values()) tf.dispose(ts);
    for (const m of slots.values()) tf.dispose([...m.values()]);
    return next;
  }

  /** Per-member values of a hyperparameter, in population order; `lr` as the next step applies it. */
  hyper(key: string): number[] {
    const values = this.memberIds.map((id) => this.spec.hyper(key, id));
    const factor = this.spec.lrFactor;
    return key === 'lr' && factor ? values.map((v, m) => v * factor(this.memberIds[m], this.stepsTaken)) : values;
  }

  /** Forget cached hyperparameter tensors (after PBT changes a value). */
  hyperChanged(): void {
    this.fused?.hyperChanged();
    this.evaluator?.hyperChanged();
    this.gpuStep?.hyperChanged();
    this.gpuEvaluator?.hyperChanged();
    for (const t of this.hyperCache.values()) t.dispose();
    this.hyperCache.clear();
    for (const t of this.sharedCache.values()) t?.dispose();
    this.sharedCache.clear();
  }

  private slot(p: WideParam, variable: Variable, member?: number): Slot {
    const { tf } = this;
    const last = p.shape[p.shape.length - 1];
    const key = member === undefined ? p.name : `${p.name}#${member}`;
    return {
      key,
      variable,
      ...(p.layout === 'shared' ? { shared: true } : {}),
      hyper: (values) => {
        if (member !== undefined) return tf.scalar(values[member]);
        // only for a shared slot's per-member uses, which the optimizer never makes (it reads SharedSlots)
        if (p.layout === 'shared') throw new Error(`internal error: per-member values for the shared parameter ${p.name}`);
        if (p.layout === 'stacked') return tf.tensor(values, [this.n, ...p.shape.map(() => 1)]);
        return blockVector(tf, values, last);
      },
      memberNorm: (g) => {
        if (member !== undefined || p.layout === 'shared') return tf.norm(g);
        if (p.layout === 'stacked') return tf.sqrt(tf.sum(tf.square(g), p.shape.map((_, i) => i + 1), true));
        // columns and blockdiag: the members are blocks of the last axis (off-diagonal gradients are zero)
        const byMember = tf.reshape(tf.square(g), [-1, this.n, last]);
        const norms = tf.sqrt(tf.sum(byMember, [0, 2]));
        return tf.reshape(tf.tile(tf.reshape(norms, [this.n, 1]), [1, last]), [-1]);
      },
    };
  }

  /** A hyperparameter (or a derived key, `1-beta1`) as a cached scalar, or undefined where the members' values differ. */
  private cachedShared(key: string): Tensor | undefined {
    if (!this.sharedCache.has(key)) {
      const t = sharedValue(this.tf, hyperValues((k) => this.hyper(k), key));
      this.sharedCache.set(key, t && this.tf.keep(t));
    }
    return this.sharedCache.get(key);
  }

  /**
   * A scheduled learning rate changes every step: forget the cached tensors made from it (`lr`, `-lr`), and
   * only those. Each member's rate is its own number, computed on the host; the tensors only carry them.
   */
  private lrChanged(): void {
    const fromLr = (key: string) => key.replace(/^(1-|-)/, '') === 'lr';
    for (const [id, t] of this.hyperCache) {
      if (!fromLr(id.slice(id.lastIndexOf('|') + 1))) continue;
      t.dispose();
      this.hyperCache.delete(id);
    }
    for (const [key, t] of this.sharedCache) {
      if (!fromLr(key)) continue;
      t?.dispose();
      this.sharedCache.delete(key);
    }
  }

  /** The file's hyperparameters for the shared slots, as values and cached scalars. */
  private sharedSlots(): SharedSlots | undefined {
    const base = this.spec.base;
    if (!base) return undefined;
    return { value: base, tensor: (key) => this.cached(`shared|${key}`, () => this.tf.scalar(hyperValues((k) => [base(k)], key)[0])) };
  }

  /** Cached hyperparameter tensors, for values that only change when hyperChanged() is called (and lr, per step, under a schedule). */
  private cached(id: string, make: () => Tensor): Tensor {
    let t = this.hyperCache.get(id);
    if (!t) {
      t = this.tf.keep(make());
      this.hyperCache.set(id, t);
    }
    return t;
  }

  /**
   * The fused forward pass. x: [B, ...input], shared by all members (or [N, B, ...input], each member's
   * own, when the ensemble IR's input is not shared). Returns member-first outputs
   * [N, B, ...output]. In training, batchnorm's new running statistics are pushed to `updates`; `rowWeights`
   * [N, B] (1 real, 0 padding) keeps padding rows out of its batch statistics, on these ops (a module's forward does not take them).
   * A compiled module's forward (spec.forward), traced from these same ops by netc compile, runs instead when given.
   */
  forward(x: Tensor, training: boolean, updates: [string, Tensor][] = [], rowWeights?: Tensor): Tensor {
    if (this.spec.forward && !rowWeights) return this.spec.forward(this.module, x, { training, updates });
    const pass = this.pass(training, updates, rowWeights);
    const values: Value[] = [pass.input(x)];
    for (const op of this.ir.ops.slice(1)) values[op.id] = pass.op(op.id, op.inputs.map((i) => values[i]));
    return pass.output(values[this.ir.model.output]);
  }

  /** The ops of one forward pass, to be called in order: what forward() runs, and what netc compile traces. */
  pass(training: boolean, updates: [string, Tensor][] = [], rowWeights?: Tensor): ForwardPass {
    const { tf, ir } = this;
    const loop = ir.lowering === 'loop';
    // each member's own row weights under the loop lowering, [B] each
    const memberWeights = loop && rowWeights ? tf.unstack(rowWeights) : undefined;
    return {
      input: (x) => (ir.ops[0].shared ? (loop ? this.memberIds.map(() => x) : { t: x, shared: true, data: true }) : this.ownInputs(x)),
      op: (id, inputs) => {
        const op = ir.ops[id];
        const kind = layerKind(op.op)!;
        const base = { tf, lowering: ir.lowering, training, attrs: op.attrs, inputShapes: op.inputs.map((i) => ir.ops[i].shape), outShape: op.shape, ...(rowWeights ? { rowWeights } : {}) };
        const short = (name: string) => name.slice(op.name.length + 1);
        // a shared layer's parameters are one variable, which every member reads
        const own = (name: string, m: number) => (this.sharedParams.has(name) ? name : `${name}#${m}`);
        if (loop) {
          return this.memberIds.map((id, m) => {
            const params: Params = {};
            for (const name of op.params) params[short(name)] = this.module.params[own(name, m)];
            const ctx: ForwardContext = {
              ...base,
              members: 1,
              hyper: (arg) => [this.spec.hyper(`${op.name}.${arg}`, id)],
              draws: (shape) => memberDraws(tf, this.module, op.name, shape, [m]),
              update: (param, value) => updates.push([own(`${op.name}/${param}`, m), value]),
              ...(memberWeights ? { rowWeights: memberWeights[m] } : {}),
            };
            return kind.forward.single(ctx, inputs.map((v) => (v as Tensor[])[m]), params);
          });
        }
        const params: Params = {};
        for (const name of op.params) {
          const v = this.variables.get(name)![0];
          const mask = this.masks.get(name);
          params[short(name)] = mask ? tf.mul(v, mask) : v;
        }
        const ctx: ForwardContext = {
          ...base,
          members: this.n,
          hyper: (arg) => this.hyper(`${op.name}.${arg}`),
          draws: (shape) => memberDraws(tf, this.module, op.name, shape),
          update: (param, value) => updates.push([`${op.name}/${param}`, value]),
        };
        const sharedWeights = op.params.some((name) => this.sharedParams.has(name));
        const rule = sharedWeights ? kind.forward.shared! : kind.forward[ir.lowering as 'grouped' | 'blockdiag'];
        const act = rule(ctx, inputs as Act[], params);
        // the ensemble IR decides what is shared; a layer that kept a value shared (dropout outside
        // training) widens it here, so the next layer's parameters always find the layout they expect
        if (act.shared && !op.shared) return { t: ir.lowering === 'grouped' ? groupedMembers(ctx, act) : blockMembers(ctx, act), shared: false };
        // a shared value with no parameter upstream is data: the next layer need not pass a gradient to it
        return act.shared ? { ...act, data: !this.trained.has(id) } : act;
      },
      output: (v) => {
        if (loop) return tf.stack(v as Tensor[]);
        const a = v as Act;
        if (a.shared) return tf.broadcastTo(a.t, [this.n, ...a.t.shape]);
        return ir.lowering === 'grouped' ? a.t : blocksToMembers(tf, a.t, this.n);
      },
    };
  }

  /**
   * Every member's own input, x [N, B, ...] (members trained on their own examples), in the lowering's
   * layout: as it is (grouped), folded into the last axis (blockdiag), one tensor per member (loop); or
   * one batch [B, ...] for all of them, copied to each. It is data: the first layer passes no gradient to it.
   */
  private ownInputs(x: Tensor): Value {
    const { tf, ir } = this;
    // one batch for every member (netc predict and eval, extraction checks): each member reads a copy
    if (x.rank === ir.ops[0].shape.length + 1) {
      if (ir.lowering === 'loop') return this.memberIds.map(() => x);
      return { t: ir.lowering === 'grouped' ? tf.broadcastTo(x, [this.n, ...x.shape]) : tf.tile(x, [...x.shape.slice(0, -1).map(() => 1), this.n]), shared: false, data: true };
    }
    if (x.shape[0] !== this.n) throw new Error(`internal error: ${this.n} members' inputs expected, got ${x.shape[0]}`);
    if (ir.lowering === 'loop') return tf.unstack(x);
    return { t: ir.lowering === 'grouped' ? x : membersToBlocks(tf, x), shared: false, data: true };
  }

  /** Readies the training step for batches up to `batch` with these metrics (the generated step's module), before the first step. */
  prepareStep(batch: number, names: readonly string[]): void {
    this.fused?.prepare(batch, names);
    this.gpuStep?.prepare(batch, names);
  }

  /** Whether step() takes a batch from the host (`host`, `ahead`) here: the generated step, which copies it straight in. */
  get hostSteps(): boolean {
    return this.fused !== undefined;
  }

  /**
   * Why step() cannot take steps ahead (`ahead`) here (undefined where it can): it needs the generated step,
   * and one that can run several steps to a call (FusedStep.stepsUncovered).
   */
  get hostStepsUncovered(): string | undefined {
    return this.fused ? this.fused.stepsUncovered() : 'the op path';
  }

  /**
   * One training step, or with `ahead` up to k of them, on a batch that says where it is held:
   * - `tensors`: x, y on the device; returns the members' losses [N] (the caller disposes it), and hands
   *   each named metric [N] to `metrics.take` (the caller disposes them);
   * - `host`: arrays every member shares (hostSteps), copied into the generated step; returns arrays;
   * - `ahead`: k such batches in one call of the generated module (hostStepsUncovered undefined).
   */
  step(batch: TensorBatch): Tensor;
  step(batch: HostBatchStep): HostStepValues;
  step(batch: StepsAhead): { done: number; values: HostStepValues[] };
  step(batch: StepBatch): Tensor | HostStepValues | { done: number; values: HostStepValues[] } {
    switch (batch.kind) {
      case 'host':
        return this.hostStep(batch.x, batch.y, batch.size, batch.names);
      case 'ahead':
        return this.stepsAhead(batch.batches, batch.ends, batch.names);
      default:
        return this.tensorStep(batch.x, batch.y, batch.metrics, batch.rows);
    }
  }

  /**
   * One training step on a batch every member shares, held on the host (x [B, ...input], y [B, width],
   * row-major): the generated step copies it in and hands back the members' losses [N] and each named
   * metric [N] as arrays. What tensorStep() computes, without a tensor made or read.
   */
  private hostStep(x: Float32Array, y: Float32Array, size: number, names: readonly string[]): HostStepValues {
    const values = this.fused!.runHost(x, y, size, names);
    this.stepsTaken++;
    return values;
  }

  /**
   * Up to batches.length training steps, each on a batch every member shares, in one call of the generated
   * module: what as many hostStep() calls compute, up to and including the first step whose losses
   * (or, where `ends` says a step ends an interval, weights) are not finite. How many ran, and their values.
   */
  private stepsAhead(batches: HostBatch[], ends: readonly boolean[], names: readonly string[]): { done: number; values: HostStepValues[] } {
    const start = this.stepsTaken;
    const r = this.fused!.runHostSteps(batches, ends, names, () => this.stepsTaken++);
    this.stepsTaken = start + r.done;
    return r;
  }

  /**
   * One training step on a batch of tensors; returns the members' losses [N]. `rows` (MemberBatch.rows):
   * each member's real rows, the first of its B, where an epoch's last batch may be padded; the rest weigh 0.
   */
  private tensorStep(x: Tensor, y: Tensor, metrics?: StepMetrics, rows?: Int32Array): Tensor {
    // the WGSL step needs its scratch in one binding: else the op path's step
    const generated = this.fused ?? (!rows && this.gpuStep?.runs(x.shape[0] as number, metrics?.names ?? []) ? this.gpuStep : undefined);
    return generated ? this.generatedStep(generated, x, y, metrics, rows) : this.opsStep(x, y, metrics, rows);
  }

  /** The step on the generated code (wasm or WGSL): the members' losses [N], the metrics handed to `metrics`. */
  private generatedStep(generated: FusedStep | GpuFusedStep, x: Tensor, y: Tensor, metrics?: StepMetrics, rows?: Int32Array): Tensor {
    const result = generated instanceof FusedStep ? generated.run(x, y, metrics?.names ?? [], rows) : generated.run(x, y, metrics?.names ?? []);
    if (metrics?.names.length) metrics.take(result.metrics);
    this.stepsTaken++;
    return result.losses;
  }

  /** The step on TF.js ops: the population's own (or a compiled module's). */
  private opsStep(x: Tensor, y: Tensor, metrics?: StepMetrics, rows?: Int32Array): Tensor {
    // a padded batch (rows) runs on the population's own ops, which weigh the rows; a compiled module's step does not
    if (this.spec.step && !rows) {
      const result = this.spec.step(this.module, x, y, metrics?.names ?? []);
      if (metrics?.names.length) metrics.take(result.metrics);
      return result.losses;
    }
    const { tf } = this;
    // rows: each member's real rows, the first of its B; the others weigh 0, so that a member's loss, metrics,
    // gradient and batchnorm's batch statistics are those of its real rows alone
    const size = x.shape[1] as number;
    const weights = rows && tf.tensor(Float32Array.from({ length: this.n * size }, (_, i) => (i % size < rows[Math.floor(i / size)] ? 1 : 0)), [this.n, size]);
    const updates: [string, Tensor][] = [];
    let losses: Tensor | undefined;
    const trainable = this.slots.map((s) => s.variable);
    const { name: loss, args } = this.spec.loss;
    const { value, grads } = tf.variableGrads(() => {
      const out = this.forward(x, true, updates, weights);
      losses = tf.keep(memberLosses(tf, loss, args, out, y, weights));
      if (metrics?.names.length) metrics.take(Object.fromEntries(metrics.names.map((name) => [name, tf.keep(memberMetric(tf, name, loss, out, y, weights))])));
      for (const [, t] of updates) tf.keep(t);
      return tf.sum(losses);
    }, trainable);
    value.dispose();
    tf.tidy(() => {
      this.optimize(new Map(this.slots.map((s) => [s.key, grads[s.variable.name]])));
      applyUpdates(this.module, updates);
    });
    for (const g of Object.values(grads)) g.dispose();
    for (const [, t] of updates) t.dispose();
    weights?.dispose();
    this.stepsTaken++;
    return losses!;
  }

  /** One optimizer step on every slot from its gradient, by slot key (call inside tf.tidy). */
  optimize(grads: Map<string, Tensor>): void {
    if (this.spec.lrFactor) this.lrChanged();
    applyGradients(
      this.tf,
      this.spec.optimizer,
      this.slots,
      grads,
      this.state,
      (key) => this.hyper(key),
      (slot, key) => this.cached(`${slot.key}|${key}`, () => slot.hyper(hyperValues((k) => this.hyper(k), key))),
      (key) => this.cachedShared(key),
      this.sharedSlots(),
    );
  }

  /** Members' loss and each named metric (accuracy, mse, mae) on a batch, without training (dropout off, running statistics). */
  evaluate(x: Tensor, y: Tensor, metrics: readonly string[] = []): { loss: Tensor } & Record<string, Tensor> {
    const evaluator = this.evaluator ?? (this.gpuEvaluator?.runs(x.shape[0] as number, metrics) ? this.gpuEvaluator : undefined);
    if (evaluator) {
      const r = evaluator.run(x, y, metrics);
      return { loss: r.losses, ...r.metrics };
    }
    const { tf } = this;
    return tf.tidy(() => {
      const out = this.forward(x, false);
      const values: Record<string, Tensor> = { loss: memberLosses(tf, this.spec.loss.name, this.spec.loss.args, out, y) };
      for (const name of metrics) values[name] = memberMetric(tf, name, this.spec.loss.name, out, y);
      return values as { loss: Tensor } & Record<string, Tensor>;
    });
  }

  /** Member m's (population position) parameters, sliced out of the fused tensors (a shared layer's: all of it). */
  async memberWeights(m: number): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (const p of this.ir.params) {
      const vars = this.variables.get(p.name)!;
      // under `separate`, member m's own tensor; otherwise the fused one
      out.set(p.name, unfuse(p.layout, p.shape, this.n, (await vars[p.layout === 'separate' ? m : 0].data()) as Float32Array, m));
    }
    return out;
  }

  /**
   * The positions of the members with a NaN or infinite parameter of their own (sharedNonFinite() looks
   * at the shared layers'), as one reduction per parameter on the backend and one read of N flags: what the divergence
   * guard checks at an interval's end, since a loss that clips its predictions can stay finite over
   * non-finite weights.
   */
  async nonFiniteMembers(): Promise<number[]> {
    const { tf, n } = this;
    if (readsHostMemory(tf)) return this.nonFiniteOnHost();
    const flags = tf.tidy(() => {
      let acc = tf.zeros([n]);
      for (const p of this.ir.params) if (p.layout !== 'shared') acc = tf.add(acc, this.poisonPerMember(p, this.variables.get(p.name)!));
      return acc;
    });
    // read asynchronously: webgpu cannot read synchronously in Node
    const values = await flags.data();
    flags.dispose();
    const out: number[] = [];
    (values as Float32Array).forEach((v, m) => Number.isNaN(v) && out.push(m));
    return out;
  }

  /**
   * nonFiniteMembers where a read is a copy of host memory (cpu, wasm): each parameter read and scanned
   * member by member, with no kernel launched. A step's interval can be one step (an epoch of one batch),
   * and a reduction per parameter on the backend there costs more than the generated step itself.
   */
  private nonFiniteOnHost(): number[] {
    const scanned = this.fused?.nonFiniteMembers();
    if (scanned) return scanned;
    const { n } = this;
    const out = new Set<number>();
    for (const p of this.ir.params) {
      if (p.layout === 'shared') continue;
      const size = p.shape.reduce((a, b) => a * b, 1);
      const vars = this.variables.get(p.name)!;
      if (p.layout === 'separate') vars.forEach((v, m) => nonFiniteRows(v.dataSync() as Float32Array, size).length && out.add(m));
      else {
        const data = vars[0].dataSync() as Float32Array;
        // the members are located only when a value is not finite: the common case is one pass, no copy
        if (nonFiniteRows(data, data.length).length) for (const m of nonFiniteRows(stackMembers(p.layout, p.shape, n, data), size)) out.add(m);
      }
    }
    return [...out].sort((a, b) => a - b);
  }

  /** Whether a shared layer's parameter holds a NaN or an infinity (every member reads it). */
  async sharedNonFinite(): Promise<boolean> {
    const shared = this.ir.params.filter((p) => p.layout === 'shared');
    if (!shared.length) return false;
    const { tf } = this;
    const flag = tf.tidy(() => tf.addN(shared.map((p) => this.poisonPerMember(p, this.variables.get(p.name)!))));
    const value = (await flag.data())[0];
    flag.dispose();
    return Number.isNaN(value);
  }

  /** sum(0 * value) of each member's copy of a parameter, [N] (a scalar for a shared one): 0, or NaN where one is not finite. */
  private poisonPerMember(p: WideParam, vars: Variable[]): Tensor {
    const { tf, n } = this;
    const zero = (t: Tensor) => tf.mul(t, 0);
    const r = p.shape.length;
    switch (p.layout) {
      case 'stacked':
        return tf.sum(tf.reshape(zero(vars[0]), [n, -1]), 1);
      case 'columns':
        return tf.sum(tf.reshape(zero(vars[0]), [-1, n, p.shape[r - 1]]), [0, 2]);
      case 'blockdiag':
        return tf.sum(tf.reshape(zero(vars[0]), [-1, n, p.shape[r - 2], n, p.shape[r - 1]]), [0, 2, 3, 4]);
      case 'separate':
        return tf.stack(vars.map((v) => tf.sum(zero(v))));
      case 'shared':
        return tf.sum(zero(vars[0]));
    }
  }

  /**
   * The population's whole state in the canonical, lowering-free form: each parameter (and each optimizer
   * slot of it, as `name:m`, `name:v`, ...) as [N, ...shape], member after member; a shared layer's as
   * [...shape], once. The arrays are read, never written: one may be the backend's own copy of a tensor.
   */
  async exportState(): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (const name of this.stateNames()) out.set(name, await this.exportTensor(name));
    return out;
  }

  /** The names exportState() gives, in its order: each parameter, then its optimizer slots (`NAME:SLOT`). */
  stateNames(): string[] {
    return this.ir.params.flatMap((p) => [p.name, ...(p.trainable ? this.slotNames().map((slot) => `${p.name}:${slot}`) : [])]);
  }

  /** One of exportState()'s tensors by name, on its own: a writer can take them one at a time. */
  async exportTensor(name: string): Promise<Float32Array> {
    const { p, vars } = this.stateTensor(name);
    if (p.layout === 'shared') return (await vars[0].data()) as Float32Array;
    if (p.layout !== 'separate') return stackMembers(p.layout, p.shape, this.n, (await vars[0].data()) as Float32Array);
    const size = p.shape.reduce((a, b) => a * b, 1);
    const all = new Float32Array(size * this.n);
    for (let m = 0; m < this.n; m++) all.set((await vars[m].data()) as Float32Array, m * size);
    return all;
  }

  /**
   * exportTensor(name)'s values handed to `piece` in order, in pieces: where the backend's memory is the
   * host's, read where they lie (valid only until the next allocation: `piece` uses each at once), and a
   * layout that must be reordered reordered a few thousand members at a time into one small scratch array
   * (100,000 members' checkpoint made 150 MB of whole copies before the collector ran, then a 16 MB scratch).
   */
  async exportPieces(name: string, piece: (values: Float32Array) => void): Promise<void> {
    const { p, vars } = this.stateTensor(name);
    const heap = p.layout !== 'separate' ? this.heapView(vars[0]) : undefined;
    if (!heap) return piece(await this.exportTensor(name));
    if (p.layout === 'shared' || stacksInPlace(p.layout, p.shape)) return piece(heap);
    const own = p.shape.reduce((a, b) => a * b, 1);
    const step = Math.max(1, Math.floor(PIECE_FLOATS / own));
    const scratch = new Float32Array(Math.min(this.n, step) * own);
    for (let from = 0; from < this.n; from += step) {
      const to = Math.min(this.n, from + step);
      piece(stackMemberRange(p.layout, p.shape, this.n, heap, from, to, scratch.subarray(0, (to - from) * own)));
    }
  }

  private stateTensor(name: string): { p: WideParam; vars: Variable[] } {
    const colon = name.indexOf(':');
    const p = this.ir.params.find((q) => q.name === (colon < 0 ? name : name.slice(0, colon)))!;
    return { p, vars: colon < 0 ? this.variables.get(p.name)! : this.slotVariables(p, name.slice(colon + 1)) };
  }

  /** A variable's values where they lie in the wasm backend's memory (no copy), or undefined elsewhere. */
  private heapView(v: Variable): Float32Array | undefined {
    return wasmHeap(this.tf, [v])?.typedArrayFromHeap({ dataId: v.dataId, shape: [v.size], dtype: 'float32' });
  }

  /** Restores what exportState() wrote (for the same model and member count). */
  importState(state: Map<string, Float32Array>): void {
    const { tf } = this;
    const assign = (p: WideParam, vars: Variable[], all: Float32Array) => {
      const size = p.shape.reduce((a, b) => a * b, 1);
      const own = Array.from({ length: this.n }, (_, m) => all.subarray(m * size, (m + 1) * size));
      tf.tidy(() => {
        if (p.layout === 'shared') vars[0].assign(tf.tensor(all, p.shape));
        else if (p.layout === 'separate') vars.forEach((v, m) => v.assign(tf.tensor(own[m], p.shape)));
        else vars[0].assign(tf.tensor(fuse(p.layout, p.shape, own), vars[0].shape));
      });
    };
    for (const p of this.ir.params) {
      assign(p, this.variables.get(p.name)!, state.get(p.name)!);
      if (!p.trainable) continue;
      for (const slotName of this.slotNames()) assign(p, this.slotVariables(p, slotName), state.get(`${p.name}:${slotName}`)!);
    }
  }

  private slotNames(): string[] {
    return [...(this.state.tensors.values().next().value?.keys() ?? [])];
  }

  private slotVariables(p: WideParam, slotName: string): Variable[] {
    const keys = p.layout === 'separate' ? this.memberIds.map((_, m) => `${p.name}#${m}`) : [p.name];
    return keys.map((k) => this.state.tensors.get(k)!.get(slotName)!);
  }

  dispose(): void {
    this.fused?.dispose();
    this.gpuStep?.dispose();
    this.gpuEvaluator?.dispose();
    this.evaluator?.dispose();
    this.hyperChanged();
    for (const vs of this.variables.values()) vs.forEach((v) => v.dispose());
    for (const t of this.masks.values()) t.dispose();
    for (const s of this.state.tensors.values()) for (const v of s.values()) v.dispose();
  }
}

/** The ops whose value depends on a parameter, directly or through their inputs: a gradient must reach them. */
function dependsOnParams(e: EnsembleIR): Set<number> {
  const out = new Set<number>();
  for (const op of e.ops) if (op.params.length || op.inputs.some((i) => out.has(i))) out.add(op.id);
  return out;
}

/** At most this many floats in one piece of exportPieces (1 MB). */
const PIECE_FLOATS = 1 << 18;
