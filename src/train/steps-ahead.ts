// Steps trained ahead: on the generated step, a run of steps goes to the population in one call
// (Population.step, `ahead`), and the trainer then takes their values one step at a time, as if it had
// trained them one by one. A run never crosses a step where anything else reads or changes the population
// (a schedule, a checkpoint by steps, an evaluation at an epoch's end, the last step), and the call itself
// stops after a step whose losses, or weights at an interval's end, are not finite. Until the trainer has
// taken every queued step, the population is ahead of it: it must not checkpoint, stop or look at the
// weights then (pending says so).
import type { Population } from '../runtime/population.js';
import type { HostBatch, HostStepValues } from '../runtime/fused-step.js';

/** How long one call is to train, in ms: short enough for the progress line and Ctrl-C, long enough to pay for itself. */
const CALL_MS = 20;
/** The first call's steps, before a step's time is known. */
const FIRST_CALL = 8;
/** At most this many member-steps to a call: each step's outputs and hyperparameter rows take a few floats a member. */
const MEMBER_STEPS = 1 << 17;

export interface AheadPlan {
  /** [start, end) of each batch of an epoch */
  ranges: readonly [number, number][];
  steps: number;
  /** the order of an epoch's examples */
  order(epoch: number): Int32Array;
  batch(order: Int32Array, start: number, end: number): HostBatch;
  /** whether the interval ends at this step count because something acts there (a schedule, a checkpoint) */
  boundary(step: number): boolean;
  /** an epoch's end is such a step too (an evaluation there reads the population) */
  epochEndsRun: boolean;
  names: readonly string[];
  /** at most this many steps a call */
  maxPerCall: number;
}

/** Where the trainer stands: the steps taken, the epoch and the batch within it. */
export interface Position {
  step: number;
  epoch: number;
  batch: number;
}

export class StepsAhead {
  private queue: { values: HostStepValues; size: number }[] = [];
  private taken = 0;
  private msPerStep = 0;

  constructor(private readonly plan: AheadPlan) {}

  /** Whether steps trained ahead wait to be taken: the population is ahead of the trainer. */
  get pending(): boolean {
    return this.taken < this.queue.length;
  }

  /** The values of the step at `at`: queued, or from the next run of steps, trained first. */
  next(pop: Population, at: Position): { values: HostStepValues; size: number } {
    if (!this.pending) this.run(pop, at);
    return this.queue[this.taken++];
  }

  private run(pop: Population, at: Position): void {
    const { ranges, names } = this.plan;
    const perEpoch = ranges.length;
    const count = this.count(at, pop.n);
    const batches: HostBatch[] = [];
    const ends: boolean[] = [];
    let order: Int32Array | undefined;
    let orderOf = -1;
    for (let j = 0; j < count; j++) {
      const k = at.batch + j;
      const epoch = at.epoch + Math.floor(k / perEpoch);
      const b = k % perEpoch;
      if (epoch !== orderOf) [order, orderOf] = [this.plan.order(epoch), epoch];
      batches.push(this.plan.batch(order!, ranges[b][0], ranges[b][1]));
      // an interval ends at an epoch's end, and at the run's last step (a boundary or the budget's end)
      ends.push(b === perEpoch - 1 || j === count - 1);
    }
    const t0 = performance.now();
    const r = pop.step({ kind: 'ahead', batches, ends, names });
    this.msPerStep = (performance.now() - t0) / Math.max(1, r.done);
    this.queue = r.values.map((values, j) => ({ values, size: batches[j].size }));
    this.taken = 0;
  }

  /** The steps of the next call from `at`: about CALL_MS of them, up to the next boundary. */
  private count(at: Position, members: number): number {
    const { steps, boundary, epochEndsRun, ranges } = this.plan;
    const maxPerCall = Math.max(1, Math.min(this.plan.maxPerCall, Math.floor(MEMBER_STEPS / members)));
    const most = this.msPerStep > 0 ? Math.max(1, Math.min(maxPerCall, Math.floor(CALL_MS / this.msPerStep))) : Math.min(FIRST_CALL, maxPerCall);
    let j = 0;
    while (j < most && at.step + j < steps) {
      j++;
      if (boundary(at.step + j) || (epochEndsRun && (at.batch + j) % ranges.length === 0)) break;
    }
    return j;
  }
}
