// `netc eval RUN [--data SOURCE]`: every member's loss and accuracy (and the run's mse and mae) on a data set, in inference mode, and the
// ensemble's: the mean-combined prediction's loss and accuracy and the majority vote's accuracy, next to
// the mean and the best member's, so the gain of combining the members can be read off.
import Table from 'cli-table3';
import { shownHyperparameters } from '../runtime/hyper.js';
import { evaluateEnsemble } from '../serve/inference.js';
import { extraMetrics } from '../vocabulary/losses.js';
import { ExitCode, type Io } from './io.js';
import { plural } from '../util/plural.js';
import { DEFAULT_INFERENCE_BATCH, prepareInference, type InferenceCommandOptions } from './predict-command.js';
import type { OpenRun } from './run-dir.js';

export interface EvalOptions extends InferenceCommandOptions {
  format: 'table' | 'json';
}

/** The values eval reports: the loss, accuracy (classification losses) and the run's mse and mae if it asked for them. */
export interface Scores {
  loss: number;
  accuracy?: number;
  mse?: number;
  mae?: number;
}

export interface MemberResult extends Scores {
  member: number;
  hyperparameters: Record<string, number>;
}

export interface EvalReport {
  run: string;
  /** the data source: --data as given, or the run's own (train block) source */
  data: string;
  /** without --data, the run's split evaluated on: its test split, else its validation split; null with --data */
  split: 'test' | 'validation' | null;
  examples: number;
  loss: string;
  backend: string;
  step: number;
  /** best first: by accuracy (classification; ties by loss), else by loss */
  members: MemberResult[];
  ensemble: { mean: Scores; vote?: { accuracy: number } };
  member_mean: Scores;
  best_member: MemberResult;
}

export const evalHelp = `
Prints a table of the members (best first: by accuracy for a classification loss, ties by loss; by loss
otherwise) and a table of the ensemble: the loss and accuracy of the mean of the members' outputs
("mean"), the accuracy of the majority vote ("vote", a tie going to the lowest class index), and for
comparison the mean of the members' values and the best member's; mse and mae too when the run's
metrics ask for them. Members run in inference mode (dropout off, batchnorm's running statistics).
--format json prints the same as one JSON object.
Without --data, the run's own held-out data is used, split as it was trained (run.json's data source,
seed and fractions): its test split (test: in the train block), which it never trained or ranked on,
else its validation split; a line on stderr and "split" in the JSON say which.
--data takes a data source as a train block's data: entry does, e.g. 'mnist(offset: 8000, limit: 2000)' or
'npz("mnist.npz", x: "x_test", y: "y_test")'; csv, idx, npy and npz paths are relative to the current directory; xor, moons and spirals are drawn from the run's
seed (so they overlap the data it was trained on) unless --seed is given.
`;

/** The hyperparameters shown for a member: the varied ones by the path the file wrote, else lr. */
function shown(run: OpenRun, m: number): Record<string, number> {
  const values = run.manifest.hyperparameters[m] ?? {};
  return shownHyperparameters(run.compiled.hyper, (key) => values[key]);
}

const finite = (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? v : undefined);

/** Best first; non-finite values (diverged members) last. */
function rankMembers(rows: MemberResult[]): MemberResult[] {
  const score = (v: number | undefined, higher: boolean) => (finite(v) === undefined ? -Infinity : higher ? v! : -v!);
  return [...rows].sort((a, b) => score(b.accuracy, true) - score(a.accuracy, true) || score(b.loss, false) - score(a.loss, false) || a.member - b.member);
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/** The metrics eval computes besides the loss: accuracy for a classification loss, and mse and mae if the run asked for them. */
function evalMetrics(requested: readonly string[], classification: boolean): string[] {
  return extraMetrics.filter((m) => (m === 'accuracy' ? classification : requested.includes(m)));
}

/** The score columns present in the report, in the order of extraMetrics. */
const scoreColumns = (report: EvalReport): (keyof Scores)[] => (['loss', ...extraMetrics] as const).filter((m) => report.member_mean[m] !== undefined);

export async function evalCommand(runDir: string, options: EvalOptions, io: Io): Promise<number> {
  const setup = await prepareInference(runDir, options, io, { labels: true });
  if (!setup) return ExitCode.errors;
  const { run, data, classification } = setup;
  try {
    const ids = run.manifest.member_ids;
    io.err(`evaluating ${ids.length} member${ids.length === 1 ? '' : 's'} of ${run.info.model.name} (step ${run.manifest.position.step}) on ${data.count} example${data.count === 1 ? '' : 's'} of ${data.name}\n`);
    const metrics = evalMetrics(run.info.program.train?.metrics ?? [], classification);
    const result = await evaluateEnsemble(run.population, data, { batch: options.batch ?? DEFAULT_INFERENCE_BATCH, metrics });
    const names = ['loss', ...metrics] as (keyof Scores)[];
    const scores = (value: (name: keyof Scores) => number) => Object.fromEntries(names.map((name) => [name, value(name)])) as unknown as Scores;
    const members: MemberResult[] = ids.map((id, m) => ({ member: id, hyperparameters: shown(run, m), ...scores((name) => result.members[name][m]) }));
    const ranked = rankMembers(members);
    const report: EvalReport = {
      run: runDir,
      data: setup.dataText,
      split: setup.split,
      examples: result.examples,
      loss: setup.loss.name,
      backend: setup.backend,
      step: run.manifest.position.step,
      members: ranked,
      ensemble: { mean: scores((name) => result.ensemble[name]!), ...(classification ? { vote: { accuracy: result.ensemble.voteAccuracy! } } : {}) },
      member_mean: scores((name) => mean(result.members[name])),
      best_member: ranked[0],
    };
    if (options.format === 'json') io.out(JSON.stringify(report, null, 2) + '\n');
    else io.out(memberTable(report) + '\n' + ensembleTable(report) + '\n');
    return ExitCode.ok;
  } finally {
    run.population.dispose();
  }
}

// the table style of src/cli/leaderboard.ts
const style = { head: [] as string[], border: [] as string[], compact: true };
const fmt = (v: number | undefined) => (v === undefined ? '' : Number.isFinite(v) ? (Math.abs(v) >= 1e-3 || v === 0 ? v.toFixed(4) : v.toExponential(2)) : String(v));

function memberTable(report: EvalReport): string {
  const hyper = Object.keys(report.members[0]?.hyperparameters ?? {});
  const metrics = scoreColumns(report);
  const table = new Table({
    head: ['rank', 'member', ...hyper, ...metrics],
    style,
    colAligns: ['right', 'right', ...hyper.map(() => 'right' as const), ...metrics.map(() => 'right' as const)],
  });
  report.members.forEach((r, i) => table.push([i + 1, r.member, ...hyper.map((h) => fmt(r.hyperparameters[h])), ...metrics.map((m) => fmt(r[m]))]));
  return table.toString();
}

function ensembleTable(report: EvalReport): string {
  const columns = scoreColumns(report);
  const head = ['ensemble', ...columns];
  const table = new Table({ head, style, colAligns: ['left', ...columns.map(() => 'right' as const)] });
  const row = (name: string, v: Partial<Scores>) => table.push([name, ...columns.map((c) => fmt(v[c]))]);
  row(`mean of ${report.members.length === 1 ? "1 member's" : `${report.members.length} members'`} outputs`, report.ensemble.mean);
  if (report.ensemble.vote) row('majority vote', report.ensemble.vote);
  row('mean member', report.member_mean);
  row(`best member (${report.best_member.member})`, report.best_member);
  const split = report.split ? ` (the run's ${report.split} split)` : '';
  return table.toString() + `\n${plural(report.examples, 'example')} of ${report.data}${split}, run ${report.run} at step ${report.step}, ${report.backend}`;
}
