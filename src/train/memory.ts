// How much memory a population needs, estimated before anything is allocated, so that a run too large
// for the machine is refused with the numbers and the `--resident K` that fits, instead of failing deep
// inside TF.js's WebAssembly heap ("memory access out of bounds") or V8's (a fatal error no code can
// catch). Pure arithmetic on the ensemble IR: an estimate of the peak, erring on the large side.
import type { EnsembleIR } from '../ensemble/ensemble-ir.js';
import { optimizerSlots } from '../vocabulary/optimizers.js';

const FLOAT = 4;
/**
 * JavaScript objects per member: its hyperparameters, metrics rows, checkpoint and summary entries
 * (measured: forum.net at 100,000 members peaked at 839 MB resident, of which its tensors are ~400 MB)
 */
export const HEAP_BYTES_PER_MEMBER = 2048;

export interface MemoryEstimate {
  /** on the device (TF.js's backend; its WebAssembly heap on wasm): the members trained at once */
  device: number;
  /** what one more member trained at once adds on the device */
  perResidentMember: number;
  /** what the device needs whatever the members (shared layers, the batch of a shared input) */
  fixedDevice: number;
  /** host memory: every member's state, as a checkpoint copies it, and the JavaScript objects per member */
  host: number;
  /** of `host`, V8's heap (the JavaScript objects) */
  heap: number;
  /** every member's parameters and optimizer slots, once (what one checkpoint writes) */
  state: number;
  /** of perResidentMember, the batch's activations (the rest is the member's parameters and their temporaries) */
  activations: number;
  /** one member's own parameters */
  parameters: number;
}

/**
 * `members` trained, `resident` of them at once (all without --resident), on batches of `batch`: each
 * member's parameters and optimizer slots, its gradients and the update's temporaries, and the batch's
 * activations (forward values, their gradients and temporaries).
 */
export function estimateMemory(e: EnsembleIR, optimizer: string, batch: number, members: number, resident = members): MemoryEstimate {
  const size = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);
  const own = e.params.filter((p) => p.layout !== 'shared').reduce((n, p) => n + size(p.shape), 0);
  const shared = e.params.filter((p) => p.layout === 'shared').reduce((n, p) => n + size(p.shape), 0);
  const slots = (optimizerSlots[optimizer] ?? ['m', 'v']).length;
  const perExample = e.ops.filter((op) => op.op !== 'input').reduce((n, op) => n + (op.shared ? 0 : size(op.shape)), 0);
  const sharedPerExample = e.ops.reduce((n, op) => n + (op.shared ? size(op.shape) : 0), 0);
  // variables and slots, the initial values' copy, the gradient and the update's temporaries
  const perParam = 1 + slots + 3;
  const perResidentMember = FLOAT * (own * perParam + 3 * batch * perExample);
  const fixedDevice = FLOAT * (shared * perParam + 3 * batch * sharedPerExample);
  const n = Math.min(members, resident);
  // the state on the host, where a checkpoint holds it three times (exported, encoded, read back); a host store once more
  const state = FLOAT * members * (own * (1 + slots)) + FLOAT * shared * (1 + slots);
  const heap = HEAP_BYTES_PER_MEMBER * members;
  const activations = FLOAT * 3 * batch * perExample;
  return { device: fixedDevice + n * perResidentMember, perResidentMember, fixedDevice, host: state * (resident < members ? 4 : 3) + heap, heap, state, activations, parameters: own };
}

/** The most members trained at once that fit `deviceBytes` (0 when not even one does). */
export function residentThatFits(estimate: MemoryEstimate, deviceBytes: number): number {
  return Math.max(0, Math.floor((deviceBytes - estimate.fixedDevice) / estimate.perResidentMember));
}
