// `netc train --threads N`: how many threads run the generated step's calls of several steps (runtime/threads.ts).
// The default is one per core the process may use (os.availableParallelism); 1 is the step on the main thread
// alone. A run that cannot split its calls (another engine, shard jobs, shared layers or dropout, one step
// to a call) or whose population is too small to pay for it uses fewer, and where --threads was given, one line
// says why.
import { availableParallelism } from 'node:os';
import { MEMBERS_PER_THREAD, stepsUncoveredBy, threadsFor, type StepPlan } from '../runtime/fused-step.js';
import { ThreadPool, threadPool } from '../runtime/threads.js';
import type { EnsembleIR } from '../ensemble/ensemble-ir.js';
import { envVar } from '../util/env.js';
import { plural } from '../util/plural.js';

export interface RunThreads {
  /** the threads asked for: --threads, else one per core */
  asked: number;
  /** the threads the run's calls take at its start (its population may shrink: halving; each call takes threadsFor) */
  used: number;
  /** the one line that says why fewer than --threads run, where it was given */
  note?: string;
}

/** The run's threads; puts the process's pool into the plan where more than one thread can run. */
export function runThreads(given: number | undefined, plan: StepPlan, ensemble: EnsembleIR, sharded: boolean): RunThreads {
  const asked = given ?? availableParallelism();
  const why = whyOneThread(plan, ensemble, sharded);
  const used = why ? 1 : threadsFor(ensemble.members, asked);
  if (!why && asked > 1) plan.threads = threadPool(asked);
  if (given === undefined || used >= asked) return { asked, used };
  const reason = why ?? `${plural(ensemble.members, 'member')} split ${MEMBERS_PER_THREAD} or more to a thread`;
  return { asked, used, note: `netc: --threads ${asked}: the steps run on ${plural(used, 'thread')} (${reason})` };
}

/** Why the run's steps take one thread whatever its size, or undefined. */
function whyOneThread(plan: StepPlan, ensemble: EnsembleIR, sharded: boolean): string | undefined {
  if (plan.engine !== 'fused' || plan.target !== 'webassembly') return 'threads run the fused WebAssembly step only';
  if (sharded) return 'shard jobs take one step to a call, on one thread';
  if (!ThreadPool.available()) return "this Node has no process.getBuiltinModule('node:worker_threads') (Node 20.16 or later has)";
  if (!ensemble.ops[0].shared) return 'members on data of their own take one step to a call';
  const uncovered = stepsUncoveredBy(ensemble);
  if (uncovered === 'shared layers') return "shared layers: their gradient is every member's sum, added in one order";
  if (uncovered) return `${uncovered} are written one step to a call`;
  const perCall = Number(envVar('NETC_STEPS_PER_CALL'));
  if (perCall === 1) return 'NETC_STEPS_PER_CALL=1 takes one step to a call';
  return undefined;
}
