// The WGSL step (src/step/wgsl.ts) knows no layer kind by name: it asks each op's kind for its `wgsl` rule
// (src/layers/, src/wgsl/rule.ts), which says whether it covers the op, builds its layer of the chain and
// writes its kernels. Shown here by changing one kind's rule and watching the step follow it. No GPU needed:
// the kernels are text.
import { describe, expect, it } from 'vitest';
import { compile } from '../src/pipeline.js';
import { layerKind, layerKinds } from '../src/layers/registry.js';
import { hasRule, type LayerKind } from '../src/layers/layer-kind.js';
import { generateWgslStep, whyNotWgsl } from '../src/step/wgsl.js';
import type { RunStepConfig } from '../src/step/plan.js';

const SOURCE = `model m(input: [4]) {
  dense(3, activation: tanh)
  elu()
  dense(1)
}
ensemble {
  members: 2
  seed: 1
}
train {
  data: csv("none.csv")
  loss: mse
  optimizer: adam
  batch: 4
  epochs: 1
}
`;

function config(): RunStepConfig {
  const plan = compile(SOURCE, 'rules.net', { after: 'wgsl' }).wgsl!;
  expect('why' in plan ? plan.why : undefined).toBeUndefined();
  return plan.config;
}

/** Runs `body` with `kind`'s WGSL rule replaced, and puts the kind's own back. */
function withRule<T>(kind: LayerKind, rule: LayerKind['wgsl'], body: () => T): T {
  const own = kind.wgsl;
  kind.wgsl = rule;
  try {
    return body();
  } finally {
    kind.wgsl = own;
  }
}

describe("the WGSL step follows each kind's rule", () => {
  it('every layer kind has a WGSL rule, or says why it has none', () => {
    for (const kind of layerKinds) {
      if (hasRule(kind.wgsl)) expect(kind.wgsl.alias || typeof kind.wgsl.layer === 'function', kind.name).toBe(true);
      else expect(kind.wgsl.unsupported, kind.name).not.toBe('');
    }
  });

  it("a kind whose rule is unsupported is not covered, and the step gives the rule's reason", () => {
    const cfg = config();
    expect(whyNotWgsl(cfg)).toBeUndefined();
    expect(withRule(layerKind('elu')!, { unsupported: 'no kernels written yet' }, () => whyNotWgsl(cfg))).toBe('the elu layer (no kernels written yet)');
  });

  it("a rule's refusal of an op is the step's", () => {
    const cfg = config();
    const elu = layerKind('elu')!;
    const own = elu.wgsl;
    if (!hasRule(own)) throw new Error('elu has a WGSL rule');
    const why = withRule(elu, { ...own, whyNot: (op) => `${op.name}, refused by its rule` }, () => whyNotWgsl(cfg));
    expect(why).toBe('elu_1, refused by its rule');
  });

  it("the step's kernels for a layer are its rule's", () => {
    const cfg = config();
    const elu = layerKind('elu')!;
    const own = elu.wgsl;
    if (!hasRule(own) || own.alias) throw new Error('elu has a WGSL layer rule');
    const mark = { name: 'marked', code: '', bindings: [], invocations: 1, groups: [1, 1] as [number, number] };
    const names = (training: boolean) => generateWgslStep({ ...cfg, clipping: false }, 2, 4, training).kernels.map((k) => k.name);
    const before = names(true);
    const elus = (n: string) => /^(forward|backward) elu_1:/.test(n);
    expect(before.filter(elus)).toHaveLength(2);
    const after = withRule(elu, { ...own, forward: () => [mark], backward: () => [mark, mark] }, () => names(true));
    expect(after.filter(elus)).toEqual([]);
    expect(after.filter((n) => n === 'marked')).toHaveLength(3);
    expect(after).toHaveLength(before.length + 1);
  });
});
