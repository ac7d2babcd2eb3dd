// lstm(units, sequences:): Keras' LSTM over a [T, F] sequence, tanh with sigmoid gates, its last state [units]
// or every step's [T, units]. Gates i, f, c, o in Keras' order: z = x · kernel + h · recurrent_kernel + bias,
// c = f * c + i * tanh(z_c), h = o * tanh(c); the forget gate's bias starts at 1 (Keras' unit_forget_bias).
import type { Initializer } from '../vocabulary/initializers.js';
import type { LayerKind } from './layer-kind.js';
import { matMul } from '../kernels/matmul.js';
import { initializerConfig } from './reference-rule.js';
import { selfOf } from './export-rule.js';
import type { ExportContext, ExportNode } from '../interop/export-node.js';
import { gateKernel, gateVector, gateWeight } from '../interop/layout.js';
import { kernelInits, onnxBias, onnxRecurrent, recurrentForward, recurrentShape, sequencesArg, unitsArg, type Cell } from './recurrent.js';

const cell: Cell = {
  states: 2,
  // in tfjs-layers' LSTMCell's order: the two products added, then the bias
  step(tf, x, [h, c], p) {
    const z = tf.add(tf.add(matMul(tf, x, p.kernel), matMul(tf, h, p.recurrent)), p.bias[0]);
    const [zi, zf, zc, zo] = tf.split(z, 4, -1);
    const next = tf.add(tf.mul(tf.sigmoid(zf), c), tf.mul(tf.sigmoid(zi), tf.tanh(zc)));
    return [tf.mul(tf.sigmoid(zo), tf.tanh(next)), next];
  },
};

export const lstm: LayerKind = {
  name: 'lstm',
  summary: 'long short-term memory over a [time, features] sequence: its last state, or every step\'s with sequences: true',
  args: [unitsArg, sequencesArg],
  reads: 'previous',
  shape: (ctx) => recurrentShape('lstm', ctx),
  params(args, [input]) {
    const u = args.units as number;
    return [
      { name: 'kernel', shape: [input[1], 4 * u], init: kernelInits.kernel, trainable: true },
      { name: 'recurrent_kernel', shape: [u, 4 * u], init: kernelInits.recurrent, trainable: true },
      { name: 'bias', shape: [4 * u], init: 'unit_forget_bias' satisfies Initializer, trainable: true },
    ];
  },
  widen: { keepsShared: false },
  forward: recurrentForward(cell),
  // read as "the fused step does not cover ...": another step will write the BPTT kernel
  wasm: { unsupported: "the lstm layer's backpropagation through time" },
  wgsl: { unsupported: 'no WGSL kernel backpropagates through time yet' },
  reference: {
    layers: (ctx) => [
      ctx.tf.layers.lstm({
        units: ctx.args.units as number,
        returnSequences: !!ctx.args.sequences,
        activation: 'tanh',
        recurrentActivation: 'sigmoid',
        unitForgetBias: true,
        ...initializerConfig(ctx, ['kernelInitializer', 'recurrentInitializer', 'biasInitializer']),
        name: ctx.name,
      }),
    ],
  },
  export: { node: exportNode },
};

// PyTorch's LSTM keeps Keras' gate order (i, f, g, o); ONNX's is i, o, f, c
const TORCH = [0, 1, 2, 3];
const ONNX = [0, 3, 1, 2];

/**
 * PyTorch's nn.LSTM (batch_first) and ONNX's LSTM: the kernels transposed to [4u, in], Keras' one bias as
 * bias_ih and zeros as bias_hh (their sum is the bias); `sequences: false` takes the last step's output.
 */
function exportNode(ctx: ExportContext): ExportNode {
  const [steps, features] = ctx.inputs[0].shape;
  const units = ctx.args.units as number;
  const sequences = !!ctx.args.sequences;
  const [kernel, recurrent, bias] = [ctx.param(0), ctx.param(1), ctx.param(2)];
  const self = selfOf(ctx);
  return {
    ...ctx.base,
    tensors: [
      { name: 'weight_ih_l0', shape: [4 * units, features], data: gateWeight(kernel, features, units, TORCH) },
      { name: 'weight_hh_l0', shape: [4 * units, units], data: gateWeight(recurrent, units, units, TORCH) },
      { name: 'bias_ih_l0', shape: [4 * units], data: bias },
      { name: 'bias_hh_l0', shape: [4 * units], data: new Float32Array(4 * units) },
    ],
    torch: {
      init: [`${self} = nn.LSTM(${features}, ${units}, batch_first=True)`],
      forward: ([v]) => `${self}(${v})[0]${sequences ? '' : '[:, -1]'}`,
    },
    onnx: (o) =>
      onnxRecurrent(
        o,
        'LSTM',
        { w: gateWeight(kernel, features, units, ONNX), r: gateWeight(recurrent, units, units, ONNX), b: onnxBias(gateVector(bias, units, ONNX), new Float32Array(4 * units)) },
        { steps, features, units, sequences },
        [],
      ),
    // a bias trained in PyTorch is the sum of its two
    params: (t) => [gateKernel(t('weight_ih_l0'), features, units, TORCH), gateKernel(t('weight_hh_l0'), units, units, TORCH), t('bias_ih_l0').map((b, i) => b + t('bias_hh_l0')[i])],
  };
}
