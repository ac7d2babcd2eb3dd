// `netc extract RUN (--member K | --best [--metric M] | --all | --ensemble) [--format F] --out DIR`: members
// out of the fused population as ordinary TF.js LayersModels (model.json + weights.bin), or as PyTorch
// modules or ONNX graphs (extract-export.ts), each member cut out of the checkpoint by the layout rule that
// slicing-map.json writes down (memberParams, through kernels/fused.ts's unfuse).
import { existsSync, readFileSync } from 'node:fs';
import { chooseBackend } from './backend-option.js';
import { join } from 'node:path';
import { memberParams, retiredMembers } from '../train/checkpoint.js';
import type { BackendName } from '../runtime/backend.js';
import { MissingHyperparameterError, setWeights, toLayersModel, UnsupportedLayerError } from '../serve/layers-model.js';
import { fileSaveHandler } from '../serve/file-io.js';
import type { TF } from '../kernels/tf.js';
import type { MemberMetrics } from '../train/member-metrics.js';
import { readCheckpoint, readRunInfo, RunError } from './run-dir.js';
import { rank, type MemberRow } from '../report/rank.js';
import { ExitCode, UsageError, type Io } from './io.js';
import { makeModelDir, OutDirError } from './out-dir.js';
import { exportMembers, extractedFiles, type CheckpointMember, type ExportFormat } from './extract-export.js';
import { checkNewFiles, fileList } from './output-file.js';
import { UnsupportedExportError } from '../export/plan.js';

export const rankMetrics = ['loss', 'val_loss', 'accuracy', 'val_accuracy', 'mse', 'val_mse', 'mae', 'val_mae'] as const;

export interface ExtractOptions {
  member?: number;
  best?: boolean;
  all?: boolean;
  /** every member in one ensemble.onnx */
  ensemble?: boolean;
  format?: ExportFormat;
  metric?: (typeof rankMetrics)[number];
  out: string;
  backend: BackendName | 'auto';
  /** replace files of the same names in --out */
  force?: boolean;
}

/** Members best first by `metric` (default: the leaderboard's ranking) from the run's summary.json. */
function bestMember(run: string, metric?: ExtractOptions['metric']): number {
  const path = join(run, 'summary.json');
  if (!existsSync(path)) throw new RunError(`${run} has no summary.json yet (the run has not finished): choose a member with --member`);
  const rows = (JSON.parse(readFileSync(path, 'utf8')) as { per_member: MemberRow[] }).per_member;
  if (metric && !rows.some((r) => r.metrics[metric as keyof MemberMetrics] !== undefined)) {
    throw new RunError(`${run} has no '${metric}' for its members; it has: ${Object.keys(rows[0]?.metrics ?? {}).join(', ')}`);
  }
  return rank(rows, metric)[0].member;
}

/** The checked choice of members and format; throws UsageError. */
function checkChoice(options: ExtractOptions): void {
  const chosen = [options.member !== undefined, !!options.best, !!options.all, !!options.ensemble].filter(Boolean).length;
  if (chosen !== 1) throw new UsageError('choose the members with exactly one of --member K, --best, --all or --ensemble');
  if (options.metric && !options.best) throw new UsageError('--metric goes with --best');
  if (options.ensemble && options.format !== 'onnx') throw new UsageError('--ensemble writes one ONNX graph: add --format onnx');
}

/** The files extract writes must be new, or --force given: a RunError naming those already in --out otherwise. */
function checkExtractedFiles(files: string[], options: ExtractOptions): void {
  const out = options.out;
  const exists = (there: string[]) =>
    `--out ${out} already holds ${fileList(there, out)}, which netc extract would write; give --force to replace ${there.length === 1 ? 'it' : 'them'}, or another --out`;
  checkNewFiles(files, !!options.force, exists, (dir) => `cannot write ${dir}: it is a directory; give another --out`);
}

export async function extractCommand(run: string, options: ExtractOptions, io: Io): Promise<number> {
  checkChoice(options);
  try {
    const info = readRunInfo(run);
    const { manifest, tensors } = readCheckpoint(run);
    const retired = retiredMembers(manifest, tensors);
    const known = [...manifest.member_ids, ...retired.map((r) => r.member)].sort((a, b) => a - b);
    const ids = options.all || options.ensemble ? known : [options.best ? bestMember(run, options.metric) : options.member!];
    for (const id of ids) {
      if (!known.includes(id)) throw new RunError(`${run} has no member ${id}; its members are ${known[0]}..${known[known.length - 1]}`);
    }
    // a member that stopped early is extracted as it was when it stopped, with its values then
    const member = (id: number): CheckpointMember => {
      const gone = retired.find((r) => r.member === id);
      if (gone) return { id, step: gone.step, hyperparameters: gone.hyperparameters, params: gone.params, stopped: gone.reason };
      const m = manifest.member_ids.indexOf(id);
      return { id, step: manifest.position.step, hyperparameters: manifest.hyperparameters[m], params: memberParams(manifest, tensors, m) };
    };
    const format = options.format ?? 'tfjs';
    checkExtractedFiles(extractedFiles(format, ids, options.out, !!options.all, !!options.ensemble), options);
    makeModelDir(options.out, run);
    if (format !== 'tfjs') {
      await exportMembers({ run, info, members: ids.map(member), format, out: options.out, all: !!options.all, ensemble: !!options.ensemble }, io);
      return ExitCode.ok;
    }
    const chosen = await chooseBackend(options.backend, io);
    if (!chosen) return ExitCode.errors;
    const { tf } = chosen;
    for (const id of ids) {
      const m = member(id);
      const dir = options.all ? join(options.out, `member-${id}`) : options.out;
      const model = toLayersModel(tf as unknown as TF, info.model, m.hyperparameters);
      setWeights(tf as unknown as TF, model, info.model, m.params);
      const netc = { member: id, step: m.step, run, hyperparameters: m.hyperparameters, ...(m.stopped ? { stopped: m.stopped } : {}) };
      await model.save(fileSaveHandler(tf as unknown as TF, dir, { netc }));
      model.dispose();
      io.out(`member ${id} (step ${m.step}${m.stopped ? ', stopped' : ''}) -> ${join(dir, 'model.json')}\n`);
    }
    return ExitCode.ok;
  } catch (e) {
    if (e instanceof RunError || e instanceof OutDirError || e instanceof UnsupportedLayerError || e instanceof MissingHyperparameterError || e instanceof UnsupportedExportError) {
      io.err(`netc: ${e.message}\n`);
      return ExitCode.errors;
    }
    throw e;
  }
}
