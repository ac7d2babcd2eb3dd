// One member as an ordinary tfjs-layers model: the same graph built from TF.js's own layers, with
// Keras-style names, each op's layers from its kind's reference rule (layers/reference-rule.ts). It is the
// reference that the fused members are tested against, and what extraction writes out. Every layer argument `vary` may change is the member's own value, and every
// initializer is the one netc drew the member's weights from, so the model is that member exactly.
import type * as tfjs from '@tensorflow/tfjs';
import type { IrOp, ModelIR } from '../ir/model-ir.js';
import { memberArgs, type MemberHyperparameters } from '../runtime/hyper.js';
import type { Initializer } from '../vocabulary/initializers.js';
import type { TF } from '../kernels/tf.js';
import { layerKind } from '../layers/registry.js';
import { hasRule } from '../layers/layer-kind.js';
import { UnsupportedLayerError } from '../layers/reference-rule.js';

export { MissingHyperparameterError, type MemberHyperparameters } from '../runtime/hyper.js';
export { UnsupportedLayerError };

// netc's initializers by tfjs-layers' names. model.json then says what Keras means by them, which is what
// netc drew from; tfjs-layers itself draws its `normal` ones without Keras' truncation correction, which
// only matters to a model re-initialised in TF.js, never to the weights written.
const tfInitializers: Record<Initializer, string> = {
  glorot_uniform: 'glorotUniform',
  glorot_normal: 'glorotNormal',
  he_uniform: 'heUniform',
  he_normal: 'heNormal',
  lecun_uniform: 'leCunUniform',
  lecun_normal: 'leCunNormal',
  zeros: 'zeros',
  ones: 'ones',
  random_uniform: 'randomUniform',
  orthogonal: 'orthogonal',
  // Keras writes an lstm's forget-gate ones as unit_forget_bias beside a zeros bias initializer (the lstm's reference says it)
  unit_forget_bias: 'zeros',
};

/** The op's layers by its kind's reference rule, on its inputs, the first on them all, each after on the one before. */
function applyReference(tf: TF, ir: ModelIR, op: IrOp, hyperparameters: MemberHyperparameters, ins: tfjs.SymbolicTensor[]): tfjs.SymbolicTensor {
  const rule = layerKind(op.op)!.reference;
  if (!hasRule(rule)) throw new UnsupportedLayerError(`${op.name}: tfjs-layers cannot express a '${op.op}' layer: ${rule.unsupported}`);
  // without the initializers netc used, tfjs-layers would write its own defaults (glorotNormal)
  const initializers = op.params.map((param) => tfInitializers[ir.params.find((p) => p.name === param)!.init]);
  const [first, ...after] = rule.layers({ tf, name: op.name, args: memberArgs(op, hyperparameters), inputShapes: op.inputs.map((i) => ir.ops[i].shape), initializers });
  const out = first.apply(ins.length === 1 ? ins[0] : ins) as tfjs.SymbolicTensor;
  return after.reduce((x, layer) => layer.apply(x) as tfjs.SymbolicTensor, out);
}

/** Member with `hyperparameters` (its row of the checkpoint's `hyperparameters`) as a tfjs-layers model. */
export function toLayersModel(tf: TF, ir: ModelIR, hyperparameters: MemberHyperparameters): tfjs.LayersModel {
  const input = tf.input({ shape: ir.ops[0].shape, name: 'input' });
  const values: tfjs.SymbolicTensor[] = [input];
  for (const op of ir.ops.slice(1)) values.push(applyReference(tf, ir, op, hyperparameters, op.inputs.map((i) => values[i])));
  return tf.model({ inputs: input, outputs: values[ir.output], name: ir.name });
}

/** Sets one member's weights, in the IR's parameter order (which is Keras' order for each layer). */
export function setWeights(tf: TF, model: tfjs.LayersModel, ir: ModelIR, weights: Map<string, Float32Array>): void {
  for (const op of ir.ops.slice(1)) {
    if (!op.params.length) continue;
    const ts = op.params.map((name) => tf.tensor(weights.get(name)!, ir.params.find((p) => p.name === name)!.shape));
    model.getLayer(op.name).setWeights(ts);
    ts.forEach((t) => t.dispose());
  }
}

/** A member's weights read back from a layers model, by IR parameter name. */
export function getWeights(model: tfjs.LayersModel, ir: ModelIR): Map<string, Float32Array> {
  const out = new Map<string, Float32Array>();
  for (const op of ir.ops.slice(1)) {
    if (!op.params.length) continue;
    model
      .getLayer(op.name)
      .getWeights()
      .forEach((w, i) => out.set(op.params[i], w.dataSync() as Float32Array));
  }
  return out;
}
