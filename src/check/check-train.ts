// Checks the train block: its keys, the data source, loss and optimizer, and that the model's input
// and output fit the data and the loss.
import { Messages } from '../diagnostics/messages.js';
import type { DiagnosticSink } from '../diagnostics/sink.js';
import { didYouMean } from '../diagnostics/suggest.js';
import type { Arg, EntriesBlock } from '../syntax/ast.js';
import { dataSources, type DataShape, type Host } from '../data/sources.js';
import { losses, metrics, type LossSpec } from '../vocabulary/losses.js';
import { optimizers } from '../vocabulary/optimizers.js';
import type { ArgSpec } from '../core/arg-spec.js';
import { bindArgs } from './bind-args.js';
import { entriesAsArgs } from './entries.js';
import { resolveRegistryCall } from './registry-call.js';
import type { CallConfig } from '../core/arg-spec.js';
import type { Overrides, TrainConfig } from './program.js';
import type { ModelCheck } from './check-model.js';
import type { RunLength } from './check-lr-schedule.js';
import { checkDataFit } from './data-fit.js';
import { holdouts } from '../vocabulary/splits.js';
import { checkLrSchedule } from './check-lr-schedule.js';

const plainKeys: ArgSpec[] = [
  { name: 'validation', type: { kind: 'number', min: 0, max: 1, maxExclusive: true }, default: 0 },
  { name: 'test', type: { kind: 'number', min: 0, max: 1, maxExclusive: true }, default: 0 },
  { name: 'batch', type: { kind: 'int', min: 1 }, default: 32 },
  { name: 'epochs', type: { kind: 'int', min: 1 } },
  { name: 'steps', type: { kind: 'int', min: 0 } },
  { name: 'metrics', type: { kind: 'choices', values: metrics, what: 'metric' }, default: ['accuracy'] },
  { name: 'shuffle', type: { kind: 'bool' }, default: true },
  { name: 'holdout', type: { kind: 'choice', values: holdouts, what: 'holdout' }, default: 'last' },
];
const callKeys = ['data', 'loss', 'optimizer', 'lr_schedule'];
export const trainKeys = [...callKeys, ...plainKeys.map((k) => k.name)];

export function checkTrain(block: EntriesBlock, model: ModelCheck, sink: DiagnosticSink, host: Host | undefined, overrides: Overrides = {}): TrainConfig | undefined {
  const { args } = entriesAsArgs(block, sink);
  const byKey = new Map(args.map((a) => [a.key!.name, a]));
  const plain: Arg[] = [];
  for (const a of args) {
    const key = a.key!;
    if (callKeys.includes(key.name)) continue;
    if (key.name === 'precision') {
      sink.report(Messages.NoHalfPrecision, key.span);
      continue;
    }
    if (!plainKeys.some((k) => k.name === key.name)) {
      sink.report(Messages.UnknownTrainKey, key.span, key.name, didYouMean(key.name, trainKeys), trainKeys.join(', '));
      continue;
    }
    plain.push(a);
  }
  const errorsBefore = sink.errorCount;
  const bound = bindArgs('train', plain, plainKeys, sink, block.keyword);

  const required = (key: string): Arg | undefined => {
    const a = byKey.get(key);
    // in a block the parser patched up, a missing key is more likely lost in the syntax error
    if (!a && !block.incomplete) sink.report(Messages.MissingTrainKey, block.keyword, key);
    return a;
  };
  const dataArg = required('data');
  const lossArg = required('loss');
  const optimizerArg = byKey.get('optimizer');
  const data = dataArg && resolveRegistryCall('data source', dataSources, dataArg.value, sink);
  const loss = lossArg && resolveRegistryCall('loss', losses, lossArg.value, sink);
  const optimizer: CallConfig | undefined = optimizerArg
    ? resolveRegistryCall('optimizer', optimizers, optimizerArg.value, sink)?.config
    : { name: 'adam', args: bindArgs('adam', [], optimizers.find((o) => o.name === 'adam')!.args, sink, block.keyword).values };

  const held = (bound.values.validation as number | undefined ?? 0) + (bound.values.test as number | undefined ?? 0);
  if ('test' in bound.spans && held >= 1) sink.report(Messages.NothingLeftToTrain, bound.spans.test, bound.values.validation as number, bound.values.test as number, Number(held.toFixed(6)));

  const hasEpochs = 'epochs' in bound.spans;
  const hasSteps = 'steps' in bound.spans;
  const length = runLength(bound.values, overrides);
  if (hasEpochs && hasSteps) sink.report(Messages.EpochsAndSteps, bound.spans.steps);
  else if (!hasEpochs && !hasSteps && !block.incomplete && !length.from) sink.report(Messages.NoEpochsOrSteps, block.keyword);

  const lrArg = byKey.get('lr_schedule');
  const lrSchedule = lrArg && checkLrSchedule(lrArg.value, length, sink);

  let dataShape: DataShape | undefined;
  if (data && dataArg) {
    const shape = data.spec.shape(data.config.args, host);
    if (shape && 'error' in shape) sink.report(shape.code ? { code: shape.code, category: 'error', text: '{0}' } : Messages.DataFile, (shape.arg && data.spans[shape.arg]) || dataArg.value.span, shape.error);
    else if (shape && 'missing' in shape) sink.report(Messages.DataFileMissing, dataArg.value.span, shape.missing);
    else dataShape = shape;
    if (dataShape?.labelTaken !== undefined) sink.report(Messages.CsvLabelTaken, dataArg.value.span, `${data.config.name}("${data.config.args.path as string}")`, dataShape.labelTaken);
  }
  if (dataShape && data && dataArg) {
    const spans = { data: dataArg.value.span, loss: lossArg?.value.span ?? block.keyword };
    checkDataFit(model, dataShape, loss?.spec, spans, data.config.name, sink);
  }

  if (sink.errorCount > errorsBefore || !data || !loss || !optimizer) return undefined;
  const v = bound.values;
  // a mistake here is reported, and the block still described, so that the schedules are checked against it
  const metrics = trainMetrics(byKey.get('metrics'), v.metrics as string[], loss.spec, sink);
  return {
    data: data.config,
    dataShape,
    validation: v.validation as number,
    test: v.test as number,
    loss: loss.config,
    optimizer,
    ...(lrSchedule ? { lr_schedule: lrSchedule } : {}),
    batch: v.batch as number,
    epochs: length.epochs,
    steps: length.steps,
    metrics,
    shuffle: v.shuffle as boolean,
    ...(v.holdout === 'shuffled' ? { holdout: 'shuffled' as const } : {}),
  };
}

/** The run's length: --epochs or --steps in place of the file's epochs and steps, else the file's. */
function runLength(v: Record<string, unknown>, o: Overrides): RunLength {
  if (o.epochs !== undefined) return { epochs: o.epochs, steps: undefined, from: '--epochs' };
  if (o.steps !== undefined) return { steps: o.steps, epochs: undefined, from: '--steps' };
  return { epochs: v.epochs as number | undefined, steps: v.steps as number | undefined };
}

/**
 * The metrics to compute besides the loss: those written (each once), else accuracy for a classification
 * loss and none for a regression loss. Accuracy needs classes, so a regression loss refuses it.
 */
function trainMetrics(arg: Arg | undefined, written: string[], loss: LossSpec, sink: DiagnosticSink): string[] {
  if (!arg) return loss.expects === 'regression' ? [] : ['accuracy'];
  if (loss.expects === 'regression') {
    const items = arg.value.kind === 'list' ? arg.value.items : [arg.value];
    const accuracy = items.find((item) => item.kind === 'name' && item.name === 'accuracy');
    if (accuracy) sink.report(Messages.AccuracyNeedsClasses, accuracy.span, loss.name);
  }
  return [...new Set(written)];
}
