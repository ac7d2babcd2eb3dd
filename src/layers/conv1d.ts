// conv1d(filters, kernel:, stride:, padding:) over the steps of a sequence, [T, C] -> [T', filters] (Keras'
// Conv1D, whose kernel is [kernel, C, filters]). It is computed as conv2d on the sequence seen as an image of
// one row, [1, T, C], with a [1, kernel] window: the same memory, so every lowering's conv2d rule (and the
// generated step's) serves it, the 1-D values reshaped in and out (sequence.ts says how).
import type { Initializer } from '../vocabulary/initializers.js';
import { paddingArg, weightedArgs } from './common-args.js';
import { hasRule, type LayerKind } from './layer-kind.js';
import { conv2d } from './conv2d.js';
import { asRow, rowForward, rowWasm, rowWgsl, sequenceOutput } from './sequence.js';
import { weightedLayers } from './reference-rule.js';
import { activationArgOf, biasTensor, selfOf } from './export-rule.js';
import type { ExportContext, ExportNode } from '../interop/export-node.js';
import { convKernel as convKernelOf, convWeight, windowPads } from '../interop/layout.js';
import { onnxActivated, torchActivation } from '../interop/activation-forms.js';
import { ints } from '../interop/onnx-graph.js';

export const conv1d: LayerKind = {
  name: 'conv1d',
  summary: '1-D convolution over the steps of [steps, channels]',
  args: [
    { name: 'filters', type: { kind: 'int', min: 1 }, positional: true, required: true, shapeAffecting: true },
    { name: 'kernel', type: { kind: 'int', min: 1 }, default: 3, shapeAffecting: true },
    { name: 'stride', type: { kind: 'int', min: 1 }, default: 1, shapeAffecting: true },
    paddingArg,
    ...weightedArgs,
  ],
  reads: 'previous',
  shape(ctx) {
    const a = ctx.args.values;
    const steps = sequenceOutput(ctx, 'conv1d', a.kernel as number, a.stride as number, a.padding as string);
    return steps === undefined ? undefined : [steps, a.filters as number];
  },
  params(args, [input]) {
    const filters = args.filters as number;
    const kernel = { name: 'kernel', shape: [args.kernel as number, input[1], filters], init: args.init as Initializer, trainable: true };
    return args.bias ? [kernel, { name: 'bias', shape: [filters], init: args.bias_init as Initializer, trainable: true }] : [kernel];
  },
  // the kernel's last two axes are (channels, filters), as conv2d's: blockdiag folds them the same way
  widen: { keepsShared: false, kernels: ['kernel'] },
  forward: rowForward(conv2d.forward),
  wasm: hasRule(conv2d.wasm) ? rowWasm(conv2d.wasm) : conv2d.wasm,
  wgsl: rowWgsl(conv2d.wgsl),
  reference: {
    layers: (ctx) =>
      weightedLayers(ctx, (common) =>
        ctx.tf.layers.conv1d({ filters: ctx.args.filters as number, kernelSize: ctx.args.kernel as number, strides: ctx.args.stride as number, padding: ctx.args.padding as 'valid' | 'same', ...common }),
      ),
  },
  export: { node: exportNode },
};

/**
 * PyTorch's Conv1d (ONNX's Conv with 1-D attributes) on the sequence with its channels moved first, [B, C, T],
 * and back; the weight [out, in, kernel]. TF's `same` padding where it is uneven is an F.pad before it.
 */
function exportNode(ctx: ExportContext): ExportNode {
  const a = ctx.args;
  const [x] = ctx.inputs;
  const [k, s] = [a.kernel as number, a.stride as number];
  const shape = [1, k, x.shape[1], a.filters as number];
  const [, , left, right] = windowPads(asRow(x.shape), [1, k], [1, s], a.padding as string);
  const weight = { name: 'weight', shape: [shape[3], shape[2], k], data: convWeight(ctx.param(0), shape) };
  const bias = !!a.bias;
  const act = activationArgOf(a.activation);
  const self = selfOf(ctx);
  const even = left === right;
  return {
    ...ctx.base,
    act,
    tensors: [weight, ...biasTensor(ctx, 1)],
    torch: {
      init: [`${self} = nn.Conv1d(${shape[2]}, ${shape[3]}, kernel_size=${k}, stride=${s}${even && left ? `, padding=${left}` : ''}${bias ? '' : ', bias=False'})`],
      forward: ([v]) => {
        const first = `${v}.transpose(1, 2)`;
        return torchActivation(act, `${self}(${even ? first : `F.pad(${first}, (${left}, ${right}))`}).transpose(1, 2)`, ctx.base.shape);
      },
    },
    onnx({ g, xs, out, tensors }) {
      const first = g.op('Transpose', [xs[0]], [ints('perm', [0, 2, 1])]);
      const conv = g.op('Conv', [first, ...tensors()], [ints('kernel_shape', [k]), ints('strides', [s]), ints('pads', [left, right])]);
      return onnxActivated(g, act, ctx.base.shape, out, (name) => g.op('Transpose', [conv], [ints('perm', [0, 2, 1])], name));
    },
    params: (t) => [convKernelOf(t('weight'), shape), ...(bias ? [t('bias')] : [])],
  };
}
