// `netc ir FILE --after wgsl`: the generated step's WGSL kernels, as netc train runs them on webgpu (for the
// file's member count and batch size), each with what it binds and how it is dispatched; or why there are none.
import { WORKGROUP, type WgslStep } from './wgsl.js';
import type { RunStepConfig } from './plan.js';
import { bindingName } from '../wgsl/kernel-text.js';

/** The WGSL step of a configuration, or why there is none. */
export type WgslPlan = { config: RunStepConfig; step: WgslStep } | { config: RunStepConfig; why: string };

const count = (n: number) => n.toLocaleString('en-US');

export function printWgslStep(plan: WgslPlan): string {
  const e = plan.config.ensemble;
  if ('why' in plan) return `no WGSL step for ${e.model.name}: it does not cover ${plan.why}; netc train --backend webgpu runs each step on TF.js ops\n`;
  const { step } = plan;
  const L: string[] = [];
  L.push(`WGSL step of ${e.model.name} (${e.lowering}) for N=${step.n}, batch ${step.batch}: ${step.kernels.length} compute kernels, dispatched in this order in one compute pass on TF.js's webgpu device`);
  L.push(`  scratch acts: ${count(step.actsFloats)} floats (every layer's values and their gradients, [N, B, width] each); hyper: [${step.hyper.join(', ')}] x N`);
  if (step.draws.length) L.push(`  draws: ${count(step.drawsFloats)} floats (each dropout layer's uniform draws of the step, [N, B, width], written by the host from the op path's streams: ${step.draws.map((d) => d.op).join(', ')})`);
  const shared = step.hyper.some((key) => key.startsWith('shared:'));
  L.push(`  workgroups of ${WORKGROUP} invocations; every sum is one invocation's loop, in order: nothing is summed across members${shared ? " but a shared layer's gradients (the members' sum), stepped once with the file's hyperparameters (shared:KEY)" : ''}`);
  for (const k of step.kernels) {
    L.push('', `${k.name}`, `  binds ${k.bindings.map(bindingName).join(', ')}; ${count(k.invocations)} invocations, ${k.groups[0]} x ${k.groups[1]} workgroups`);
    L.push(...k.code.trimEnd().split('\n').map((line) => `  | ${line}`));
  }
  return L.join('\n') + '\n';
}
