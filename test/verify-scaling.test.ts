// The IR verifiers are linear in the model's size: `netc check` of a deep model must not take quadratic
// time (4,000 layers took 4.4 s, 16,000 took 104 s). Counted, not timed: how many elements of the op and
// parameter lists each verifier reads, for n and 4n layers.
import { describe, expect, it } from 'vitest';
import { compileText } from './helpers.js';
import { verifyEnsembleIR } from '../src/ensemble/verify.js';
import { verifyModelIR } from '../src/ir/verify.js';
import type { EnsembleIR } from '../src/ensemble/ensemble-ir.js';
import type { ModelIR } from '../src/ir/model-ir.js';

const deep = (layers: number) => `model m(input: [3]) {\n${'  dense(3, activation: relu)\n'.repeat(layers)}}\n`;

function ensembleOf(layers: number): EnsembleIR {
  const state = compileText(deep(layers), 'deep.net', { members: 2 });
  expect(state.ensemble, 'the deep model compiles').toBeDefined();
  return state.ensemble!;
}

/** `list` behind a proxy that counts each element read (by index, through a method or an iterator). */
function counted<T>(list: T[], reads: { n: number }): T[] {
  return new Proxy(list, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads.n++;
      return Reflect.get(target, key, receiver);
    },
  });
}

function modelReads(model: ModelIR, reads: { n: number }): ModelIR {
  return { ...model, ops: counted(model.ops, reads), params: counted(model.params, reads) };
}

/** Element reads of verifyModelIR and verifyEnsembleIR for a model of `layers` layers. */
function reads(layers: number): { model: number; ensemble: number } {
  const e = ensembleOf(layers);
  const model = { n: 0 };
  expect(verifyModelIR(modelReads(e.model, model))).toEqual([]);
  const ensemble = { n: 0 };
  expect(verifyEnsembleIR({ ...e, model: modelReads(e.model, ensemble), ops: counted(e.ops, ensemble), params: counted(e.params, ensemble) })).toEqual([]);
  return { model: model.n, ensemble: ensemble.n };
}

describe('the IR verifiers', () => {
  it('read the op and parameter lists a number of times linear in the layers: 4x the layers, at most 4.5x the reads', () => {
    const [small, large] = [reads(100), reads(400)];
    expect(small.model).toBeGreaterThan(0);
    expect(large.model / small.model).toBeLessThan(4.5);
    expect(large.ensemble / small.ensemble).toBeLessThan(4.5);
  });
});
