// `netc eval RUN --data SOURCE`: every member's loss and accuracy on a data set, in inference mode, and the
// ensemble's: the mean-combined prediction's loss and accuracy and the majority vote's accuracy, next to
// the mean and the best member's, so the gain of combining the members can be read off.
import Table from 'cli-table3';
import { hyperTable, shownHyperparameters } from '../runtime/hyper.js';
import { evaluateEnsemble } from '../runtime/inference.js';
import { ExitCode, type Io } from './io.js';
import { plural } from '../util/plural.js';
import { DEFAULT_INFERENCE_BATCH, prepareInference, type InferenceCommandOptions } from './predict-command.js';
import type { OpenRun } from './run-dir.js';

export interface EvalOptions extends InferenceCommandOptions {
  format: 'table' | 'json';
}

export interface MemberResult {
  member: number;
  hyperparameters: Record<string, number>;
  loss: number;
  accuracy?: number;
}

export interface EvalReport {
  run: string;
  data: string;
  examples: number;
  loss: string;
  backend: string;
  step: number;
  /** best first: by accuracy (classification; ties by loss), else by loss */
  members: MemberResult[];
  ensemble: { mean: { loss: number; accuracy?: number }; vote?: { accuracy: number } };
  member_mean: { loss: number; accuracy?: number };
  best_member: MemberResult;
}

export const evalHelp = `
Prints a table of the members (best first: by accuracy for a classification loss, ties by loss; by loss
otherwise) and a table of the ensemble: the loss and accuracy of the mean of the members' outputs
("mean"), the accuracy of the majority vote ("vote", a tie going to the lowest class index), and for
comparison the mean of the members' values and the best member's. Members run in inference mode
(dropout off, batchnorm's running statistics). --format json prints the same as one JSON object.
--data takes a data source as a train block's data: entry does, e.g. 'mnist(limit: 2000)'; csv and idx
paths are relative to the current directory; xor, moons and spirals are drawn from the run's seed (the
data it was trained on) unless --seed is given.
`;

/** The hyperparameters shown for a member: the varied ones by the path the file wrote, else lr. */
function shown(run: OpenRun, m: number): Record<string, number> {
  const values = run.manifest.hyperparameters[m] ?? {};
  return shownHyperparameters(hyperTable(run.info.program, run.info.model), (key) => values[key]);
}

const finite = (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? v : undefined);

/** Best first; non-finite values (diverged members) last. */
function rankMembers(rows: MemberResult[]): MemberResult[] {
  const score = (v: number | undefined, higher: boolean) => (finite(v) === undefined ? -Infinity : higher ? v! : -v!);
  return [...rows].sort((a, b) => score(b.accuracy, true) - score(a.accuracy, true) || score(b.loss, false) - score(a.loss, false) || a.member - b.member);
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

export async function evalCommand(runDir: string, options: EvalOptions, io: Io): Promise<number> {
  const setup = await prepareInference(runDir, options, io, { labels: true });
  if (!setup) return ExitCode.errors;
  const { run, data, classification } = setup;
  try {
    const ids = run.manifest.member_ids;
    io.err(`evaluating ${ids.length} member${ids.length === 1 ? '' : 's'} of ${run.info.model.name} (step ${run.manifest.position.step}) on ${data.count} example${data.count === 1 ? '' : 's'} of ${data.name}\n`);
    const result = await evaluateEnsemble(run.population, data, { batch: options.batch ?? DEFAULT_INFERENCE_BATCH });
    const members: MemberResult[] = ids.map((id, m) => ({
      member: id,
      hyperparameters: shown(run, m),
      loss: result.members.loss[m],
      ...(classification ? { accuracy: result.members.accuracy![m] } : {}),
    }));
    const ranked = rankMembers(members);
    const report: EvalReport = {
      run: runDir,
      data: options.data,
      examples: result.examples,
      loss: setup.loss.name,
      backend: setup.backend,
      step: run.manifest.position.step,
      members: ranked,
      ensemble: classification
        ? { mean: { loss: result.ensemble.loss, accuracy: result.ensemble.accuracy }, vote: { accuracy: result.ensemble.voteAccuracy! } }
        : { mean: { loss: result.ensemble.loss } },
      member_mean: { loss: mean(result.members.loss), ...(classification ? { accuracy: mean(result.members.accuracy!) } : {}) },
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
  const metrics = report.members.some((r) => r.accuracy !== undefined) ? (['loss', 'accuracy'] as const) : (['loss'] as const);
  const table = new Table({
    head: ['rank', 'member', ...hyper, ...metrics],
    style,
    colAligns: ['right', 'right', ...hyper.map(() => 'right' as const), ...metrics.map(() => 'right' as const)],
  });
  report.members.forEach((r, i) => table.push([i + 1, r.member, ...hyper.map((h) => fmt(r.hyperparameters[h])), ...metrics.map((m) => fmt(r[m]))]));
  return table.toString();
}

function ensembleTable(report: EvalReport): string {
  const classification = report.ensemble.mean.accuracy !== undefined;
  const head = ['ensemble', 'loss', ...(classification ? ['accuracy'] : [])];
  const table = new Table({ head, style, colAligns: ['left', 'right', 'right'] });
  const row = (name: string, v: { loss?: number; accuracy?: number }) => table.push([name, fmt(v.loss), ...(classification ? [fmt(v.accuracy)] : [])]);
  row(`mean of ${report.members.length === 1 ? "1 member's" : `${report.members.length} members'`} outputs`, report.ensemble.mean);
  if (report.ensemble.vote) row('majority vote', report.ensemble.vote);
  row('mean member', report.member_mean);
  row(`best member (${report.best_member.member})`, report.best_member);
  return table.toString() + `\n${plural(report.examples, 'example')} of ${report.data}, run ${report.run} at step ${report.step}, ${report.backend}`;
}
