// The model.py `netc extract --format pytorch` writes, as golden files: lenet (conv, pooling, the flatten
// before a Linear), residual (branches), multihead (a shared trunk) and the export tests' models. The
// weights do not appear in model.py, so each is written from zero weights.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { expectClean } from './helpers.js';
import { exportCases } from './export-models.js';
import { exportPlan } from '../src/export/plan.js';
import { memberHyperparameters } from '../src/runtime/hyper.js';
import { modelPy } from '../src/export/pytorch.js';

const examples = ['lenet', 'residual', 'multihead'].map((name) => ({ name, source: readFileSync(new URL(`../examples/${name}.net`, import.meta.url), 'utf8') }));
const cases = exportCases.map((c) => ({ name: c.source.match(/^model (\w+)/)![1], source: c.source }));

describe('model.py', () => {
  it.each([...examples, ...cases])('$name', async ({ name, source }) => {
    const state = expectClean(source);
    const ir = state.ir!;
    const zeros = new Map(ir.params.map((p) => [p.name, new Float32Array(p.shape.reduce((a, b) => a * b, 1))]));
    // member 1: its own values of whatever varies
    const plan = exportPlan(ir, zeros, memberHyperparameters(state.run!.hyper, 1));
    await expect(modelPy(plan, `member 1 of runs/${name}, step 0`)).toMatchFileSnapshot(`golden/export/${name}.py`);
  });
});
