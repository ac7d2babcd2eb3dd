// Checks the train block's `lr_schedule`: the schedule's name and arguments, that a warmup is shorter than
// the run where the run's length is known, and the `vary lr_schedule.ARG` lines that give each member its
// own value of an argument.
import type { Span } from '../diagnostics/diagnostic.js';
import { Messages } from '../diagnostics/messages.js';
import type { DiagnosticSink } from '../diagnostics/sink.js';
import { didYouMean } from '../diagnostics/suggest.js';
import type { Value } from '../syntax/ast.js';
import { lrSchedules } from '../vocabulary/lr-schedules.js';
import type { ArgSpec, BoundValue, Interval } from '../core/arg-spec.js';
import { resolveRegistryCall } from './registry-call.js';
import type { CallConfig } from '../core/arg-spec.js';
import type { EnsembleConfig, TrainConfig } from './program.js';

/** The run's length as the train block gives it (one of the two), for the warmup check. */
/** The run's length, and the option that set it when the command line did (`--steps`). */
export type RunLength = Pick<TrainConfig, 'steps' | 'epochs'> & { from?: string };

/** The lr_schedule value, resolved and bound; undefined after reporting a wrong name. */
export function checkLrSchedule(value: Value, run: RunLength, sink: DiagnosticSink): CallConfig | undefined {
  const resolved = resolveRegistryCall('learning-rate schedule', lrSchedules, value, sink);
  if (!resolved) return undefined;
  const warmup = resolved.config.args.warmup as Interval | undefined;
  const span = resolved.spans.warmup;
  if (warmup && span) checkWarmup(resolved.config.name, warmup, run, span, sink);
  return resolved.config;
}

/**
 * A warmup at least as long as the run never reaches the full rate. Known at check time when the warmup
 * and the run are counted in the same unit (steps and `steps:`, epochs and `epochs:`); otherwise it takes
 * the data's size, and the schedule simply warms up for the whole run.
 */
function checkWarmup(name: string, warmup: Interval, run: RunLength, span: Span, sink: DiagnosticSink): void {
  const total = warmup.unit === 'steps' ? run.steps : run.epochs;
  // a run of no step (--steps 0, which snapshots the initial weights) has no warmup to reach
  if (total === undefined || total === 0 || warmup.amount === 0 || warmup.amount < total) return;
  sink.report(Messages.WarmupTooLong, span, name, `${warmup.amount} ${warmup.unit}`, `${total} ${warmup.unit}${run.from ? ` (${run.from})` : ''}`);
}

/** What `vary lr_schedule.ARG` resolves against: whether the train block gives an lr_schedule, and its name when known. */
export interface LrScheduleScope {
  given: boolean;
  /** undefined when the name is unknown (already reported) */
  name?: string;
}

/**
 * The argument `vary lr_schedule.ARG` names, or undefined after `fail` reported why not (no lr_schedule,
 * no such argument) or when the schedule itself is wrong (already reported).
 */
export function lrScheduleArg(arg: string, scope: LrScheduleScope | undefined, fail: (why: string) => undefined): ArgSpec | undefined {
  if (!scope?.given) return fail(`the train block has no lr_schedule; give one (e.g. lr_schedule: cosine(min: 0.01)) to vary its arguments`);
  const schedule = lrSchedules.find((s) => s.name === scope.name);
  if (!schedule) return undefined;
  const spec = schedule.args.find((a) => a.name === arg);
  if (spec) return spec;
  const names = schedule.args.map((a) => a.name);
  const hypers = schedule.args.filter((a) => a.hyper).map((a) => a.name);
  return fail(`${schedule.name}() has no argument '${arg}'${didYouMean(arg, names)}${hypers.length ? `; it can vary: ${hypers.join(', ')}` : '; it has no arguments to vary'}`);
}

/**
 * A varied warmup, like the train block's, is shorter than the run where that is known: checked once the
 * train block and the ensemble are both clean (a varied interval's values share one unit, see check-ensemble).
 */
export function checkLrScheduleVary(ensemble: EnsembleConfig, train: TrainConfig, sink: DiagnosticSink): void {
  const schedule = train.lr_schedule;
  for (const v of ensemble.vary) {
    if (!schedule || v.target.kind !== 'lr_schedule' || v.target.arg !== 'warmup' || (v.space.kind !== 'list' && v.space.kind !== 'choice')) continue;
    const longest = v.space.values.filter(isInterval).reduce((a, b) => (b.amount > a.amount ? b : a));
    checkWarmup(schedule.name, longest, train, v.span, sink);
  }
}

/** The unit a list or choice of intervals is in, or a message when its values mix steps and epochs. */
export function intervalUnits(values: readonly BoundValue[]): string | undefined {
  const units = [...new Set(values.filter(isInterval).map((i) => i.unit))];
  return units.length > 1 ? `every value must be in one unit, all steps or all epochs, got ${units.join(' and ')}` : undefined;
}

const isInterval = (v: BoundValue): v is Interval => typeof v === 'object' && v !== null && 'unit' in v;
