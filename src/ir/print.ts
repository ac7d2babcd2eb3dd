// A stable text form of the model IR, for `netc ir` and golden files.
import type { BoundValue } from '../core/arg-spec.js';
import { fmtShape } from '../layers/layer-kind.js';
import { parameterCount, sharedCount, type ModelIR } from './model-ir.js';

export function formatAttr(v: BoundValue): string {
  if (Array.isArray(v)) return `[${v.join(', ')}]`;
  if (typeof v === 'object') return 'label' in v ? v.label : `${v.amount} ${v.unit}`;
  if (typeof v === 'string') return v;
  return String(v);
}

export function printModelIR(ir: ModelIR): string {
  const lines = [`model ${ir.name}`];
  const paramOf = new Map(ir.params.map((p) => [p.name, p]));
  for (const op of ir.ops) {
    const ins = op.inputs.map((i) => `%${i}`);
    const attrs = Object.entries(op.attrs).map(([k, v]) => `${k}: ${formatAttr(v)}`);
    const label = op.label ? `  # ${op.label}` : '';
    lines.push(`  %${op.id} = ${op.name}: ${op.op}(${[...ins, ...attrs].join(', ')}) -> ${fmtShape(op.shape)}${label}`);
    for (const name of op.params) {
      const p = paramOf.get(name)!;
      lines.push(`      param ${p.name} ${fmtShape(p.shape)} init ${p.init}${p.trainable ? '' : ' (not trained)'}${p.shared ? ' shared' : ''}`);
    }
  }
  lines.push(`  output %${ir.output} ${fmtShape(ir.ops[ir.output].shape)}`);
  const shared = sharedCount(ir);
  lines.push(`  parameters ${parameterCount(ir)} per member${shared ? ` (${shared} of them shared by all members)` : ''}`);
  return lines.join('\n') + '\n';
}
