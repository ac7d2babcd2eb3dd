// Several steps to a call (FusedStep.runHostSteps) on worker threads: the records the call wrote in TF.js's
// memory, the regions they point into (the members' parameters and optimizer slots, the arena's
// hyperparameter rows, the batches and outputs), copied into the pool's shared memory, each address in the
// records moved with its region; each thread runs the ranged steps() on its own members with a scratch
// arena of its own, and the parameters, slots and the steps' outputs are copied back. TF.js's memory is
// not touched until then: where the threads stopped after different steps (a loss not finite in one range
// only), nothing is copied back and the caller runs the call again on one thread, from the same state.
// The parameters and slots stay in the shared memory after a call (Residence): the next call of the same
// population copies in only what was written since, or moved.
import type { TableEntry } from '../step/generate.js';
import type { StepsArgs, ThreadPool } from './threads.js';

/**
 * A part of TF.js's memory the records point into: `back`, copied back after the call (what the step
 * writes); `into` false, not copied in (what the step only writes, the outputs); `token`, the tensor's
 * data id where the region may stay resident in the shared memory between calls (a parameter, a slot).
 */
export interface Region {
  at: number;
  bytes: number;
  back: boolean;
  into?: boolean;
  token?: object;
}

/**
 * What the pool's shared memory holds of one population's parameters and slots as TF.js's memory holds
 * them too: the regions its last threaded call copied back, while that call was the pool's last and
 * nothing wrote them since. A region is held where the same tensor data lies at the same address of
 * TF.js's memory and at the same place in the shared memory; a new tensor (an assign, a gathered
 * population) has another data id, and a step on this thread calls moved().
 */
export class Residence {
  private held?: { pool: ThreadPool; regions: Map<object, { at: number; bytes: number; to: number }> };

  /** TF.js's memory of the population was written here, not through the pool: nothing is held. */
  moved(): void {
    this.held = undefined;
  }

  /** Whether `region`, to be placed at `to`, lies in the pool's shared memory already. */
  holds(pool: ThreadPool, region: Region, to: number): boolean {
    if (!region.token || this.held?.pool !== pool || pool.holder !== this) return false;
    const r = this.held.regions.get(region.token);
    return r !== undefined && r.at === region.at && r.bytes === region.bytes && r.to === to;
  }

  /** After a call that copied its regions back: the pool holds them. */
  keep(pool: ThreadPool, placed: { region: Region; to: number }[]): void {
    const regions = new Map<object, { at: number; bytes: number; to: number }>();
    for (const { region, to } of placed) if (region.token && region.back) regions.set(region.token, { at: region.at, bytes: region.bytes, to });
    this.held = { pool, regions };
    pool.holder = this;
  }
}

export interface ThreadedCall {
  pool: ThreadPool;
  /** the step's ranged variant, compiled for a shared memory */
  module: WebAssembly.Module;
  /** TF.js's memory */
  heap: ArrayBuffer;
  table: readonly TableEntry[];
  /** the records in TF.js's memory: count of them, recordBytes apart, each the table and two words more */
  records: number;
  count: number;
  recordBytes: number;
  n: number;
  /** where steps() writes the divergence guard's flags [N] */
  flags: number;
  regions: Region[];
  /** every step's outputs (losses, then each metric, [N] each), one block from `at`: copied back for the steps that ran */
  outputs: { at: number; bytesPerStep: number };
  /** what the pool holds of this population between calls */
  residence: Residence;
  /** the scratch space of one thread */
  scratchBytes: number;
  threads: number;
}

/** The members [first, end) of thread t of `threads`: contiguous ranges, as even as N allows. */
export function memberRange(n: number, threads: number, t: number): [number, number] {
  return [Math.floor((t * n) / threads), Math.floor(((t + 1) * n) / threads)];
}

const aligned = (bytes: number) => Math.ceil(bytes / 64) * 64;

/** Runs the call on `threads` threads; how many steps ran, or undefined where the threads disagree (nothing copied back). */
export function runThreaded(call: ThreadedCall): number | undefined {
  const { pool, count, recordBytes, n, threads } = call;
  // the shared memory: each region, then each thread's records and scratch
  const placed: { region: Region; to: number }[] = [];
  let end = 64;
  for (const region of call.regions) {
    placed.push({ region, to: end });
    end = aligned(end + region.bytes);
  }
  const recordsAt: number[] = [];
  const scratchAt: number[] = [];
  for (let t = 0; t < threads; t++) {
    recordsAt.push(end);
    scratchAt.push(aligned(end + count * recordBytes));
    end = aligned(scratchAt[t] + call.scratchBytes);
  }
  pool.reserve(end);
  const shared = new Int32Array(pool.memory.buffer);
  const heap = new Int32Array(call.heap);
  for (const { region, to } of placed) {
    if (region.into !== false && !call.residence.holds(pool, region, to)) shared.set(heap.subarray(region.at / 4, (region.at + region.bytes) / 4), to / 4);
  }
  const moved = (address: number): number => {
    for (const { region, to } of placed) if (address >= region.at && address < region.at + region.bytes) return to + (address - region.at);
    throw new Error(`internal error: the threaded step's record points outside the regions copied (${address})`);
  };
  for (let t = 0; t < threads; t++) writeRecords(call, heap, shared, recordsAt[t], scratchAt[t], placed);
  const jobs: StepsArgs[] = [];
  for (let t = 0; t < threads; t++) jobs.push([recordsAt[t], count, n, recordBytes, moved(call.flags), ...memberRange(n, threads, t)]);
  const done = pool.run(call.module, jobs);
  if (done.some((d) => d !== done[0])) {
    // the threads wrote the shared memory's parameters past where TF.js's memory stays
    call.residence.moved();
    return undefined;
  }
  for (const { region, to } of placed) if (region.back) heap.set(shared.subarray(to / 4, (to + region.bytes) / 4), region.at / 4);
  const { at, bytesPerStep } = call.outputs;
  heap.set(shared.subarray(moved(at) / 4, (moved(at) + done[0] * bytesPerStep) / 4), at / 4);
  call.residence.keep(pool, placed);
  return done[0];
}

/**
 * One thread's copy of the records: every address moved with its region, the arena its own scratch. Each
 * entry's region is looked up once and kept while the entry's addresses stay in it (a parameter's always, a
 * batch's while the steps' data lie in one buffer): N=100's 256 steps a call spent 1.4 ms in a search.
 */
function writeRecords(call: ThreadedCall, heap: Int32Array, shared: Int32Array, at: number, scratch: number, placed: { region: Region; to: number }[]): void {
  const { table, count, recordBytes, records } = call;
  const kept: ({ region: Region; to: number } | undefined)[] = table.map(() => undefined);
  const within = (p: { region: Region } | undefined, v: number) => p !== undefined && v >= p.region.at && v < p.region.at + p.region.bytes;
  for (let j = 0; j < count; j++) {
    const from = (records + j * recordBytes) / 4;
    const to = (at + j * recordBytes) / 4;
    for (let i = 0; i < table.length; i++) {
      const kind = table[i].kind;
      const v = heap[from + i];
      if (kind === 'arena') shared[to + i] = scratch;
      else if (kind === 'xStride' || kind === 'yStride' || (kind === 'rows' && v === 0)) shared[to + i] = v;
      else {
        if (!within(kept[i], v)) kept[i] = placed.find((p) => within(p, v));
        const p = kept[i];
        if (!p) throw new Error(`internal error: the threaded step's record points outside the regions copied (${v})`);
        shared[to + i] = p.to + (v - p.region.at);
      }
    }
    // the batch size and the interval's-end flag
    shared[to + table.length] = heap[from + table.length];
    shared[to + table.length + 1] = heap[from + table.length + 1];
  }
}
