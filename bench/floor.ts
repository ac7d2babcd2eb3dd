// The physical floor of a training step: the least time the machine needs for the step's arithmetic and
// its memory traffic, from what one step costs ({flops, bytes}) and what the core was measured to do
// (GFLOP/s and GB/s of a SIMD microbenchmark). `npm run bench` prints it as a row of the forum table
// ("physical floor"), next to every implementation's ms per step.
//
// The step's FLOPs and bytes are counted from the generated step's work, and the rates come from a
// microbenchmark written with netc's own WebAssembly emitter (bench/simd-rates.ts).
import { forumCost, simdRates } from './simd-rates.js';

/** What one training step of every member costs. */
export interface StepCost {
  /** floating-point operations (a multiply-add is 2) */
  flops: number;
  /** bytes read and written from and to memory (not cache-resident traffic) */
  bytes: number;
}

/** What one core was measured to sustain. */
export interface MachineRates {
  gflops: number;
  gbps: number;
  /** how they were measured, for the table's note */
  how?: string;
}

/** The floor in ms: the step is at least as long as its arithmetic at `gflops` and its traffic at `gbps`. */
export function floorMs(cost: StepCost, rates: MachineRates): number {
  const computeMs = (cost.flops / (rates.gflops * 1e9)) * 1e3;
  const memoryMs = (cost.bytes / (rates.gbps * 1e9)) * 1e3;
  return Math.max(computeMs, memoryMs);
}

/** The floor and what bounds it, as one line: `0.0123 ms (memory: 1.2 MB at 20 GB/s; compute 0.004 ms at 30 GFLOP/s)`. */
export function describeFloor(cost: StepCost, rates: MachineRates): string {
  const computeMs = (cost.flops / (rates.gflops * 1e9)) * 1e3;
  const memoryMs = (cost.bytes / (rates.gbps * 1e9)) * 1e3;
  const ms = Math.max(computeMs, memoryMs);
  const bound = memoryMs >= computeMs ? `memory: ${(cost.bytes / 1e6).toPrecision(3)} MB at ${rates.gbps} GB/s; compute ${computeMs.toPrecision(3)} ms at ${rates.gflops} GFLOP/s` : `compute: ${(cost.flops / 1e6).toPrecision(3)} MFLOP at ${rates.gflops} GFLOP/s; memory ${memoryMs.toPrecision(3)} ms at ${rates.gbps} GB/s`;
  return `${ms.toPrecision(3)} ms (${bound})`;
}

/** One forum step's cost (2-20-1 MLP, batch 5, Adam) at N members. */
export function forumStepCost(n: number): StepCost | undefined {
  return forumCost(n);
}

/** The core's GFLOP/s and GB/s from a SIMD microbenchmark. */
export async function measureRates(): Promise<MachineRates | undefined> {
  return simdRates();
}

/** Why the floor row is empty (printed with it while forumStepCost or measureRates gives nothing). */
export const floorMissing = 'to come: the step\'s FLOPs and bytes from netc\'s wasm emitter against a SIMD microbenchmark (bench/floor.ts)';
