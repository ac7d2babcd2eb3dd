// The end of `netc train`: summary.json, report.html, the leaderboard and the closing lines.
import { join } from 'node:path';
import type { HyperTable } from '../runtime/hyper.js';
import { shownHyperparameters } from '../runtime/hyper.js';
import type { TrainResult } from '../train/trainer.js';
import { plural } from '../util/plural.js';
import type { Io } from './io.js';
import { leaderboard } from './leaderboard.js';
import type { MemberRow } from '../report/rank.js';
import type { MemberSummary, MetricsLine } from '../report/run-data.js';
import { writeAtomicChunks } from '../util/write-atomic.js';
import { collectGarbage } from '../util/collect.js';
import { crossValidation, settingsLeaderboard } from './cross-validation.js';
import { settingOf, splitText, type MemberSplit } from '../vocabulary/splits.js';

export interface RunEnd {
  runDir: string;
  file: string;
  model: string;
  members: number;
  /** members on data of their own (`split:`) */
  split?: MemberSplit;
  epochs: number;
  backend: string;
  lowering: string;
  /** how each step ran: `fused` (the generated WebAssembly step) or `ops` (TF.js ops) */
  engine: 'fused' | 'ops';
  /** the engine as the first line named it: `fused step`, `fused WGSL step` or `TF.js ops` */
  engineName: string;
  /** the threads the steps ran on at the run's start (--threads, or fewer: cli/threads-option.ts) */
  threads: number;
  seed: number;
  table: HyperTable;
  result: TrainResult;
  /** stopped by Ctrl-C */
  stopped: boolean;
  /** the step a resume started at */
  resumedFrom?: number;
  timings: { epoch: number; step: number; members: number; seconds: number }[];
  /** how the shards travelled (`in-process` without --workers, --queue or --resident) and how many there were */
  transport: string;
  shards: number;
  /** a large population: the heap is collected before summary.json and before the report (util/collect.ts) */
  large?: boolean;
  /** metrics.jsonl's lines as the report would read them back, when netc train kept them (cli/read-back-line.ts) */
  lines?: MetricsLine[];
}

/**
 * Writes summary.json, prints the leaderboard and what was trained: the training's seconds and the command's
 * until that line (since the process started: loading modules, data), which a user waited for; then writes
 * report.html and prints its path (the command does not end before it).
 */
export async function finishRun(end: RunEnd, io: Io): Promise<void> {
  if (end.large) collectGarbage();
  const rows = memberRows(end);
  const { result } = end;
  const summary = {
    file: end.file,
    model: end.model,
    members: end.members,
    steps: result.steps,
    epochs: end.epochs,
    train_seconds: round(result.seconds),
    member_steps_per_second: round(result.memberStepsPerSecond),
    backend: end.backend,
    lowering: end.lowering,
    engine: end.engine,
    threads: end.threads,
    seed: end.seed,
    transport: end.transport,
    shards: end.shards,
    stopped_early: end.stopped,
    resumed_from_step: end.resumedFrom ?? null,
    epoch_timings: end.timings,
    ...splitSummary(end, rows),
    per_member: rows,
  };
  writeAtomicChunks(join(end.runDir, 'summary.json'), summaryChunks(summary));
  io.out((end.split?.kind === 'kfold' ? settingsLeaderboard(crossValidation(rows, end.split), end.split.k) + '\n(each member\'s metrics are in summary.json and report.html)' : leaderboard(rows)) + '\n');
  io.out(`${trainedSteps(result.steps, end.resumedFrom)} x ${plural(end.members, 'member')}: trained in ${result.seconds.toFixed(1)} s, ${(performance.now() / 1000).toFixed(1)} s in all (${Math.round(result.memberStepsPerSecond)} member-steps/s, ${end.backend}, ${end.lowering}, ${end.engineName})\n` + `run directory: ${end.runDir}\n`);
  // the report is drawn after the summary is printed (it takes milliseconds); one that fails does not fail the run
  if (end.large) collectGarbage();
  try {
    const { writeReport } = await import('../report/report.js');
    io.out(`report: ${await writeReport(end.runDir, summary, end.lines)}\n`);
  } catch (e) {
    io.err(`netc: could not write ${join(end.runDir, 'report.html')}: ${(e as Error).message}\n`);
  }
}

/**
 * summary.json's text, piece by piece: the run's fields indented, then `per_member` with one member a
 * line, so that no piece grows with the members.
 */
export function* summaryChunks(summary: { per_member: unknown[] } & Record<string, unknown>): Generator<string> {
  const { per_member, ...head } = summary;
  const fields = Object.keys(head).length ? `${JSON.stringify(head, null, 2).slice(0, -2)},` : '{';
  yield `${fields}\n  "per_member": [`;
  for (let i = 0; i < per_member.length; i++) yield `${i ? ',' : ''}\n    ${JSON.stringify(per_member[i])}`;
  yield `${per_member.length ? '\n  ' : ''}]\n}\n`;
}

/** "200 steps", or after a resume "steps 10 to 30 (20 steps)": the rate counts only the steps this run trained. */
function trainedSteps(steps: number, from: number | undefined): string {
  return from === undefined ? plural(steps, 'step') : `steps ${from} to ${steps} (${plural(steps - from, 'step')})`;
}

/**
 * Each member's row of summary.json's `per_member` (also the leaderboard's and the report's): one object a
 * member, and one hyperparameters object for the members that share their values.
 */
function memberRows({ result, table, split }: RunEnd): (MemberRow & MemberSummary)[] {
  const stoppedAt = new Map(result.retired.map((r) => [r.member, r]));
  const distinct = new Map<string, Record<string, number>>();
  const shared = (values: Record<string, number>) => {
    const key = JSON.stringify(values);
    const kept = distinct.get(key) ?? values;
    distinct.set(key, kept);
    return kept;
  };
  return result.final.map((metrics, m) => {
    const id = result.memberIds[m];
    const retired = stoppedAt.get(id);
    const now = shared(shownHyperparameters(table, (key) => table.value(key, id)));
    // a member PBT copied into after its metrics (a run stopped mid-epoch): the row pairs them with what they were measured under
    const copied = result.copied.get(id);
    const hyperparameters = copied ? shared(shownHyperparameters(table, (key) => copied.measured.hyperparameters[key])) : now;
    return {
      member: id,
      ...memberSplit(split, id),
      hyperparameters,
      lr: copied?.measured.lr ?? result.lr[m],
      metrics,
      ...(retired ? { stopped: { step: retired.step, reason: retired.reason } } : {}),
      ...(copied ? { copied: { step: copied.step, source: copied.source, hyperparameters: now } } : {}),
    };
  });
}

const round = (v: number) => Math.round(v * 1000) / 1000;

/** summary.json's `split`, and under kfold its `cross_validation`: each setting's members and metrics' mean and sd. */
function splitSummary(end: RunEnd, rows: MemberRow[]): Record<string, unknown> {
  if (!end.split) return {};
  if (end.split.kind !== 'kfold') return { split: splitText(end.split) };
  return { split: splitText(end.split), cross_validation: { k: end.split.k, settings: crossValidation(rows, end.split) } };
}

/** A member's place in the split: its fold and setting under kfold. */
function memberSplit(split: MemberSplit | undefined, member: number): Record<string, number> {
  return split?.kind === 'kfold' ? { setting: settingOf(split, member), fold: member % split.k } : {};
}
