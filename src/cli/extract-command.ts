// `netc extract RUN (--member K | --best [--metric M] | --all) --out DIR`: members out of the fused
// population as ordinary TF.js LayersModels (model.json + weights.bin), each member cut out of the checkpoint
// by the layout rule that slicing-map.json writes down (memberParams, through kernels/fused.ts's unfuse).
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

export const rankMetrics = ['loss', 'val_loss', 'accuracy', 'val_accuracy', 'mse', 'val_mse', 'mae', 'val_mae'] as const;

export interface ExtractOptions {
  member?: number;
  best?: boolean;
  all?: boolean;
  metric?: (typeof rankMetrics)[number];
  out: string;
  backend: BackendName | 'auto';
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

export async function extractCommand(run: string, options: ExtractOptions, io: Io): Promise<number> {
  const chosen = [options.member !== undefined, !!options.best, !!options.all].filter(Boolean).length;
  if (chosen !== 1) throw new UsageError('choose the members with exactly one of --member K, --best or --all');
  if (options.metric && !options.best) throw new UsageError('--metric goes with --best');
  try {
    const info = readRunInfo(run);
    const { manifest, tensors } = readCheckpoint(run);
    const retired = retiredMembers(manifest, tensors);
    const known = [...manifest.member_ids, ...retired.map((r) => r.member)].sort((a, b) => a - b);
    const ids = options.all ? known : [options.best ? bestMember(run, options.metric) : options.member!];
    for (const id of ids) {
      if (!known.includes(id)) throw new RunError(`${run} has no member ${id}; its members are ${known[0]}..${known[known.length - 1]}`);
    }
    makeModelDir(options.out, run);
    const chosen = await chooseBackend(options.backend, io);
    if (!chosen) return ExitCode.errors;
    const { tf } = chosen;
    for (const id of ids) {
      const m = manifest.member_ids.indexOf(id);
      const gone = retired.find((r) => r.member === id);
      const dir = options.all ? join(options.out, `member-${id}`) : options.out;
      // a member that stopped early is extracted as it was when it stopped, with its values then
      const hyperparameters = gone ? gone.hyperparameters : manifest.hyperparameters[m];
      const model = toLayersModel(tf as unknown as TF, info.model, hyperparameters);
      setWeights(tf as unknown as TF, model, info.model, gone ? gone.params : memberParams(manifest, tensors, m));
      const step = gone ? gone.step : manifest.position.step;
      const netc = { member: id, step, run, hyperparameters, ...(gone ? { stopped: gone.reason } : {}) };
      await model.save(fileSaveHandler(tf as unknown as TF, dir, { netc }));
      model.dispose();
      io.out(`member ${id} (step ${step}${gone ? ', stopped' : ''}) -> ${join(dir, 'model.json')}\n`);
    }
    return ExitCode.ok;
  } catch (e) {
    if (e instanceof RunError || e instanceof OutDirError || e instanceof UnsupportedLayerError || e instanceof MissingHyperparameterError) {
      io.err(`netc: ${e.message}\n`);
      return ExitCode.errors;
    }
    throw e;
  }
}
