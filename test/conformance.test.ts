// Conformance over the registry, as JAX answers a primitive without a batching rule ("Batching rule for
// 'foo' not implemented"): every layer kind, activation, loss and optimizer netc has must have an
// equivalence case, and every layer kind a rule for each target or a stated reason why it has none. The
// covered names are read from the equivalence cases themselves (test/equivalence/cases.ts, each compiled
// to its model IR and train block), never from a list kept beside them.
import { describe, expect, it } from 'vitest';
import { compile, type CompileState } from '../src/pipeline.js';
import { layerKinds } from '../src/layers/registry.js';
import type { LayerKind } from '../src/layers/layer-kind.js';
import { activations } from '../src/vocabulary/activations.js';
import { losses } from '../src/vocabulary/losses.js';
import { optimizers } from '../src/vocabulary/optimizers.js';
import { layerCases, lossCases, lossSource, optimizerCases, optimizerModels, optimizerSource, source } from './equivalence/cases.js';

/**
 * The targets a layer kind answers for, and what a rule for each must provide: the op path (TF.js ops,
 * alone and widened), the generated step (wasm), the WGSL step, the tfjs-layers reference and the export.
 */
const targets: Record<string, { what: string; provides: string[]; required?: true }> = {
  forward: { what: 'Op-path (forward)', provides: ['single', 'grouped', 'blockdiag'], required: true },
  wasm: { what: 'Generated-step (wasm)', provides: ['forward', 'backward'] },
  wgsl: { what: 'WGSL-step (wgsl)', provides: [] },
  reference: { what: 'tfjs-layers reference', provides: ['layers'] },
  export: { what: 'Export', provides: ['node'] },
};

/** A case's source checked and lowered: its model IR and its train block. */
function lowered(name: string, text: string): CompileState {
  const state = compile(text, `${name}.net`, { after: 'lower' });
  if (!state.ir) throw new Error(`the equivalence case '${name}' does not compile: ${state.diagnostics.map((d) => d.message).join('; ')}`);
  return state;
}

const layerIrs = Object.entries(layerCases).map(([name, c]) => lowered(name, source(c)).ir!);
const ops = layerIrs.flatMap((ir) => ir.ops.slice(1));
/** the layer kinds some equivalence case uses */
const kindsCovered = new Set(ops.map((op) => op.op));
/** the activations some equivalence case gives a layer's `activation:` argument (as layers, they are kinds) */
const activationsCovered = new Set(ops.flatMap((op) => (op.attrs.activation === undefined ? [] : [String(op.attrs.activation)])));
const lossesCovered = new Set(Object.entries(lossCases).map(([name, c]) => lowered(name, lossSource(c, [0.1])).program!.train!.loss.name));
const optimizersCovered = new Set(Object.values(optimizerModels).flatMap((m) => Object.entries(optimizerCases).map(([name, c]) => lowered(name, optimizerSource(m, c)).program!.train!.optimizer.name)));

/** What the kind lacks, one line each, naming the kind and the target. */
function missingRules(kind: LayerKind): string[] {
  const problems: string[] = [];
  for (const [target, { what, provides, required }] of Object.entries(targets)) {
    const rule = (kind as unknown as Record<string, unknown>)[target];
    if (rule === undefined || rule === null || typeof rule !== 'object') {
      problems.push(`${what} rule for '${kind.name}' not implemented: give the kind \`${target}:\` in its file${required ? '' : `, or \`${target}: { unsupported: 'why' }\``}`);
      continue;
    }
    if ('unsupported' in rule) {
      const why = (rule as { unsupported: unknown }).unsupported;
      if (required) problems.push(`${what} rule for '${kind.name}' is unsupported, but every kind must have one`);
      else if (typeof why !== 'string' || !why.trim()) problems.push(`${what} rule for '${kind.name}' is unsupported without a reason: say why in \`unsupported\``);
      continue;
    }
    const lacking = provides.filter((f) => typeof (rule as Record<string, unknown>)[f] !== 'function');
    if (lacking.length) problems.push(`${what} rule for '${kind.name}' has no ${lacking.join(', ')}`);
  }
  if (!kindsCovered.has(kind.name)) problems.push(`Equivalence case for layer kind '${kind.name}' not implemented: add one to test/equivalence/cases.ts (layerCases)`);
  return problems;
}

describe('every layer kind has an equivalence case and a rule for each target, or says why not', () => {
  it.each(layerKinds.map((k) => k.name))('%s', (name) => {
    const problems = missingRules(layerKinds.find((k) => k.name === name)!);
    if (problems.length) throw new Error(problems.join('\n'));
  });
});

describe('every activation, loss and optimizer has an equivalence case', () => {
  const required: [string, readonly string[], Set<string>, string][] = [
    ['activation', activations, activationsCovered, "a layer's `activation:` in layerCases"],
    ['loss', losses.map((l) => l.name), lossesCovered, 'lossCases'],
    ['optimizer', optimizers.map((o) => o.name), optimizersCovered, 'optimizerCases'],
  ];
  it.each(required)('%s', (what, names, covered, where) => {
    const missing = names.filter((n) => !covered.has(n));
    if (missing.length) throw new Error(missing.map((n) => `Equivalence case for ${what} '${n}' not implemented: add one to test/equivalence/cases.ts (${where})`).join('\n'));
  });
});

describe('the conformance check itself', () => {
  it('reads the cases: it sees the kinds, activations, losses and optimizers they use', () => {
    expect(kindsCovered.has('dense') && kindsCovered.has('conv2d') && kindsCovered.has('leaky_relu')).toBe(true);
    expect(activationsCovered.has('linear') && activationsCovered.has('gelu')).toBe(true);
    expect(lossesCovered.has('huber') && optimizersCovered.has('adamw')).toBe(true);
  });

  it("names the kind and the target that a kind without a rule lacks, and a reason that is not given", () => {
    const { wasm: _, ...withoutWasm } = layerKinds.find((k) => k.name === 'dense')!;
    const kind = { ...withoutWasm, name: 'foo', export: { unsupported: ' ' } } as unknown as LayerKind;
    const problems = missingRules(kind);
    expect(problems).toContain("Generated-step (wasm) rule for 'foo' not implemented: give the kind `wasm:` in its file, or `wasm: { unsupported: 'why' }`");
    expect(problems).toContain("Export rule for 'foo' is unsupported without a reason: say why in `unsupported`");
    expect(problems).toContain("Equivalence case for layer kind 'foo' not implemented: add one to test/equivalence/cases.ts (layerCases)");
  });
});
