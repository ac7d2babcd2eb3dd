// What memory a run may use, and the refusal of a population that would not fit: checked before the
// population is allocated, since TF.js's WebAssembly heap fails as "memory access out of bounds" and V8's
// heap as a fatal error that no code can catch. NETC_MEMORY_LIMIT_MB sets the budget (tests, a machine
// shared with other work); by default it is the memory available now, within the cgroup's limit.
import { freemem } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import type { EnsembleIR } from '../ensemble/ensemble-ir.js';
import type { DataSize } from '../data/load.js';
import { estimateMemory, residentThatFits, type MemoryEstimate } from '../train/memory.js';
import { plural } from '../util/plural.js';

/** TF.js's WebAssembly heap grows to 4 GiB less one page (wasm32). */
export const WASM_HEAP_BYTES = 4 * 2 ** 30 - 2 ** 16;

export interface MemoryBudget {
  /** host memory the run may use */
  host: number;
  /** where that figure comes from, for the message */
  hostWhy: string;
  /** V8's heap limit */
  heap: number;
}

export function memoryBudget(): MemoryBudget {
  const limit = process.env.NETC_MEMORY_LIMIT_MB;
  if (limit !== undefined && Number(limit) > 0) return { host: Number(limit) * 2 ** 20, hostWhy: 'NETC_MEMORY_LIMIT_MB', heap: getHeapStatistics().heap_size_limit };
  const constrained = process.constrainedMemory?.() ?? 0;
  const available = Math.min(freemem(), constrained > 0 && constrained < Number.MAX_SAFE_INTEGER ? constrained : Infinity);
  return { host: available, hostWhy: 'available on this machine now', heap: getHeapStatistics().heap_size_limit };
}

export interface PopulationPlan {
  ensemble: EnsembleIR;
  optimizer: string;
  batch: number;
  backend: string;
  /** --resident K */
  resident?: number;
  /** trained by worker processes (--workers, --queue): this process holds the state on the host only */
  sharded: boolean;
  /** the training data, where its size is known before it loads (a generated set) */
  data?: DataSize;
}

const gb = (bytes: number) => `${(bytes / 2 ** 30).toFixed(bytes < 2 ** 30 ? 2 : 1)} GB`;

/**
 * Why the population does not fit, in one line (without `netc: `), or undefined when it does: the
 * estimate, the budget it exceeds, and the `--resident K` that fits where waves would.
 */
export function memoryProblem(plan: PopulationPlan, budget = memoryBudget()): string | undefined {
  const { ensemble, backend } = plan;
  const n = ensemble.members;
  const resident = plan.sharded ? 0 : Math.min(n, plan.resident ?? n);
  const e = estimateMemory(ensemble, plan.optimizer, plan.batch, n, resident);
  const members = plural(n, 'member');
  const data = plan.data?.bytes ?? 0;
  // the data set alone, or the larger part of what does not fit: name it, not the members
  if (plan.data && data + e.host > budget.host && data >= e.host) {
    return `the data set (${plan.data.shown}: ${plural(plan.data.examples, 'example')}, ${gb(data)}) does not fit in the ${gb(budget.host)} ${budget.hostWhy}; use fewer examples`;
  }
  if (e.heap > budget.heap) {
    return `${members} need about ${gb(e.heap)} of JavaScript objects (their hyperparameters, metrics and records), more than V8's heap limit of ${gb(budget.heap)}; train fewer members (or raise the limit: node --max-old-space-size=MB)`;
  }
  // on cpu and wasm the device's tensors are in host memory too
  const onHost = backend === 'cpu' || backend === 'wasm';
  const device = plan.sharded ? 0 : e.device;
  const total = e.host + (onHost ? device : 0);
  if (e.host + data > budget.host || (e.host + data + (onHost ? e.fixedDevice + e.perResidentMember : 0) > budget.host)) {
    const need = n === 1 ? `1 member needs about ${gb(total)} of memory (its weights and optimizer state, as a checkpoint copies them)` : `${members} need about ${gb(total)} of memory (their weights and optimizer state, as a checkpoint copies them, and their records)`;
    // a data set of a tenth or more of the members' share is named too
    const withData = plan.data && 10 * data >= e.host ? `, and the data set (${plan.data.shown}) about ${gb(data)}` : '';
    return `${need}${withData}, more than the ${gb(budget.host)} ${budget.hostWhy}; ${hostFix(e, n, budget.host, plan.batch)}`;
  }
  const deviceLimit = Math.min(backend === 'wasm' ? WASM_HEAP_BYTES : Infinity, onHost ? budget.host - e.host - data : Infinity);
  if (device <= deviceLimit) return undefined;
  const k = residentThatFits(e, deviceLimit);
  const what = backend === 'wasm' && deviceLimit === WASM_HEAP_BYTES ? `the wasm backend's ${gb(WASM_HEAP_BYTES)} WebAssembly heap` : `the ${gb(deviceLimit)} left of the ${gb(budget.host)} ${budget.hostWhy}`;
  const fix = k >= 1 ? `--resident ${k} trains them in waves of ${k} that fit` : `not even one member at a time fits; ${deviceFix(e, plan.batch)}`;
  return `training ${resident === n ? members : `${resident} of ${members}`} at once needs about ${gb(device)}, more than ${what}; ${fix}`;
}

/** What to change when the host cannot hold the run: a smaller batch, fewer members, or a smaller model, by what dominates. */
function hostFix(e: MemoryEstimate, n: number, host: number, batch: number): string {
  const member = e.perResidentMember - e.activations + (3 * e.state) / n;
  if (e.activations >= member) return `a batch of ${batch} needs about ${gb(e.activations)} of activations; use a smaller batch`;
  if (n > 1 && member < host) return 'train fewer members';
  return `each member's model has ${e.parameters} parameters (${gb(4 * e.parameters)} of float32 weights before its optimizer state); make the model smaller`;
}

/** What to change when one member does not fit the device: the cause is its batch's activations or its parameters. */
function deviceFix(e: MemoryEstimate, batch: number): string {
  const params = e.perResidentMember - e.activations;
  if (e.activations >= params) return `a batch of ${batch} needs about ${gb(e.activations)} of activations; use a smaller batch`;
  return `each member's model has ${e.parameters} parameters (about ${gb(params)} with their gradients and optimizer state); make the model smaller`;
}
