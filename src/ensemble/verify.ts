// What a valid ensemble IR is: the model IR it widens is valid, the op list matches it one for one, a
// shared value only comes from shared inputs (the input itself is shared, or per member under `split:`) through a layer that keeps sharing (one without parameters,
// or a `shared` layer), and each parameter's layout fits its lowering (`shared` exactly for the
// parameters of shared layers). A failure is a bug in netc.
import { layerKind } from '../layers/registry.js';
import { verifyModelIR } from '../ir/verify.js';
import type { EnsembleIR } from './ensemble-ir.js';

const allowed = { grouped: ['stacked', 'columns', 'shared'], blockdiag: ['columns', 'blockdiag', 'shared'], loop: ['separate', 'shared'] } as const;

export function verifyEnsembleIR(e: EnsembleIR): string[] {
  const problems = verifyModelIR(e.model).map((p) => `model: ${p}`);
  const fail = (msg: string) => problems.push(msg);
  if (!Number.isInteger(e.members) || e.members < 1) fail(`members must be >= 1, got ${e.members}`);
  if (e.ops.length !== e.model.ops.length) fail('ensemble ops do not match the model ops');
  // each check looks its op or parameter up in these, so that the whole check is linear in the model's size
  const sharedOps = new Set(e.params.filter((p) => p.layout === 'shared').map((p) => p.op));
  const owned = new Set(e.ops.flatMap((op) => op.params.map((name) => `${op.name}\u0000${name}`)));
  e.ops.forEach((op, i) => {
    if (op.name !== e.model.ops[i]?.name) fail(`op %${i}: ${op.name} does not match the model's ${e.model.ops[i]?.name}`);
    // the input is shared, unless every member reads its own (members trained on their own examples)
    if (i === 0) return;
    const kind = layerKind(op.op);
    const inputsShared = op.inputs.every((x) => e.ops[x]?.shared);
    const sharedWeights = sharedOps.has(op.name);
    const keeps = kind?.widen.keepsShared || sharedWeights;
    if (op.shared && !(inputsShared && keeps && e.lowering !== 'loop')) fail(`op %${i} (${op.name}) is shared, but its inputs or kind do not allow it`);
    if (!op.shared && inputsShared && keeps && e.lowering !== 'loop') fail(`op %${i} (${op.name}) reads only shared values through a layer that keeps them shared, but is not shared`);
  });
  if (e.params.length !== e.model.params.length) fail('ensemble params do not match the model params');
  for (const p of e.params) {
    if (!(allowed[e.lowering] as readonly string[]).includes(p.layout)) fail(`${p.name}: layout ${p.layout} under lowering ${e.lowering}`);
    if (p.layout === 'blockdiag' && p.shape.length < 2) fail(`${p.name}: a block-diagonal parameter needs two feature axes`);
    if ((p.layout === 'shared') !== !!p.shared) fail(`${p.name}: layout ${p.layout}, but the model IR says it is ${p.shared ? '' : 'not '}shared`);
    if (!owned.has(`${p.op}\u0000${p.name}`)) fail(`${p.name}: owned by no op`);
  }
  return problems;
}
