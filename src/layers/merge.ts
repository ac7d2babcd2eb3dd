// add(a, b, ...) and concat(a, b, ...): merge labelled outputs, for residual and branching graphs.
import { Messages } from '../diagnostics/messages.js';
import { fmtShape, type LayerKind } from './layer-kind.js';

export const add: LayerKind = {
  name: 'add',
  summary: 'element-wise sum of labelled outputs of one shape',
  args: [],
  reads: 'labels',
  shape(ctx) {
    const [first, ...rest] = ctx.inputs;
    if (rest.some((s) => fmtShape(s) !== fmtShape(first))) {
      ctx.error(Messages.ShapeMismatch, undefined, 'add', ctx.inputs.map(fmtShape).join(' and '));
      return undefined;
    }
    return first;
  },
  params: () => [],
};

export const concat: LayerKind = {
  name: 'concat',
  summary: 'join labelled outputs along the last axis',
  args: [],
  reads: 'labels',
  shape(ctx) {
    const [first, ...rest] = ctx.inputs;
    const lead = (s: number[]) => fmtShape(s.slice(0, -1));
    if (rest.some((s) => s.length !== first.length || lead(s) !== lead(first))) {
      ctx.error(Messages.ShapeMismatch, undefined, 'concat (all but the last axis)', ctx.inputs.map(fmtShape).join(' and '));
      return undefined;
    }
    return [...first.slice(0, -1), ctx.inputs.reduce((n, s) => n + s[s.length - 1], 0)];
  },
  params: () => [],
};
