// The slicing map is the exact inverse of widening: slicing member i's parameters out of the fused
// tensors, as the map says, gives member i's own weights, under every lowering; the host's fuse/unfuse
// (which checkpoints and netc extract cut members out with) apply the same rule; and its checkpoint part
// finds any member, retired or not, in population-STEP.bin.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import type { SlicingMap } from '../src/ensemble/slicing-map.js';
import { lowerings } from '../src/layers/forward.js';
import { memberParamSlice, slicingMap } from '../src/ensemble/slicing-map.js';
import { initMember } from '../src/kernels/init.js';
import { fuse, unfuse } from '../src/kernels/fused.js';
import type { ParamLayout } from '../src/core/layout.js';
import type { EnsembleIR } from '../src/ensemble/ensemble-ir.js';
import { build, tf, useBackend } from './equivalence/harness.js';

const SRC = `model m(input: [6, 6, 1]) {
  conv2d(3, kernel: 3, activation: relu)
  b = batchnorm()
  flatten()
  dense(4)
  dense(2, activation: softmax)
}
ensemble { seed: 8 }
`;

describe.each(lowerings)('%s', (lowering) => {
  it('slices every member back out of the fused tensors', async () => {
    await useBackend('cpu');
    const b = build(SRC, lowering, 3);
    const map = slicingMap(b.pop.ir);
    expect(map.members).toBe(3);
    const fused = new Map<string, tf.Tensor>();
    for (const p of b.pop.ir.params) b.pop.variables.get(p.name)!.forEach((v, m) => fused.set(p.layout === 'separate' ? `${p.name}#${m}` : p.name, v));
    for (const p of map.params) {
      for (let m = 0; m < 3; m++) {
        const slice = memberParamSlice(p, m);
        expect(fused.get(slice.tensor)!.shape, slice.tensor).toEqual(p.fused_shape);
        const values = tf.tidy(() => tf.reshape(tf.slice(fused.get(slice.tensor)!, slice.begin, slice.size), slice.shape).dataSync());
        expect(Array.from(values), `member ${m} ${p.name}`).toEqual(Array.from(initMember(b.ir, 8, m).get(p.name)!));
      }
    }
    b.pop.dispose();
  });
});

// one parameter of `members` members under `layout`, as the slicing map describes it
const mapOf = (layout: ParamLayout, shape: number[], members: number) =>
  slicingMap({ model: { name: 'm' }, lowering: 'grouped', members, params: [{ name: 'p', shape, layout, init: 'zeros', trainable: true, op: 'l' }] } as unknown as EnsembleIR).params[0];

describe('one rule on the host and in the map', () => {
  const cases: [ParamLayout, number[]][] = [['stacked', [2, 3, 4]], ['columns', [3, 4]], ['columns', [5]], ['blockdiag', [2, 3, 4]], ['shared', [3, 4]], ['separate', [3, 4]]];
  it.each(cases.flatMap(([layout, shape]) => [1, 3].map((n) => [layout, shape, n] as const)))('%s %j x%i: unfuse cuts out what the map slices, and undoes fuse', async (layout, shape, n) => {
    await useBackend('cpu');
    const own = (i: number) => Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, k) => 1000 * i + k + 1);
    const members = Array.from({ length: n }, (_, i) => own(i));
    // the fused data each member is cut from: a separate member's own tensor, a shared layer's one copy
    const data = (i: number) => (layout === 'separate' ? members[i] : layout === 'shared' ? members[0] : fuse(layout, shape, members));
    const p = mapOf(layout, shape, n);
    for (let i = 0; i < n; i++) {
      const slice = memberParamSlice(p, i);
      const sliced = tf.tidy(() => tf.reshape(tf.slice(tf.tensor(data(i), p.fused_shape), slice.begin, slice.size), slice.shape).dataSync());
      expect(Array.from(unfuse(layout, shape, n, data(i), i))).toEqual(Array.from(sliced));
      expect(Array.from(unfuse(layout, shape, n, data(i), i))).toEqual(Array.from(layout === 'shared' ? members[0] : members[i]));
    }
  });
});

describe('slicing-map.json and the checkpoint', () => {
  // a tool with nothing but the run's files: slicing-map.json says how population-STEP.bin holds a member
  it('finds every member in population-STEP.bin by its rule, also after halving compacted the population', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-map-'));
    const file = join(dir, 'halving.net');
    writeFileSync(
      file,
      `model m(input: [2]) {
  dense(8, activation: relu)
  dense(1, activation: sigmoid)
}
ensemble { members: 6 seed: 2 vary lr: loguniform(0.001, 0.3) }
train { data: moons(n: 200, noise: 0.2) validation: 0.25 loss: binary_crossentropy optimizer: adam() batch: 25 epochs: 4 }
schedule halving { every: 1 epochs, keep: 0.5, metric: val_loss }
`,
    );
    const run = join(dir, 'run');
    const io = { out: () => {}, err: () => {} };
    expect(await main(['train', file, '--backend', 'cpu', '--out', run], io)).toBe(0);
    const map = JSON.parse(readFileSync(join(run, 'slicing-map.json'), 'utf8')) as SlicingMap;
    const manifest = JSON.parse(readFileSync(join(run, 'population.json'), 'utf8'));
    const bin = readFileSync(join(run, manifest.data));
    const floats = new Float32Array(bin.buffer, bin.byteOffset, bin.byteLength / 4);
    // the population was compacted: positions are no longer ids
    expect(manifest.member_ids).not.toEqual(manifest.member_ids.map((_: number, i: number) => i));
    for (let id = 0; id < 6; id++) {
      const p = manifest.member_ids.indexOf(id);
      const own = (name: string, size: number) => {
        const t = manifest.tensors.find((x: { name: string }) => x.name === (p >= 0 ? name : `${name}@${id}`));
        return Array.from(floats.subarray(t.offset + Math.max(p, 0) * size, t.offset + Math.max(p, 0) * size + size));
      };
      const out = join(dir, `member-${id}`);
      expect(await main(['extract', run, '--member', String(id), '--backend', 'cpu', '--out', out], io)).toBe(0);
      const model = JSON.parse(readFileSync(join(out, 'model.json'), 'utf8'));
      const weights = readFileSync(join(out, model.weightsManifest[0].paths[0]));
      let offset = 0;
      for (const w of model.weightsManifest[0].weights as { name: string; shape: number[] }[]) {
        const param = map.params.find((x) => x.name === w.name)!;
        expect(param.shape).toEqual(w.shape);
        const extracted = new Float32Array(weights.buffer.slice(weights.byteOffset + offset, weights.byteOffset + offset + 4 * param.size));
        expect(own(w.name, param.size), `member ${id} ${w.name}`).toEqual(Array.from(extracted));
        offset += 4 * param.size;
      }
    }
  });
});
