// `netc extract --format pytorch|onnx`: members written as PyTorch code and weights or as ONNX graphs,
// from export/'s plans; no TF.js backend is loaded. `--ensemble` (onnx) puts every member in one graph;
// `--all --format pytorch` adds the stacked state_dicts (ensemble.safetensors) and members.json.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelIR } from '../ir/model-ir.js';
import { layerKind } from '../layers/registry.js';
import type { MemberHyperparameters } from '../runtime/hyper.js';
import { exportPlan, type ExportPlan } from '../export/plan.js';
import { modelArgs, modelPy, stackedStateDict, stateDict } from '../export/pytorch.js';
import { encodeSafetensors } from '../export/safetensors.js';
import { isClassificationLoss } from '../serve/inference.js';
import { writeAtomic } from '../util/write-atomic.js';
import type { RunInfo } from './run-dir.js';
import type { Io } from './io.js';

export const exportFormats = ['tfjs', 'pytorch', 'onnx'] as const;
export type ExportFormat = (typeof exportFormats)[number];

/** A member as the checkpoint has it: its weights and hyperparameters, at the step it reached. */
export interface CheckpointMember {
  id: number;
  step: number;
  hyperparameters: MemberHyperparameters;
  params: Map<string, Float32Array>;
  stopped?: string;
}

const about = (run: string, m: CheckpointMember) => `member ${m.id} of ${run}, step ${m.step}${m.stopped ? ` (stopped: ${m.stopped})` : ''}`;

/** The file's own values of every layer argument `vary` may change: the defaults of `--all`'s model.py. */
function fileHyperparameters(ir: ModelIR): MemberHyperparameters {
  return Object.fromEntries(ir.ops.slice(1).flatMap((op) => (layerKind(op.op)?.args ?? []).filter((a) => a.hyper).map((a) => [`${op.name}.${a.name}`, (op.attrs[a.name] ?? a.default) as number])));
}

/** Writes model.py + model.safetensors, or model.onnx, for one member into `dir`. */
function writeMember(format: 'pytorch' | 'onnx', dir: string, plan: ExportPlan, note: string, io: Io, onnx?: Onnx): void {
  if (format === 'onnx') {
    writeAtomic(join(dir, 'model.onnx'), onnx!.memberOnnx(plan, note));
    io.out(`${note} -> ${join(dir, 'model.onnx')}\n`);
    return;
  }
  writeAtomic(join(dir, 'model.safetensors'), encodeSafetensors(stateDict(plan), { format: 'pt', netc: note }));
  writeAtomic(join(dir, 'model.py'), modelPy(plan, note));
  io.out(`${note} -> ${join(dir, 'model.py')}, ${join(dir, 'model.safetensors')}\n`);
}

/**
 * The files `netc extract` writes for these members into `out`: model.json and weights.bin (tfjs), model.py
 * and model.safetensors (pytorch) or model.onnx, each member's in member-K/ with --all (--all --format
 * pytorch adds model.py, ensemble.safetensors and members.json), or one ensemble.onnx.
 */
export function extractedFiles(format: ExportFormat, ids: number[], out: string, all: boolean, ensemble: boolean): string[] {
  if (ensemble) return [join(out, 'ensemble.onnx')];
  const own = { tfjs: ['model.json', 'weights.bin'], pytorch: ['model.py', 'model.safetensors'], onnx: ['model.onnx'] }[format];
  const members = ids.flatMap((id) => own.map((f) => (all ? join(out, `member-${id}`, f) : join(out, f))));
  return all && format === 'pytorch' ? [...members, ...['model.py', 'ensemble.safetensors', 'members.json'].map((f) => join(out, f))] : members;
}

/** Each member's final metrics from summary.json, when the run has finished. */
function finalMetrics(run: string): Map<number, Record<string, number>> {
  const path = join(run, 'summary.json');
  if (!existsSync(path)) return new Map();
  const rows = (JSON.parse(readFileSync(path, 'utf8')) as { per_member: { member: number; metrics: Record<string, number> }[] }).per_member;
  return new Map(rows.map((r) => [r.member, r.metrics]));
}

export interface ExportRequest {
  run: string;
  info: RunInfo;
  members: CheckpointMember[];
  format: 'pytorch' | 'onnx';
  out: string;
  /** every member into DIR/member-K/ (with `--all`) */
  all: boolean;
  /** one ensemble.onnx */
  ensemble: boolean;
}

/** src/export/onnx.ts, loaded only for ONNX: its protobufjs is 9 MB of resident memory in every other command */
type Onnx = typeof import('../export/onnx.js');

export async function exportMembers(r: ExportRequest, io: Io): Promise<void> {
  const onnx = r.ensemble || r.format === 'onnx' ? await import('../export/onnx.js') : undefined;
  const plans = r.members.map((m) => ({ member: m, plan: exportPlan(r.info.model, m.params, m.hyperparameters) }));
  if (r.ensemble) {
    const classifier = isClassificationLoss(r.info.program.train?.loss.name ?? 'mse');
    const note = `${plans.length} members of ${r.run}`;
    writeAtomic(join(r.out, 'ensemble.onnx'), onnx!.ensembleOnnx(plans.map((p) => ({ plan: p.plan, member: p.member.id })), classifier, note));
    io.out(`${note} -> ${join(r.out, 'ensemble.onnx')}\n`);
    return;
  }
  for (const { member, plan } of plans) writeMember(r.format, r.all ? join(r.out, `member-${member.id}`) : r.out, plan, about(r.run, member), io, onnx);
  if (!r.all || r.format !== 'pytorch') return;
  const model = exportPlan(r.info.model, plans[0].member.params, fileHyperparameters(r.info.model));
  writeAtomic(join(r.out, 'model.py'), modelPy(model, `the model of ${r.run}, with the file's layer arguments`));
  writeAtomic(join(r.out, 'ensemble.safetensors'), encodeSafetensors(stackedStateDict(plans.map((p) => stateDict(p.plan))), { format: 'pt', members: plans.map((p) => p.member.id).join(',') }));
  const metrics = finalMetrics(r.run);
  const rows = plans.map(({ member: m, plan }) => ({ member: m.id, step: m.step, args: modelArgs(plan), hyperparameters: m.hyperparameters, metrics: metrics.get(m.id) ?? null, ...(m.stopped ? { stopped: m.stopped } : {}) }));
  writeAtomic(join(r.out, 'members.json'), JSON.stringify({ run: r.run, members: rows }, null, 2) + '\n');
  io.out(`${plans.length} members stacked -> ${join(r.out, 'ensemble.safetensors')}, ${join(r.out, 'members.json')}\n`);
}
