// States what a valid model IR is, and checks it between passes: ids in order, inputs that exist and
// come earlier, shapes that the layer's own shape rule reproduces, and parameters named and shaped as
// the layer kind says. A failure is a bug in netc, never a user mistake.
import { DiagnosticSink } from '../diagnostics/sink.js';
import { layerKind } from '../layers/registry.js';
import { fmtShape } from '../layers/layer-kind.js';
import type { ModelIR } from './model-ir.js';

export function verifyModelIR(ir: ModelIR): string[] {
  const problems: string[] = [];
  const fail = (msg: string) => problems.push(msg);
  if (ir.ops[0]?.op !== 'input') fail('op 0 must be the input');
  // parameters by name: each op looks its own up here, so that the check is linear in the model's size
  const byName = new Map(ir.params.map((p) => [p.name, p]));
  if (byName.size !== ir.params.length) fail('parameter names must be unique');
  const used = new Set<string>();
  ir.ops.forEach((op, i) => {
    const where = `op %${i} (${op.name})`;
    if (op.id !== i) fail(`${where}: id ${op.id} out of order`);
    if (!op.shape.length || op.shape.some((d) => !Number.isInteger(d) || d < 1)) fail(`${where}: bad shape ${fmtShape(op.shape)}`);
    if (i === 0) return;
    if (op.inputs.some((x) => !(x >= 0 && x < i))) fail(`${where}: inputs must be earlier ops, got ${op.inputs.join(', ')}`);
    const kind = layerKind(op.op);
    if (!kind) return void fail(`${where}: unknown op '${op.op}'`);
    const inputs = op.inputs.map((x) => ir.ops[x]?.shape ?? []);
    const errors = new DiagnosticSink('<verify>');
    const shape = kind.shape({ args: { values: op.attrs, spans: {}, rest: [] }, inputs, span: { start: 0, length: 0 }, error: (def) => errors.report(def, { start: 0, length: 0 }) });
    if (!shape || fmtShape(shape) !== fmtShape(op.shape)) fail(`${where}: shape ${fmtShape(op.shape)} but its shape rule gives ${shape ? fmtShape(shape) : 'an error'}`);
    const expected = kind.params(op.attrs, inputs).map((p) => ({ ...p, name: `${op.name}/${p.name}` }));
    if (expected.map((p) => p.name).join() !== op.params.join()) fail(`${where}: parameters ${op.params.join(', ')} but the kind gives ${expected.map((p) => p.name).join(', ')}`);
    for (const p of expected) {
      const actual = byName.get(p.name);
      if (!actual) fail(`${where}: parameter ${p.name} is missing`);
      else if (fmtShape(actual.shape) !== fmtShape(p.shape)) fail(`${where}: ${p.name} has shape ${fmtShape(actual.shape)}, expected ${fmtShape(p.shape)}`);
      used.add(p.name);
    }
    const shared = op.params.filter((name) => byName.get(name)?.shared);
    if (shared.length && shared.length !== op.params.length) fail(`${where}: some of its parameters are shared and some are not`);
    if (shared.length && !kind.forward.shared) fail(`${where}: a ${op.op} layer has no rule for shared parameters`);
  });
  for (const p of ir.params) if (!used.has(p.name)) fail(`parameter ${p.name} belongs to no op`);
  if (!(ir.output > 0 && ir.output < ir.ops.length)) fail(`output %${ir.output} is not a layer`);
  return problems;
}
