// A stable text form of the ensemble IR, for `netc ir --after widen` and golden files.
import { fmtShape } from '../layers/layer-kind.js';
import { formatAttr } from '../ir/print.js';
import { fusedShape } from '../core/layout.js';
import type { EnsembleIR, WideParam } from './ensemble-ir.js';

const batch = (shape: number[]) => `[B, ${shape.join(', ')}]`;

export function printEnsembleIR(e: EnsembleIR): string {
  const n = e.members;
  const lines = [`ensemble ${e.model.name} x${n} (lowering: ${e.lowering})`];
  const paramsOf = new Map<string, WideParam[]>();
  for (const p of e.params) paramsOf.set(p.op, [...(paramsOf.get(p.op) ?? []), p]);
  for (const op of e.ops) {
    const ins = op.inputs.map((i) => `%${i}`);
    const attrs = Object.entries(op.attrs).map(([k, v]) => `${k}: ${formatAttr(v)}`);
    const where = op.shared ? 'shared' : 'per member';
    const value = op.shared ? batch(op.shape) : e.lowering === 'grouped' ? `[N, ${batch(op.shape).slice(1)}` : e.lowering === 'blockdiag' ? blockValue(op.shape) : `N x ${batch(op.shape)}`;
    lines.push(`  %${op.id} = ${op.name}: ${op.op}(${[...ins, ...attrs].join(', ')}) -> ${value} ${where}`);
    for (const p of paramsOf.get(op.name) ?? []) {
      const shape = p.layout === 'separate' ? `N x ${fmtShape(p.shape)}` : fmtShape(fusedShape(p.layout, p.shape, n));
      lines.push(`      param ${p.name} ${shape} ${p.layout}${p.trainable ? '' : ' (not trained)'}`);
    }
  }
  return lines.join('\n').replaceAll('[N, ', `[N=${n}, `) + '\n';
}

function blockValue(shape: number[]): string {
  const last = shape.length - 1;
  return `[B, ${shape.map((d, i) => (i === last ? `N*${d}` : String(d))).join(', ')}]`;
}
