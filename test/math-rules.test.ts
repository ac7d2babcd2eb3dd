// The elementwise rules written once (src/math/): every activation, loss and optimizer of the language has
// one, the optimizers' rules read and write exactly the slots and hyperparameters src/vocabulary/optimizers.ts
// lays out, the steps' coverage tables are the rules' names, and the WGSL renderer's text keeps each rule's
// operation order (parentheses wherever the order is not the grammar's own); the wasm renderer's code of
// every rule validates, one float and four.
import { describe, expect, it } from 'vitest';
import { activations } from '../src/vocabulary/activations.js';
import { extraMetrics, losses, metrics } from '../src/vocabulary/losses.js';
import { optimizers, optimizerHyper, optimizerSlots } from '../src/vocabulary/optimizers.js';
import { activationRules, kernelActivations } from '../src/math/activations.js';
import { elementLoss, lossRules } from '../src/math/losses.js';
import { updateRules } from '../src/math/optimizers.js';
import { add, div, exp, inputsOf, mul, neg, rule, select, sigmoid, storesOf, sub, gt, copysign, type Rule } from '../src/math/expr.js';
import { whyNotVocabulary } from '../src/step/plan.js';
import { ruleValue, updateText } from '../src/wgsl/render.js';
import { ModuleBuilder } from '../src/wasm/module.js';
import { scalarLanes, simdLanes, type Lanes } from '../src/wasm/lanes.js';
import { emitRule } from '../src/wasm/render.js';

describe('every name of the language has a rule', () => {
  it('activations', () => expect(Object.keys(activationRules).sort()).toEqual([...activations].sort()));
  it('losses', () => expect(Object.keys(lossRules).sort()).toEqual(losses.map((l) => l.name).sort()));
  it('optimizers', () => expect(Object.keys(updateRules).sort()).toEqual(optimizers.map((o) => o.name).sort()));
  it("the steps' coverage is the rules' names", () => {
    expect([...kernelActivations].sort()).toEqual(Object.keys(activationRules).sort());
    // every name of the language and one it lacks: covered exactly where a rule (or a step's metric) is written
    const why = (optimizer: string, loss: string, metric?: string) => whyNotVocabulary({ optimizer, loss: { name: loss, args: {} }, metrics: metric ? [metric] : [] });
    for (const o of [...optimizers.map((x) => x.name), 'lion']) expect(why(o, 'mse')).toBe(o in updateRules ? undefined : `the ${o} optimizer`);
    for (const l of [...losses.map((x) => x.name), 'hinge']) expect(why('sgd', l)).toBe(l in lossRules ? undefined : `the ${l} loss`);
    for (const m of [...metrics, 'auc']) expect(why('sgd', 'mse', m)).toBe((extraMetrics as readonly string[]).includes(m) ? undefined : `the ${m} metric`);
  });
});

describe("the optimizers' rules against their slots and hyperparameters", () => {
  for (const o of optimizers) {
    it(o.name, () => {
      const r = updateRules[o.name];
      const inputs = inputsOf(r);
      // every hyperparameter the rule reads is laid out for it, and every one laid out is read
      expect(inputs.filter((i) => i.startsWith('hyper:')).map((i) => i.slice(6)).sort()).toEqual([...optimizerHyper[o.name]].sort());
      expect(inputs.filter((i) => i.startsWith('slot:')).map((i) => i.slice(5)).sort()).toEqual([...optimizerSlots[o.name]].sort());
      expect(inputs.filter((i) => !i.startsWith('hyper:') && !i.startsWith('slot:')).sort()).toEqual(['g', 'w']);
      // the slots are stored before the parameter, which is stored last
      expect(storesOf(r)).toEqual([...optimizerSlots[o.name].map((s) => `slot:${s}`), 'w']);
    });
  }
});

describe('the elementwise activations read what the targets keep', () => {
  for (const [name, r] of Object.entries(activationRules)) {
    if (r === 'rows') continue;
    it(name, () => {
      expect(inputsOf(r.forward).every((i) => i === 'z' || i === 'alpha')).toBe(true);
      // a gradient reads z only where a dense layer keeps it (gelu, swish)
      const reads = inputsOf(r.grad);
      expect(reads.every((i) => ['da', 'a', 'z', 'alpha'].includes(i))).toBe(true);
      expect(reads.includes('z')).toBe(name === 'gelu' || name === 'swish');
    });
  }
});

describe('WGSL text keeps the operation order', () => {
  const text = (r: Rule) => ruleValue(r, 'f', { a: 'a', b: 'b', c: 'c', x: 'buf[3u + m]' }).value;
  it('parentheses where the order is not left to right', () => {
    expect(text(rule(sub('a', sub('b', 'c'))))).toBe('a - (b - c)');
    expect(text(rule(sub(sub('a', 'b'), 'c')))).toBe('a - b - c');
    expect(text(rule(mul(add('a', 'b'), 'c')))).toBe('(a + b) * c');
    expect(text(rule(div('a', mul('b', 'c'))))).toBe('a / (b * c)');
    expect(text(rule(add('a', mul('b', 'c'))))).toBe('a + b * c');
    expect(text(rule(neg(mul('a', 'a'))))).toBe('-(a * a)');
    expect(text(rule(mul('x', sigmoid('x'))))).toBe('buf[3u + m] * (1.0 / (1.0 + exp(-1.0 * buf[3u + m])))');
    expect(text(rule(select(gt('a', 0), 'b', mul('b', 0.2))))).toBe('select(b * 0.2, b, a > 0.0)');
    expect(text(rule(copysign(1, 'a')))).toBe('bitcast<f32>((bitcast<u32>(1.0) & 0x7fffffffu) | (bitcast<u32>(a) & 0x80000000u))');
  });
  it('a rule with lets is a helper function of its inputs', () => {
    const r = ruleValue(rule(mul('e', 'c'), [{ let: 'e', value: exp('a') }]), 'f', { a: 'z0', c: '2.0' });
    expect(r.value).toBe('f(z0, 2.0)');
    expect(r.helpers).toEqual(['fn f(a: f32, c: f32) -> f32 {\n  let e = exp(a);\n  return e * c;\n}']);
  });
  it("an optimizer's step reads its parameter once, then stores its slots and the parameter", () => {
    expect(updateText('rmsprop', { w: 'p[at]', slot: (s) => `s_${s}[at]`, h: (k) => `h["${k}"]` })).toEqual([
      '  let w0 = p[at];',
      '  let ms = s_ms[at] * h["rho"] + g * g * h["1-rho"];',
      '  let mom = s_mom[at] * h["momentum"] + g * h["lr"] / sqrt(ms + h["epsilon"]);',
      '  s_ms[at] = ms;',
      '  s_mom[at] = mom;',
      '  p[at] = w0 - mom;',
    ]);
  });
});

describe('the wasm renderer gives valid code for every rule', () => {
  const valid = (body: (v: Lanes) => void, simd: boolean): boolean => {
    const mb = new ModuleBuilder();
    mb.func([], [], (c) => {
      const v = simd ? simdLanes(c) : scalarLanes(c);
      body(v);
    }, 'f');
    return WebAssembly.validate(mb.bytes());
  };
  const locals = (v: Lanes, names: string[]) => Object.fromEntries(names.map((n) => [n, v.floatLocal()]));
  for (const simd of [false, true]) {
    for (const [name, r] of Object.entries(activationRules)) {
      if (r === 'rows') continue;
      it(`${name}${simd ? ' (f32x4)' : ''}`, () => {
        for (const rr of [r.forward, r.grad]) {
          expect(valid((v) => (emitRule(v, rr, { inputs: { ...locals(v, ['z', 'a', 'da']), alpha: () => (v.code.f32(0.2), v.splat()) } }), v.code.drop()), simd)).toBe(true);
        }
      });
    }
    for (const [name, r] of Object.entries(updateRules)) {
      it(`${name}${simd ? ' (f32x4)' : ''}`, () => {
        const store = (v: Lanes) => (_: string, push: () => void) => (v.code.i32(0), push(), v.store());
        const reads = (v: Lanes) => Object.fromEntries(inputsOf(r).map((i) => [i, v.floatLocal()]));
        expect(valid((v) => emitRule(v, r, { inputs: reads(v), store: store(v) }), simd)).toBe(true);
      });
    }
    for (const name of Object.keys(lossRules)) {
      const e = elementLoss(name, { delta: 0.5 });
      if (!e) continue;
      it(`${name}${simd ? ' (f32x4)' : ''}`, () => {
        const store = (v: Lanes) => (_: string, push: () => void) => (v.code.i32(0), push(), v.store());
        expect(valid((v) => emitRule(v, e.rule, { inputs: locals(v, ['p', 'y', 'scale']), store: store(v) }), simd)).toBe(true);
      });
    }
  }
});
