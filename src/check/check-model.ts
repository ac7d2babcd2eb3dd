// Checks the model block: layer names and arguments, labels, and shape inference for every layer.
import type { Span } from '../diagnostics/diagnostic.js';
import { Messages, type MessageDef } from '../diagnostics/messages.js';
import type { DiagnosticSink } from '../diagnostics/sink.js';
import { didYouMean } from '../diagnostics/suggest.js';
import { layerKind, layerKinds, layerNames } from '../layers/registry.js';
import { describeValue, type ModelBlock } from '../syntax/ast.js';
import type { Shape } from '../core/arg-spec.js';
import { bindArgs } from './bind-args.js';
import type { CheckedLayer, CheckedModel } from './program.js';

export const INPUT_LABEL = 'input';
/** the argument every single-input layer accepts to read a labelled output instead of the previous one */
export const FROM_ARG = 'from';

export interface ModelCheck {
  /** the input shape, when the header gives a valid one */
  input?: Shape;
  /** the whole model, when every layer checked */
  model?: CheckedModel;
}

export function checkModel(block: ModelBlock, sink: DiagnosticSink, lineOf: (offset: number) => number): ModelCheck {
  const header = bindArgs(`model ${block.name.name}`, block.params, [{ name: 'input', type: { kind: 'shape' }, required: true }], sink, block.name.span);
  const input = header.values.input as Shape | undefined;
  if (block.statements.length === 0 && !block.incomplete) sink.report(Messages.EmptyModel, block.name.span, block.name.name);

  // Labels first, so that a use before the definition can be told apart from a typo.
  const labels = new Map<string, { index: number; span: Span }>();
  block.statements.forEach((s, index) => {
    if (!s.label) return;
    const name = s.label.name;
    const previous = labels.get(name);
    if (name === INPUT_LABEL) sink.report(Messages.ReservedLabel, s.label.span, name);
    else if (previous) sink.report(Messages.DuplicateLabel, s.label.span, name, lineOf(previous.span.start));
    else labels.set(name, { index, span: s.label.span });
  });

  const layers: CheckedLayer[] = [];
  const shapes: (Shape | undefined)[] = [];
  // A layer's shape is inferred when its inputs' shapes are known and its own call is valid, so one
  // mistake silences only the layers downstream of it.
  block.statements.forEach((s, index) => {
    const callee = s.call.callee;
    const kind = layerKind(callee.name);
    if (!kind) {
      sink.report(Messages.UnknownName, callee.span, 'layer', callee.name, didYouMean(callee.name, layerNames), layerNames.join(', '));
      shapes.push(undefined);
      return;
    }
    const errorsBefore = sink.errorCount;
    if (s.shared && !kind.forward.shared) sink.report(Messages.SharedWithoutWeights, s.shared, sharable().join(', '), kind.name);
    // `from: LABEL` (any layer that reads one input) reads a labelled output instead of the previous one,
    // so that branches can be written
    const from = kind.reads === 'previous' ? s.call.args.find((a) => a.key?.name === FROM_ARG) : undefined;
    const callArgs = s.call.args.filter((a) => a !== from);
    const args = bindArgs(kind.name, callArgs, kind.args, sink, callee.span, { restLabels: kind.reads === 'labels' });
    const resolve = (ref: { label: string; span: Span }): number => {
      if (ref.label === INPUT_LABEL) return -1;
      const def = labels.get(ref.label);
      if (!def) {
        if (!block.incomplete) sink.report(Messages.UndefinedLabel, ref.span, ref.label, didYouMean(ref.label, [...labels.keys(), INPUT_LABEL]));
      } else if (def.index >= index) sink.report(Messages.LabelUsedBeforeDefinition, ref.span, ref.label, lineOf(def.span.start));
      else return def.index;
      return NaN;
    };
    let inputs: number[];
    if (kind.reads === 'labels') {
      inputs = args.rest.map(resolve);
      if (inputs.length < 2) sink.report(Messages.NeedsInputs, callee.span, kind.name, 2, inputs.length);
    } else if (from) {
      const v = from.value;
      if (v.kind !== 'name') {
        sink.report(Messages.WrongType, v.span, `${kind.name}: ${FROM_ARG}`, 'a label', describeValue(v));
        inputs = [NaN];
      } else inputs = [resolve({ label: v.name, span: v.span })];
    } else {
      inputs = [index - 1];
    }
    const inShapes = inputs.map((i) => (i === -1 ? input : shapes[i]));
    let shape: Shape | undefined;
    if (sink.errorCount === errorsBefore && !block.incomplete && inShapes.every((x): x is Shape => !!x)) {
      shape = kind.shape({
        args,
        inputs: inShapes,
        span: callee.span,
        error: (def: MessageDef, arg: string | undefined, ...rest) => sink.report(def, (arg && args.spans[arg]) || s.call.span, ...rest),
      });
    }
    shapes.push(shape);
    layers.push({ index, kind, label: s.label?.name, shared: !!s.shared, args: args.values, inputs, shape: shape ?? [], span: s.call.span });
  });
  const complete = !!input && !block.incomplete && shapes.length === layers.length && shapes.every((x) => !!x);
  return { input, model: complete ? { name: block.name.name, input, layers } : undefined };
}

/** The layer kinds that `shared` may go before: those with parameters. */
const sharable = () => layerKinds.filter((k) => k.forward.shared).map((k) => k.name);

export function outputShape(model: CheckedModel): Shape {
  return model.layers.length ? model.layers[model.layers.length - 1].shape : model.input;
}
