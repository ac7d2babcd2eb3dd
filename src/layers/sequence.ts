// The kinds over the steps of a sequence, [T, C] (conv1d, maxpool1d, avgpool1d), as their 2-D kinds on an
// image of one row, [1, T, C]: the same memory, a [1, k] window and a [1, s] stride. One example's values,
// a widened activation (whose steps axis is the second last in every layout: [B, T, C], [N, B, T, C],
// [B, T, N*C]) and a kernel ([k, C, F], with or without a member axis before it) each gain the row axis
// before their last two, and the output loses it again.
import { Messages } from '../diagnostics/messages.js';
import { fmtShape, type ShapeContext } from './layer-kind.js';
import { windowOutput } from './spatial.js';
import type { BoundValue } from '../core/arg-spec.js';
import type { Tensor } from '../kernels/tf.js';
import type { Act, ForwardContext, ForwardRules, Params } from './forward.js';
import type { WasmRule } from './wasm-rule.js';
import type { WgslOp } from '../wgsl/chain.js';
import type { SpatialLayer } from '../wgsl/conv.js';
import type { WgslLayerRule, WgslRule } from '../wgsl/rule.js';
import { hasRule, type Rule } from './layer-kind.js';

/** Checks a [T, C] input and returns the output's steps, or undefined after reporting. */
export function sequenceOutput(ctx: ShapeContext, what: string, window: number, stride: number, padding: string): number | undefined {
  const input = ctx.inputs[0];
  if (input.length !== 2) {
    const hint = input.length === 3 ? `; an image takes ${what.replace('1d', '2d')}` : input.length === 1 ? '; it applies to sequences, not flat features' : '';
    ctx.error(Messages.InputRank, undefined, what, 'a sequence [steps, channels]', fmtShape(input), hint);
    return undefined;
  }
  if (padding === 'valid' && window > input[0]) {
    ctx.error(Messages.KernelTooLarge, 'kernel' in ctx.args.spans ? 'kernel' : undefined, what, String(window), String(input[0]));
    return undefined;
  }
  const steps = windowOutput(input[0], window, stride, padding);
  if (steps < 1) {
    ctx.error(Messages.EmptyOutput, undefined, what, fmtShape([steps, input[1]]), fmtShape(input));
    return undefined;
  }
  return steps;
}

/** A [T, C] shape as the image [1, T, C]. */
export const asRow = (s: number[]): number[] => [1, ...s];

/** The 1-D kinds' window arguments as their 2-D kinds': kernel and stride (pools: size and stride) as [1, n]. */
export function rowArgs(attrs: Record<string, BoundValue>): Record<string, BoundValue> {
  const row = (v: BoundValue | undefined) => (v === undefined ? undefined : [1, v as number]);
  const out: Record<string, BoundValue> = { ...attrs };
  for (const name of ['kernel', 'stride', 'size']) if (attrs[name] !== undefined) out[name] = row(attrs[name])!;
  return out;
}

const toRow = (ctx: ForwardContext, t: Tensor): Tensor => ctx.tf.expandDims(t, t.rank - 2);
const fromRow = (ctx: ForwardContext, t: Tensor): Tensor => ctx.tf.squeeze(t, [t.rank - 3]);

/** The 2-D rules' context: the attributes in 2-D terms, the shapes as rows. */
function rowContext(ctx: ForwardContext): ForwardContext {
  return { ...ctx, attrs: rowArgs(ctx.attrs), inputShapes: ctx.inputShapes.map(asRow), outShape: asRow(ctx.outShape) };
}

/** The kernel with the row axis before its last three ([1, k, C, F], [N, 1, k, C, F]); other parameters as they are. */
function rowParams(ctx: ForwardContext, p: Params): Params {
  return Object.fromEntries(Object.entries(p).map(([name, t]) => [name, name === 'kernel' ? ctx.tf.expandDims(t, t.rank - 3) : t]));
}

/** A 2-D kind's forward rules as the 1-D kind's. */
export function rowForward(rules: ForwardRules): ForwardRules {
  const wide =
    (rule: (ctx: ForwardContext, inputs: Act[], params: Params) => Act) =>
    (ctx: ForwardContext, inputs: Act[], p: Params): Act => {
      const y = rule(rowContext(ctx), inputs.map((a) => ({ ...a, t: toRow(ctx, a.t) })), rowParams(ctx, p));
      return { ...y, t: fromRow(ctx, y.t) };
    };
  return {
    single: (ctx, inputs, p) => fromRow(ctx, rules.single(rowContext(ctx), inputs.map((t) => toRow(ctx, t)), rowParams(ctx, p))),
    grouped: wide(rules.grouped),
    blockdiag: wide(rules.blockdiag),
    ...(rules.shared ? { shared: wide(rules.shared) } : {}),
  };
}

/** A 2-D kind's generated-step rule as the 1-D kind's: its values are already the rows' memory. */
export function rowWasm(rule: WasmRule): WasmRule {
  return {
    ...(rule.whyNot ? { whyNot: (attrs, inputs) => rule.whyNot!(rowArgs(attrs), inputs.map(asRow)) } : {}),
    forward: (k) => rule.forward({ ...k, attrs: rowArgs(k.attrs), inputShapes: k.inputShapes.map(asRow), shape: asRow(k.shape) }),
    backward: (k) => rule.backward({ ...k, attrs: rowArgs(k.attrs), inputShapes: k.inputShapes.map(asRow), shape: asRow(k.shape) }),
  };
}

/** An op of the WGSL step as its 2-D kind's: the window arguments as pairs, the shape as a row. */
const rowOp = (op: WgslOp): WgslOp => ({ ...op, attrs: rowArgs(op.attrs), shape: op.shape.length === 2 ? asRow(op.shape) : op.shape });

/**
 * A 2-D kind's WGSL rule as the 1-D kind's: a batch of sequences [B, T, C] is a batch of images of one row in
 * the same memory, so the 2-D kernels run on it unchanged. The chain layer keeps the 1-D op (the step finds
 * it by its op); only the window its rule computes from the 2-D view differs.
 */
export function rowWgsl(rule: Rule<WgslRule>): Rule<WgslRule> {
  if (!hasRule(rule) || rule.alias) return rule;
  const inner = rule as WgslLayerRule<SpatialLayer>;
  const wrapped: WgslLayerRule<SpatialLayer> = {
    ...inner,
    ...(inner.whyNot ? { whyNot: (op, c) => inner.whyNot!(rowOp(op), { ...c, inputs: c.inputs.map(rowOp) }) } : {}),
    layer(b) {
      const inputs = b.inputs.map((i) => ({ ...i, shape: asRow(i.shape) }));
      return { ...inner.layer({ ...b, base: { ...b.base, op: rowOp(b.base.op) }, inputs }), op: b.base.op };
    },
  };
  return wrapped as WgslRule;
}
