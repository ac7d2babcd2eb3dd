// maxpool1d(size, stride:, padding:) and avgpool1d(...): pooling windows over the steps of [steps, channels],
// as maxpool2d and avgpool2d on an image of one row (sequence.ts). The stride defaults to the window's size,
// as in Keras.
import { hasRule, type LayerKind } from './layer-kind.js';
import { paddingArg } from './common-args.js';
import { maxpool2d, avgpool2d } from './pool2d.js';
import { asRow, rowForward, rowWasm, rowWgsl, sequenceOutput } from './sequence.js';
import type { ExportContext, ExportNode } from '../interop/export-node.js';
import { windowPads } from '../interop/layout.js';
import { int, ints } from '../interop/onnx-graph.js';
import { selfOf } from './export-rule.js';

/** A pool's stride: its own, or its window's size (Keras's default). */
const strideOf = (attrs: Record<string, unknown>): number => (attrs.stride as number | undefined) ?? (attrs.size as number);

function pool1d(max: boolean): LayerKind {
  const name = max ? 'maxpool1d' : 'avgpool1d';
  const rows = max ? maxpool2d : avgpool2d;
  return {
    name,
    summary: `${max ? 'max' : 'average'} pooling over the steps of [steps, channels]`,
    args: [
      { name: 'size', type: { kind: 'int', min: 1 }, positional: true, default: 2, shapeAffecting: true },
      { name: 'stride', type: { kind: 'int', min: 1 }, shapeAffecting: true },
      paddingArg,
    ],
    reads: 'previous',
    shape(ctx) {
      const a = ctx.args.values;
      const steps = sequenceOutput(ctx, name, a.size as number, strideOf(a), a.padding as string);
      return steps === undefined ? undefined : [steps, ctx.inputs[0][1]];
    },
    params: () => [],
    widen: { keepsShared: true },
    forward: rowForward(rows.forward),
    wasm: hasRule(rows.wasm) ? rowWasm(rows.wasm) : rows.wasm,
    wgsl: rowWgsl(rows.wgsl),
    reference: {
      layers({ tf, args, name: layer }) {
        const config = { poolSize: args.size as number, strides: strideOf(args), padding: args.padding as 'valid' | 'same', name: layer };
        return [max ? tf.layers.maxPooling1d(config) : tf.layers.averagePooling1d(config)];
      },
    },
    export: { node: (ctx) => poolNode(ctx, max) },
  };
}

const AVG_POOL1D_SAME = `

def avg_pool1d_same(x, pads, kernel_size, stride):
    """Average pooling over TF's \`same\` windows of a sequence, whose padding is left out of each window's count."""
    total = F.avg_pool1d(F.pad(x, pads), kernel_size, stride)
    count = F.avg_pool1d(F.pad(torch.ones_like(x[:, :1]), pads), kernel_size, stride)
    return total / count
`;

/**
 * nn.MaxPool1d or nn.AvgPool1d (without the padding in its counts) on the sequence with its channels first,
 * [B, C, T], and back; over uneven padding an F.max_pool1d of the sequence padded by -inf, or model.py's
 * avg_pool1d_same. ONNX: MaxPool or AveragePool with 1-D attributes between two Transposes.
 */
function poolNode(ctx: ExportContext, max: boolean): ExportNode {
  const [size, stride] = [ctx.args.size as number, strideOf(ctx.args)];
  const [, , left, right] = windowPads(asRow(ctx.inputs[0].shape), [1, size], [1, stride], ctx.args.padding as string);
  const self = selfOf(ctx);
  const even = left === right;
  const padding = left ? `, padding=${left}` : '';
  const module = max ? `nn.MaxPool1d(${size}, stride=${stride}${padding})` : `nn.AvgPool1d(${size}, stride=${stride}${left ? `${padding}, count_include_pad=False` : ''})`;
  const uneven = (x: string) => (max ? `F.max_pool1d(F.pad(${x}, (${left}, ${right}), value=float("-inf")), ${size}, ${stride})` : `avg_pool1d_same(${x}, (${left}, ${right}), ${size}, ${stride})`);
  return {
    ...ctx.base,
    torch: {
      init: even ? [`${self} = ${module}`] : [],
      forward: ([x]) => `${even ? `${self}(${x}.transpose(1, 2))` : uneven(`${x}.transpose(1, 2)`)}.transpose(1, 2)`,
      ...(even || max ? {} : { helper: AVG_POOL1D_SAME }),
    },
    onnx({ g, xs, out }) {
      const first = g.op('Transpose', [xs[0]], [ints('perm', [0, 2, 1])]);
      const attrs = [ints('kernel_shape', [size]), ints('strides', [stride]), ints('pads', [left, right]), ...(max ? [] : [int('count_include_pad', 0)])];
      const pooled = g.op(max ? 'MaxPool' : 'AveragePool', [first], attrs);
      return g.op('Transpose', [pooled], [ints('perm', [0, 2, 1])], out);
    },
  };
}

export const maxpool1d = pool1d(true);
export const avgpool1d = pool1d(false);
