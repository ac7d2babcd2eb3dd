// One member as an ordinary tfjs-layers model: the same graph built from TF.js's own layers, with
// Keras-style names. It is the reference that the fused members are tested against, and what
// extraction writes out. Every layer argument `vary` may change is the member's own value, and every
// initializer is the one netc drew the member's weights from, so the model is that member exactly.
import type * as tfjs from '@tensorflow/tfjs';
import type { IrOp, ModelIR } from '../ir/model-ir.js';
import { memberArgs, type MemberHyperparameters } from '../runtime/hyper.js';
import type { Initializer } from '../vocabulary/initializers.js';
import type { TF } from '../kernels/tf.js';
import { LEAKY_RELU_ALPHA } from '../kernels/activations.js';

export { MissingHyperparameterError, type MemberHyperparameters } from '../runtime/hyper.js';

/** A layer or activation that tfjs-layers cannot express. */
export class UnsupportedLayerError extends Error {
  override name = 'UnsupportedLayerError';
}


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
};

/**
 * The initializers netc used for the op's parameters, under the layer config's names (`kernelInitializer`,
 * ...), in the op's parameter order; without them tfjs-layers would write its own defaults (glorotNormal).
 */
function initializers(ir: ModelIR, op: IrOp, names: string[]): Record<string, never> {
  const init = (param: string) => tfInitializers[ir.params.find((p) => p.name === param)!.init];
  return Object.fromEntries(op.params.map((param, i) => [names[i], init(param)])) as Record<string, never>;
}

// the config names of batchnorm's parameters' initializers (layernorm has the first two), in netc's order
const batchnormInitializers = ['gammaInitializer', 'betaInitializer', 'movingMeanInitializer', 'movingVarianceInitializer'];

// activations tfjs-layers knows by name (leaky_relu is a layer there, not an activation)
const tfActivations = new Set(['linear', 'relu', 'sigmoid', 'tanh', 'softmax', 'elu', 'gelu', 'swish']);

/**
 * A weighted layer's `activation:` as tfjs-layers' activation argument. leaky_relu has none there: the
 * layer is written linear and followed by the LeakyReLU layer of activationAfter.
 */
function activation(name: unknown, where: string): string {
  const a = String(name ?? 'linear');
  if (a === 'leaky_relu') return 'linear';
  if (!tfActivations.has(a)) throw new UnsupportedLayerError(`${where}: tfjs-layers has no '${a}' activation for a layer's activation argument; write ${a}() as a layer of its own`);
  return a;
}

/**
 * The layer that applies a weighted layer's leaky_relu `activation:` after it (with netc's alpha, not
 * tfjs-layers' default 0.3), named `NAME_leaky_relu`; it has no weights, so the weights keep their names.
 */
function activationAfter(tf: TF, name: unknown, layerName: string): tfjs.layers.Layer | undefined {
  return name === 'leaky_relu' ? tf.layers.leakyReLU({ alpha: LEAKY_RELU_ALPHA, name: `${layerName}_leaky_relu` }) : undefined;
}

/** Member with `hyperparameters` (its row of the checkpoint's `hyperparameters`) as a tfjs-layers model. */
export function toLayersModel(tf: TF, ir: ModelIR, hyperparameters: MemberHyperparameters): tfjs.LayersModel {
  const input = tf.input({ shape: ir.ops[0].shape, name: 'input' });
  const values: tfjs.SymbolicTensor[] = [input];
  for (const op of ir.ops.slice(1)) {
    const a = memberArgs(op, hyperparameters);
    const name = op.name;
    const weighted = initializers(ir, op, ['kernelInitializer', 'biasInitializer']);
    const ins = op.inputs.map((i) => values[i]);
    let layer: tfjs.layers.Layer;
    switch (op.op) {
      case 'dense':
        layer = tf.layers.dense({ units: a.units as number, activation: activation(a.activation, name) as never, useBias: a.bias as boolean, ...weighted, name });
        break;
      case 'conv2d':
        layer = tf.layers.conv2d({
          filters: a.filters as number,
          kernelSize: a.kernel as number[],
          strides: a.stride as number[],
          padding: a.padding as 'valid' | 'same',
          activation: activation(a.activation, name) as never,
          useBias: a.bias as boolean,
          ...weighted,
          name,
        });
        break;
      case 'maxpool2d':
      case 'avgpool2d': {
        const config = { poolSize: a.size as [number, number], strides: (a.stride ?? a.size) as [number, number], padding: a.padding as 'valid' | 'same', name };
        layer = op.op === 'maxpool2d' ? tf.layers.maxPooling2d(config) : tf.layers.averagePooling2d(config);
        break;
      }
      case 'global_avg_pool':
        layer = tf.layers.globalAveragePooling2d({ name });
        break;
      case 'global_max_pool':
        layer = tf.layers.globalMaxPooling2d({ name });
        break;
      case 'flatten':
        layer = tf.layers.flatten({ name });
        break;
      case 'dropout':
        layer = tf.layers.dropout({ rate: a.rate as number, name });
        break;
      case 'batchnorm':
        layer = tf.layers.batchNormalization({ axis: -1, momentum: a.momentum as number, epsilon: a.epsilon as number, ...initializers(ir, op, batchnormInitializers), name });
        break;
      case 'layernorm':
        layer = tf.layers.layerNormalization({ axis: -1, epsilon: a.epsilon as number, ...initializers(ir, op, batchnormInitializers.slice(0, 2)), name });
        break;
      case 'add':
        layer = tf.layers.add({ name });
        break;
      case 'concat':
        layer = tf.layers.concatenate({ axis: -1, name });
        break;
      case 'leaky_relu':
        layer = tf.layers.leakyReLU({ alpha: a.alpha as number, name });
        break;
      default:
        if (!tfActivations.has(op.op)) throw new UnsupportedLayerError(`${name}: tfjs-layers cannot express a '${op.op}' layer`);
        layer = tf.layers.activation({ activation: op.op as never, name });
    }
    const out = layer.apply(ins.length === 1 ? ins[0] : ins) as tfjs.SymbolicTensor;
    const after = activationAfter(tf, a.activation, name);
    values.push(after ? (after.apply(out) as tfjs.SymbolicTensor) : out);
  }
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
