// gru(units, sequences:, reset_after:): Keras' GRU over a [T, F] sequence, tanh with sigmoid gates, its last
// state [units] or every step's [T, units]. Gates z, r, h in Keras' order; h = z * h + (1 - z) * candidate.
//
// reset_after (the default, Keras' and PyTorch's form): the candidate is tanh(x · W_h + b_h + r * (h · U_h +
// b'_h)), with a bias [2, 3u] (input, recurrent). reset_after: false: tanh(x · W_h + (r * h) · U_h + b_h), the
// reset applied before the recurrent product, with one bias [3u]; it is tfjs-layers' only GRU.
import type { LayerKind } from './layer-kind.js';
import { matMul } from '../kernels/matmul.js';
import { initializerConfig, UnsupportedLayerError } from './reference-rule.js';
import { selfOf } from './export-rule.js';
import type { ExportContext, ExportNode, ExportTensor } from '../interop/export-node.js';
import { gateKernel, gateVector, gateWeight, netcGateVector } from '../interop/layout.js';
import { int } from '../interop/onnx-graph.js';
import { kernelInits, onnxBias, onnxRecurrent, recurrentForward, recurrentShape, sequencesArg, unitsArg, type Cell } from './recurrent.js';
import type { TF, Tensor } from '../kernels/tf.js';

/** h = z * h + (1 - z) * candidate, as tfjs-layers' GRUCell writes it. */
const mix = (tf: TF, z: Tensor, h: Tensor, candidate: Tensor) => tf.add(tf.mul(z, h), tf.mul(tf.add(1, tf.neg(z)), candidate));

/** reset_after: false, in tfjs-layers' GRUCell's order: the input's product and bias, then the recurrent products. */
const resetBefore: Cell = {
  states: 1,
  step(tf, x, [h], p, units) {
    const [xz, xr, xh] = tf.split(tf.add(matMul(tf, x, p.kernel), p.bias[0]), 3, -1);
    const [uzr, uh] = tf.split(p.recurrent, [2 * units, units], -1);
    const [hz, hr] = tf.split(matMul(tf, h, uzr), 2, -1);
    const z = tf.sigmoid(tf.add(xz, hz));
    const r = tf.sigmoid(tf.add(xr, hr));
    return [mix(tf, z, h, tf.tanh(tf.add(xh, matMul(tf, tf.mul(r, h), uh))))];
  },
};

/** reset_after: true: both products with their biases, the reset applied to the recurrent one's candidate part. */
const resetAfter: Cell = {
  states: 1,
  step(tf, x, [h], p) {
    const [xz, xr, xh] = tf.split(tf.add(matMul(tf, x, p.kernel), p.bias[0]), 3, -1);
    const [hz, hr, hh] = tf.split(tf.add(matMul(tf, h, p.recurrent), p.bias[1]), 3, -1);
    const z = tf.sigmoid(tf.add(xz, hz));
    const r = tf.sigmoid(tf.add(xr, hr));
    return [mix(tf, z, h, tf.tanh(tf.add(xh, tf.mul(r, hh))))];
  },
};

const after = recurrentForward(resetAfter);
const before = recurrentForward(resetBefore);
const chosen = (attrs: Record<string, unknown>) => (attrs.reset_after ? after : before);

export const gru: LayerKind = {
  name: 'gru',
  summary: 'gated recurrent unit over a [time, features] sequence: its last state, or every step\'s with sequences: true',
  args: [unitsArg, sequencesArg, { name: 'reset_after', type: { kind: 'bool' }, default: true, shapeAffecting: true }],
  reads: 'previous',
  shape: (ctx) => recurrentShape('gru', ctx),
  params(args, [input]) {
    const u = args.units as number;
    return [
      { name: 'kernel', shape: [input[1], 3 * u], init: kernelInits.kernel, trainable: true },
      { name: 'recurrent_kernel', shape: [u, 3 * u], init: kernelInits.recurrent, trainable: true },
      { name: 'bias', shape: args.reset_after ? [2, 3 * u] : [3 * u], init: 'zeros', trainable: true },
    ];
  },
  widen: { keepsShared: false },
  forward: {
    single: (ctx, x, p) => chosen(ctx.attrs).single(ctx, x, p),
    grouped: (ctx, x, p) => chosen(ctx.attrs).grouped(ctx, x, p),
    blockdiag: (ctx, x, p) => chosen(ctx.attrs).blockdiag(ctx, x, p),
    shared: (ctx, x, p) => chosen(ctx.attrs).shared!(ctx, x, p),
  },
  // read as "the fused step does not cover ...": another step will write the BPTT kernel
  wasm: { unsupported: "the gru layer's backpropagation through time" },
  wgsl: { unsupported: 'no WGSL kernel backpropagates through time yet' },
  reference: {
    layers(ctx) {
      // tfjs-layers' GRUCell throws on resetAfter: TF.js has the reset-before form only
      if (ctx.args.reset_after) {
        throw new UnsupportedLayerError(
          `${ctx.name}: TF.js cannot load a gru with reset_after: true (tfjs-layers' GRU has only the reset_after: false form); extract it with --format pytorch or --format onnx, or train gru(..., reset_after: false)`,
        );
      }
      return [
        ctx.tf.layers.gru({
          units: ctx.args.units as number,
          returnSequences: !!ctx.args.sequences,
          activation: 'tanh',
          recurrentActivation: 'sigmoid',
          ...initializerConfig(ctx, ['kernelInitializer', 'recurrentInitializer', 'biasInitializer']),
          name: ctx.name,
        }),
      ];
    },
  },
  export: { node: exportNode },
};

// PyTorch's GRU orders its gates r, z, n where Keras has z, r, h; ONNX's GRU keeps Keras' z, r, h
const TORCH = [1, 0, 2];
const ONNX = [0, 1, 2];

/**
 * ONNX's GRU: linear_before_reset 1 is reset_after, 0 is reset_after: false, the recurrent bias zeros. PyTorch:
 * nn.GRU (batch_first) is the reset_after form, its bias_ih and bias_hh Keras' two rows; reset_after: false
 * is no nn.GRU (its candidate is r * (W_hn h + b_hn), the reset after the product), so model.py defines
 * GRUResetBefore, which computes it step by step on Keras' parameters as they are.
 */
function exportNode(ctx: ExportContext): ExportNode {
  const [steps, features] = ctx.inputs[0].shape;
  const units = ctx.args.units as number;
  const sequences = !!ctx.args.sequences;
  const resetAfter = !!ctx.args.reset_after;
  const [kernel, recurrent, bias] = [ctx.param(0), ctx.param(1), ctx.param(2)];
  const g = 3 * units;
  const [biasIn, biasRec] = resetAfter ? [bias.subarray(0, g), bias.subarray(g)] : [bias, new Float32Array(g)];
  const self = selfOf(ctx);
  const onnx: ExportNode['onnx'] = (o) =>
    onnxRecurrent(
      o,
      'GRU',
      { w: gateWeight(kernel, features, units, ONNX), r: gateWeight(recurrent, units, units, ONNX), b: onnxBias(biasIn, biasRec) },
      { steps, features, units, sequences },
      [int('linear_before_reset', resetAfter ? 1 : 0)],
    );
  if (!resetAfter) {
    return {
      ...ctx.base,
      tensors: [
        { name: 'kernel', shape: [features, g], data: kernel },
        { name: 'recurrent_kernel', shape: [units, g], data: recurrent },
        { name: 'bias', shape: [g], data: bias },
      ],
      torch: { init: [`${self} = GRUResetBefore(${features}, ${units}, sequences=${sequences ? 'True' : 'False'})`], forward: ([v]) => `${self}(${v})`, helper: GRU_RESET_BEFORE },
      onnx,
      params: (t) => [t('kernel'), t('recurrent_kernel'), t('bias')],
    };
  }
  const tensors: ExportTensor[] = [
    { name: 'weight_ih_l0', shape: [g, features], data: gateWeight(kernel, features, units, TORCH) },
    { name: 'weight_hh_l0', shape: [g, units], data: gateWeight(recurrent, units, units, TORCH) },
    { name: 'bias_ih_l0', shape: [g], data: gateVector(biasIn, units, TORCH) },
    { name: 'bias_hh_l0', shape: [g], data: gateVector(biasRec, units, TORCH) },
  ];
  return {
    ...ctx.base,
    tensors,
    torch: { init: [`${self} = nn.GRU(${features}, ${units}, batch_first=True)`], forward: ([v]) => `${self}(${v})[0]${sequences ? '' : '[:, -1]'}` },
    onnx,
    params: (t) => {
      const rows = new Float32Array(2 * g);
      rows.set(netcGateVector(t('bias_ih_l0'), units, TORCH));
      rows.set(netcGateVector(t('bias_hh_l0'), units, TORCH), g);
      return [gateKernel(t('weight_ih_l0'), features, units, TORCH), gateKernel(t('weight_hh_l0'), units, units, TORCH), rows];
    },
  };
}

/** model.py's module for gru(reset_after: false), Keras' cell on Keras' parameters. */
const GRU_RESET_BEFORE = `

class GRUResetBefore(nn.Module):
    """Keras' GRU with reset_after=False (the reset gate applied before the recurrent product), which
    nn.GRU cannot express; gates z, r, h in Keras' order, batch first, from a zero state."""

    def __init__(self, features, units, sequences):
        super().__init__()
        self.units = units
        self.sequences = sequences
        self.kernel = nn.Parameter(torch.zeros(features, 3 * units))
        self.recurrent_kernel = nn.Parameter(torch.zeros(units, 3 * units))
        self.bias = nn.Parameter(torch.zeros(3 * units))

    def forward(self, x):
        u = self.units
        h = x.new_zeros(x.shape[0], u)
        xs = x @ self.kernel + self.bias
        outputs = []
        for t in range(x.shape[1]):
            xz, xr, xh = xs[:, t].split(u, dim=-1)
            hz, hr = (h @ self.recurrent_kernel[:, : 2 * u]).split(u, dim=-1)
            z = torch.sigmoid(xz + hz)
            r = torch.sigmoid(xr + hr)
            h = z * h + (1 - z) * torch.tanh(xh + (r * h) @ self.recurrent_kernel[:, 2 * u :])
            outputs.append(h)
        return torch.stack(outputs, dim=1) if self.sequences else h
`;
