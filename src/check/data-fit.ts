// Does the model fit its data and loss? The input must take one example of the data (an image may be
// fed flat to a model whose input is [h*w*c]); the output must fit the loss and the labels.
import type { Span } from '../diagnostics/diagnostic.js';
import { activations } from '../vocabulary/activations.js';
import { Messages } from '../diagnostics/messages.js';
import type { DiagnosticSink } from '../diagnostics/sink.js';
import { fmtShape } from '../layers/layer-kind.js';
import { product } from '../layers/spatial.js';
import type { DataShape } from '../data/sources.js';
import { notAClass } from '../data/class-labels.js';
import type { LossSpec } from '../vocabulary/losses.js';
import type { Shape } from '../core/arg-spec.js';
import { outputShape, type ModelCheck } from './check-model.js';
import type { CheckedModel } from './program.js';

const squeeze = (s: Shape) => s.filter((d) => d !== 1);

export function inputFits(data: Shape, input: Shape): boolean {
  if (fmtShape(data) === fmtShape(input)) return true;
  if (product(data) !== product(input)) return false;
  return input.length === 1 || data.length === 1 || fmtShape(squeeze(data)) === fmtShape(squeeze(input));
}

/** The output size a loss needs for these labels, or a reason it cannot work. */
export function expectedOutput(loss: LossSpec, labels: DataShape['labels']): number | string | undefined {
  if (labels.kind === 'values') {
    if (loss.expects === 'sparse') return labels.columns === 1 ? undefined : `${loss.name} needs one integer label column, the data has ${labels.columns}`;
    return labels.columns;
  }
  const k = labels.classes;
  switch (loss.expects) {
    case 'binary':
      return k === 2 ? 1 : `binary_crossentropy needs 2 classes, the data has ${k}; use categorical_crossentropy or sparse_categorical_crossentropy`;
    case 'categorical':
    case 'sparse':
      return k;
    case 'regression':
      return k === 2 ? 1 : k;
  }
}

/** Where the train block writes its data and its loss: the diagnostics about the fit point there. */
export type FitSpans = { data: Span; loss: Span };

/**
 * Each part is checked as far as what is known allows: the input needs only the model header, the
 * loss-versus-labels rule only the data, and the output the whole model.
 */
export function checkDataFit(model: ModelCheck, data: DataShape, loss: LossSpec | undefined, spans: FitSpans, source: string, sink: DiagnosticSink): void {
  if (model.input && !inputFits(data.features, model.input)) {
    sink.report(Messages.InputDoesNotFitData, spans.data, fmtShape(model.input), `${source}()`, `examples of shape ${fmtShape(data.features)}`);
  }
  checkTokenVocabulary(model, data, spans.data, source, sink);
  if (!loss) return;
  const expected = expectedOutput(loss, data.labels);
  if (typeof expected === 'string') {
    sink.report(Messages.OutputDoesNotFitLoss, spans.loss, expected);
    return;
  }
  if (!model.model) return;
  const out = outputShape(model.model);
  if (expected === undefined) {
    if (out.length === 1) checkLabelColumn(data, loss, out[0], spans.data, source, sink);
    return;
  }
  if (loss.expects === 'categorical' && data.labels.kind === 'values' && data.labels.columns === 1 && out.length === 1 && out[0] > 1) {
    const columns = Array.from({ length: Math.min(out[0], 3) }, (_, i) => `"c${i}"`).join(', ') + (out[0] > 3 ? ', ...' : '');
    const advice = `for integer class labels use loss: sparse_categorical_crossentropy, or name one label column per class (label: [${columns}])`;
    sink.report(Messages.OutputDoesNotFitLoss, spans.loss, `${loss.name} needs one-hot labels, one column per class, but ${source}() gives 1 label column: ${advice}`);
    return;
  }
  if (out.length !== 1 || out[0] !== expected) {
    const labels = data.labels.kind === 'classes' ? `${data.labels.classes} classes` : `${data.labels.columns} label column(s)`;
    sink.report(Messages.OutputDoesNotFitLoss, spans.loss, `the model's output ${fmtShape(out)} does not fit ${loss.name} on ${source}() with ${labels}: the last layer must give [${expected}]`);
    return;
  }
  const actual = outputActivation(model.model);
  if (actual === 'softmax' && out[0] === 1) {
    sink.report(Messages.SoftmaxOneUnit, model.model.layers[model.model.layers.length - 1].span);
    return;
  }
  const advice = activationAdvice(loss, actual, out[0]);
  if (advice) sink.report(Messages.ActivationLossMismatch, spans.loss, advice);
}

/** A text source's vocabulary against the layers that read the model's input as token ids (their ids must be below its size). */
function checkTokenVocabulary(model: ModelCheck, data: DataShape, at: Span, source: string, sink: DiagnosticSink): void {
  if (data.tokens === undefined || !model.model) return;
  for (const layer of model.model.layers) {
    const vocab = layer.inputs.includes(-1) ? layer.kind.tokenIds?.(layer.args) : undefined;
    if (vocab !== undefined && data.tokens > vocab) sink.report(Messages.TokensPastVocabulary, at, `${source}()`, data.tokens, layer.kind.name, vocab);
  }
}

/** A csv label column read at check time against a sparse loss: every label an integer in [0, units). */
function checkLabelColumn(data: DataShape, loss: LossSpec, units: number, at: Span, source: string, sink: DiagnosticSink): void {
  const column = data.labelColumn;
  if (loss.expects !== 'sparse' || !column) return;
  const bad = notAClass(column, units);
  if (!bad) return;
  const fix = bad === column.notIndex ? `is "${column.column}" the label column? name it with label:` : `give the last layer ${column.largest!.value + 1} units (one per class)`;
  sink.report(Messages.LabelNotAClass, at, `${source}("${column.file}")`, bad.line, bad.text, units, loss.name, units - 1, fix);
}

/** What to change when the output's activation does not give the probabilities the loss expects. */
function activationAdvice(loss: LossSpec, actual: string, units: number): string | undefined {
  const wanted = loss.expects === 'binary' ? 'sigmoid' : loss.expects === 'regression' ? undefined : 'softmax';
  if (!wanted || actual === wanted) return undefined;
  // never steer a 1-unit output to softmax: a softmax over 1 unit always outputs 1.0
  if (wanted === 'softmax' && units === 1) {
    const keep = actual === 'sigmoid' ? 'with this sigmoid' : 'with activation: sigmoid';
    return `${loss.name} expects probabilities over the classes, but the last layer has 1 unit: a softmax over 1 unit always outputs 1.0; for two classes use loss: binary_crossentropy ${keep}, or give the last layer one unit per class with activation: softmax`;
  }
  return `${loss.name} expects probabilities, but the last layer's activation is ${actual}; use activation: ${wanted}`;
}

/** The activation applied last: an activation layer's own, or a layer's `activation:` argument. */
function outputActivation(model: CheckedModel): string {
  const last = model.layers[model.layers.length - 1];
  if (!last) return 'linear';
  if (typeof last.args.activation === 'string') return last.args.activation;
  return (activations as readonly string[]).includes(last.kind.name) ? last.kind.name : 'linear';
}
