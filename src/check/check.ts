// The checker's entry: sorts the blocks, checks each one, and assembles a Program when all is valid.
import type { Span } from '../diagnostics/diagnostic.js';
import { Messages } from '../diagnostics/messages.js';
import { didYouMean } from '../diagnostics/suggest.js';
import type { DiagnosticSink } from '../diagnostics/sink.js';
import { lineStarts, offsetToLineCol } from '../diagnostics/format.js';
import type { EntriesBlock, ModelBlock, NetFile, Value } from '../syntax/ast.js';
import type { Host } from '../data/sources.js';
import { losses } from '../vocabulary/losses.js';
import { optimizers } from '../vocabulary/optimizers.js';
import { checkModel } from './check-model.js';
import { checkTrain } from './check-train.js';
import { checkEnsemble } from './check-ensemble.js';
import { checkSchedule } from './check-schedule.js';
import type { Overrides, Program, ScheduleConfig } from './program.js';
import { checkLrScheduleVary, type LrScheduleScope } from './check-lr-schedule.js';
import { lrSchedules } from '../vocabulary/lr-schedules.js';
import { checkSplit } from './check-split.js';

export interface CheckOptions {
  /** reads data files (csv headers, idx headers) relative to the .net file */
  host?: Host;
  /** values given on the command line in place of the file's, checked as if the file said them */
  overrides?: Overrides;
}

export function check(file: NetFile, sink: DiagnosticSink, options: CheckOptions = {}): Program | undefined {
  const starts = lineStarts(file.source);
  const lineOf = (offset: number) => offsetToLineCol(starts, offset).line;

  const single = <B extends ModelBlock | EntriesBlock>(kind: B['kind']): B | undefined => {
    const found = file.blocks.filter((b) => b.kind === kind) as B[];
    for (const extra of found.slice(1)) sink.report(Messages.DuplicateBlock, extra.keyword, kind, lineOf(found[0].keyword.start));
    return found[0];
  };
  const modelBlock = single<ModelBlock>('model');
  const ensembleBlock = single<EntriesBlock>('ensemble');
  const trainBlock = single<EntriesBlock>('train');

  for (const b of file.blocks) {
    if (b.kind === 'unknown') sink.report(Messages.UnknownBlock, b.name.span, b.name.name, didYouMean(b.name.name, ['model', 'ensemble', 'train', 'schedule']));
  }
  if (!modelBlock) sink.report(Messages.MissingModel, { start: 0, length: Math.min(1, file.source.length) });
  const modelCheck = modelBlock ? checkModel(modelBlock, sink, lineOf) : {};
  const model = modelCheck.model;
  const train = trainBlock && checkTrain(trainBlock, modelCheck, sink, options.host, options.overrides);
  const ensemble = checkEnsemble(ensembleBlock, { model: modelBlock, optimizer: optimizerName(trainBlock), lrSchedule: lrScheduleScope(trainBlock) }, sink, options.overrides?.seed);
  if (ensemble && train) checkLrScheduleVary(ensemble, train, sink);

  const schedules: ScheduleConfig[] = [];
  const metricSpans = new Map<ScheduleConfig, Span>();
  for (const block of file.blocks) {
    if (block.kind !== 'schedule') continue;
    const schedule = checkSchedule(block, sink);
    if (!schedule) continue;
    if (schedules.some((s) => s.name === schedule.name)) sink.report(Messages.DuplicateSchedule, block.name!.span, schedule.name);
    else schedules.push(schedule);
    metricSpans.set(schedule, block.entries.find((e) => e.path.length === 1 && e.path[0].name === 'metric')?.value.span ?? schedule.span);
  }

  // a split validates each member on examples of its own, without a validation share
  const noValidation = !!train && train.validation === 0 && !ensemble?.split;
  for (const s of schedules) {
    const metric = s.args.metric as string | undefined;
    if (metric?.startsWith('val_') && noValidation) sink.report(Messages.ScheduleNeedsValidation, s.span, s.name, metric, metric.slice(4));
    if (metric?.endsWith('accuracy') && train && regression(train)) sink.report(Messages.ScheduleAccuracyNeedsClasses, metricSpans.get(s)!, `schedule ${s.name}`, metric, train.loss.name, metric.replace('accuracy', 'loss'));
    if (s.name === 'pbt' && ensemble && ensemble.vary.length === 0) sink.report(Messages.NothingVaries, s.span);
  }
  if (ensemble?.split) checkSplit({ ensemble, train, trainBlock, schedules, model }, sink);
  const plateau = train?.lr_schedule?.name === 'plateau' ? (train.lr_schedule.args.metric as string) : undefined;
  if (plateau?.startsWith('val_') && noValidation) sink.report(Messages.PlateauNeedsValidation, lrScheduleSpan(trainBlock!), plateau, plateau.slice(4));
  if (plateau?.endsWith('accuracy') && regression(train!)) sink.report(Messages.ScheduleAccuracyNeedsClasses, lrScheduleSpan(trainBlock!), 'lr_schedule plateau', plateau, train!.loss.name, plateau.replace('accuracy', 'loss'));

  if (sink.errorCount > 0 || !model || !ensemble || (trainBlock && !train)) return undefined;
  return { path: file.path, model, ensemble, train, schedules };
}

/** Whether the train block's loss is a regression loss (its outputs have no classes, so no accuracy). */
const regression = (train: { loss: { name: string } }) => losses.find((l) => l.name === train.loss.name)?.expects === 'regression';

/** The lr_schedule a `vary lr_schedule.ARG` path refers to: whether the train block gives one, and its name when known. */
function lrScheduleScope(train: EntriesBlock | undefined): LrScheduleScope {
  const entry = train?.entries.find((e) => !e.vary && e.path[0].name === 'lr_schedule');
  if (!entry) return { given: false };
  const v: Value = entry.value;
  const name = v.kind === 'call' ? v.callee.name : v.kind === 'name' ? v.name : undefined;
  return { given: true, name: lrSchedules.some((s) => s.name === name) ? name : undefined };
}

const lrScheduleSpan = (train: EntriesBlock) => train.entries.find((e) => !e.vary && e.path[0].name === 'lr_schedule')!.value.span;

/** The optimizer a vary path refers to: the train block's, adam by default, undefined if unknown. */
function optimizerName(train: EntriesBlock | undefined): string | undefined {
  const entry = train?.entries.find((e) => !e.vary && e.path[0].name === 'optimizer');
  if (!entry) return 'adam';
  const v: Value = entry.value;
  const name = v.kind === 'call' ? v.callee.name : v.kind === 'name' ? v.name : undefined;
  return optimizers.some((o) => o.name === name) ? name : undefined;
}
