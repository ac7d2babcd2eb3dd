// What the training report is drawn from: a run directory's summary.json, metrics.jsonl and (when
// population-based training wrote one) events.jsonl, read into plain typed data. Metrics that JSON
// could not hold (NaN, Infinity of a diverged member are written as null) come back as NaN.
import { createReadStream, existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { MemberMetrics } from '../train/member-metrics.js';
import { metricColumns } from '../vocabulary/losses.js';
import { maxOf } from '../util/extrema.js';

export type MetricName = keyof MemberMetrics;
export const metricNames = metricColumns as readonly MetricName[];

/** One line of metrics.jsonl: one member at the end of one epoch. */
export interface MetricsLine extends MemberMetrics {
  epoch: number;
  step: number;
  member: number;
  hyperparameters: Record<string, number>;
  /** the member's learning rate in the epoch's last step (absent in runs written before netc recorded it) */
  lr?: number;
}

/** One member's final hyperparameters and metrics (summary.json `per_member`). */
export interface MemberSummary {
  member: number;
  /** under kfold: the member's setting (floor(member / k)) and the fold it validates on */
  setting?: number;
  fold?: number;
  hyperparameters: Record<string, number>;
  /** the learning rate its metrics were measured under: in the last step of the epoch they come from */
  lr?: number;
  metrics: MemberMetrics;
  /** PBT copied another member into it after those metrics (a run stopped mid-epoch): the copy, and its hyperparameters since */
  copied?: { step: number; source: number; hyperparameters: Record<string, number> };
}

/** summary.json. Only `per_member` is required; the rest is shown when present. */
export interface RunSummary {
  file?: string;
  model?: string;
  members?: number;
  steps?: number;
  epochs?: number;
  train_seconds?: number;
  member_steps_per_second?: number;
  backend?: string;
  lowering?: string;
  seed?: number;
  stopped_early?: boolean;
  /** the step a resumed run continued from (null when it was not resumed) */
  resumed_from_step?: number | null;
  /** set when the run has no summary.json (it was killed): how far its metrics go, and how to finish it */
  unfinished?: { step: number; resume: string };
  /** `kfold(5)`, `bootstrap()`: members on data of their own */
  split?: string;
  /** under kfold: each setting's members and the mean and sd of their metrics, best first */
  cross_validation?: { k: number; settings: { setting: number; members: number[]; hyperparameters: Record<string, number>; metrics: Record<string, { mean: number; sd: number }> }[] };
  per_member: MemberSummary[];
}

/** Population-based training copied `source`'s weights into `member` and gave it `hyperparameters`. */
export interface ExploitEvent {
  step: number;
  event: 'exploit';
  member: number;
  source: number;
  hyperparameters: Record<string, number>;
}

/** A schedule (halving, early stopping, ...) stopped `member`. */
export interface StopEvent {
  step: number;
  event: 'stop';
  member: number;
  reason: string;
}

/** An event of a kind this report does not draw; listed in the events table only. */
export interface OtherEvent {
  step: number;
  event: string;
  member: number;
  [key: string]: unknown;
}

export type RunEvent = ExploitEvent | StopEvent | OtherEvent;

export interface ReportInput {
  summary: RunSummary;
  /** metrics.jsonl, in file order */
  metrics: MetricsLine[];
  /** events.jsonl when the run has one; undefined (no lineage section) otherwise */
  events?: RunEvent[];
  /** when the run finished (shown in the title block); writeReport uses summary.json's modification time */
  finishedAt?: Date | string;
}

export class RunDataError extends Error {
  override name = 'RunDataError';
}

export const isExploit = (e: RunEvent): e is ExploitEvent => e.event === 'exploit' && typeof (e as ExploitEvent).source === 'number';
export const isStop = (e: RunEvent): e is StopEvent => e.event === 'stop';

/**
 * Reads summary.json, metrics.jsonl and, if present, events.jsonl from a run directory. A run without
 * summary.json was killed before it finished (Ctrl-C writes one): it is read from run.json and each
 * member's last line of metrics.jsonl, and its summary says how to finish it. `written` and `lines`: the summary
 * and metrics.jsonl's lines netc train has just written, given so that they are not read back.
 */
export async function readRun(runDir: string, members?: (summary: RunSummary) => Set<number> | undefined, written?: RunSummary, lines?: MetricsLine[]): Promise<ReportInput> {
  const metricsPath = join(runDir, 'metrics.jsonl');
  const eventsPath = join(runDir, 'events.jsonl');
  const events = existsSync(eventsPath) ? await readJsonLines<RunEvent>(eventsPath) : undefined;
  const summaryPath = join(runDir, 'summary.json');
  const readMetrics = async (keep?: Set<number>) => (existsSync(metricsPath) ? (await readJsonLines<MetricsLine>(metricsPath, keep)).map((l) => numericMetrics(l)) : []);
  if (!existsSync(summaryPath)) {
    const metrics = await readMetrics();
    return { summary: await unfinishedSummary(runDir, metrics), metrics, events };
  }
  const summary = written ? asRead(written) : readSummary(parseJson(await readFile(summaryPath, 'utf8'), summaryPath) as RunSummary, summaryPath);
  const finishedAt = (await stat(summaryPath)).mtime;
  // only the lines of the members a report draws, where it draws a sample: metrics.jsonl grows with members x epochs
  return { summary, metrics: lines ?? (await readMetrics(members?.(summary))), events, finishedAt };
}

/** summary.json as parsed, each member with its hyperparameters and its metrics as numbers (null: NaN). */
function readSummary(summary: RunSummary, summaryPath: string): RunSummary {
  if (!Array.isArray(summary?.per_member)) throw new RunDataError(`${summaryPath}: no per_member list`);
  summary.per_member = summary.per_member.map((m) => ({ ...m, hyperparameters: m.hyperparameters ?? {}, metrics: numericMetrics(m.metrics ?? {}) as MemberMetrics }));
  return summary;
}

/**
 * The summary netc train has just written, as reading summary.json back would give it (a non-finite metric
 * reads back as NaN), without reading it: 100,000 members' summary.json is 13 MB of text and its objects.
 */
function asRead(written: RunSummary): RunSummary {
  const nonFinite = (m: MemberSummary) => Object.values(m.metrics).some((v) => typeof v === 'number' && !Number.isFinite(v) && !Number.isNaN(v));
  if (!written.per_member.some(nonFinite)) return written;
  const asNaN = (metrics: MemberMetrics) => Object.fromEntries(Object.entries(metrics).map(([k, v]) => [k, typeof v === 'number' && !Number.isFinite(v) ? NaN : v])) as MemberMetrics;
  return { ...written, per_member: written.per_member.map((m) => (nonFinite(m) ? { ...m, metrics: asNaN(m.metrics) } : m)) };
}

/** The summary of a run that has run.json and no summary.json: each member as its last metrics line has it. */
async function unfinishedSummary(runDir: string, metrics: MetricsLine[]): Promise<RunSummary> {
  const infoPath = join(runDir, 'run.json');
  if (!existsSync(infoPath)) throw new RunDataError(`${join(runDir, 'summary.json')}: not found, and '${runDir}' has no run.json either: it is not a netc run directory`);
  const info = parseJson(await readFile(infoPath, 'utf8'), infoPath) as { file?: string; model?: { name?: string }; ensemble?: { members?: number; lowering?: string } };
  const resume = `netc train ${info.file ?? 'FILE.net'} --resume ${runDir}`;
  if (!metrics.length) {
    throw new RunDataError(`'${runDir}' has not finished (no summary.json), and no epoch ended before it stopped (metrics.jsonl is empty), so there is nothing to draw yet; finish the run with: ${resume}`);
  }
  const last = new Map<number, MetricsLine>();
  for (const l of metrics) if ((last.get(l.member)?.step ?? -1) <= l.step) last.set(l.member, l);
  const step = maxOf(metrics.map((l) => l.step));
  const per_member = [...last.values()]
    .sort((a, b) => a.member - b.member)
    .map((l) => ({ member: l.member, hyperparameters: l.hyperparameters ?? {}, metrics: Object.fromEntries(metricNames.filter((k) => k in l).map((k) => [k, l[k]])) as unknown as MemberMetrics }));
  return { file: info.file, model: info.model?.name, members: info.ensemble?.members, steps: step, lowering: info.ensemble?.lowering, unfinished: { step, resume }, per_member };
}

function numericMetrics<T extends object>(row: T): T {
  const out: Record<string, unknown> = { ...(row as Record<string, unknown>) };
  for (const k of metricNames) if (k in out && (out[k] === null || typeof out[k] === 'string')) out[k] = out[k] === null ? NaN : Number(out[k]);
  return out as T;
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new RunDataError(`${where}: ${(e as Error).message}`);
  }
}

/**
 * A JSON-lines file's rows, read line by line (the file may be larger than a string can be); with `keep`,
 * only the rows of those members (a line that does not name one is not parsed).
 */
async function readJsonLines<T>(path: string, keep?: Set<number>): Promise<T[]> {
  const out: T[] = [];
  const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
  let i = 0;
  for await (const line of lines) {
    i++;
    if (!line.trim()) continue;
    if (keep) {
      const member = /"member":(\d+)/.exec(line);
      if (member && !keep.has(Number(member[1]))) continue;
    }
    out.push(parseJson(line, `${path}(${i})`) as T);
  }
  return out;
}
