// Lowers a checked model to the model IR: names the layers Keras-style and lists their parameters.
import type { CheckedModel } from '../check/program.js';
import { layerKind } from '../layers/registry.js';
import type { IrOp, IrParam, ModelIR } from './model-ir.js';

export function lowerModel(model: CheckedModel): ModelIR {
  const ops: IrOp[] = [{ id: 0, op: 'input', name: 'input', inputs: [], attrs: {}, shape: model.input, params: [] }];
  const params: IrParam[] = [];
  const counters = new Map<string, number>();
  for (const layer of model.layers) {
    const n = (counters.get(layer.kind.name) ?? 0) + 1;
    counters.set(layer.kind.name, n);
    const name = `${layer.kind.name}_${n}`;
    const inputs = layer.inputs.map((i) => i + 1);
    const inShapes = inputs.map((i) => ops[i].shape);
    const kind = layerKind(layer.kind.name)!;
    const specs = kind.params(layer.args, inShapes);
    // attributes in the kind's argument order, so printed IR does not depend on how the call was written
    const attrs = Object.fromEntries(kind.args.filter((a) => layer.args[a.name] !== undefined).map((a) => [a.name, layer.args[a.name]]));
    const names = specs.map((p) => `${name}/${p.name}`);
    specs.forEach((p, i) => params.push({ name: names[i], shape: p.shape, init: p.init, trainable: p.trainable, ...(layer.shared ? { shared: true as const } : {}) }));
    ops.push({ id: ops.length, op: layer.kind.name, name, label: layer.label, inputs, attrs, shape: layer.shape, params: names });
  }
  return { name: model.name, ops, params, output: ops.length - 1 };
}
