// PBT's perturbations stay where the checker would accept them: numeric spaces are clamped into the
// range a draw comes from, lists and choices move to a neighbouring value (as Ray Tune does).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { perturb } from '../src/train/schedules.js';
import { Rng } from '../src/util/rng.js';
import type { Space } from '../src/check/program.js';

const list = (...values: number[]): Space => ({ kind: 'list', values });
const draws = (space: Space, inherited: number) => Array.from({ length: 200 }, (_, i) => perturb(space, inherited, [0.8, 1.2], Rng.of(1, 'test', i)));

describe('perturb', () => {
  it('moves a list value to a neighbour, never past the ends', () => {
    expect(new Set(draws(list(0.1, 0.5, 0.9), 0.5))).toEqual(new Set([0.1, 0.9]));
    expect(new Set(draws(list(0.1, 0.5, 0.9), 0.9))).toEqual(new Set([0.5, 0.9]));
    expect(new Set(draws({ kind: 'choice', values: [16, 32, 64] }, 16))).toEqual(new Set([16, 32]));
  });

  it('keeps a numeric space inside [low, high), as a draw is', () => {
    const up = draws({ kind: 'uniform', low: 0.5, high: 1 }, 0.99);
    expect(Math.max(...up)).toBeLessThan(1);
    expect(Math.max(...up)).toBeGreaterThan(0.99);
    expect(Math.min(...draws({ kind: 'loguniform', low: 1e-4, high: 1e-1 }, 1.1e-4))).toBe(1e-4);
  });
});

describe('PBT end to end', () => {
  it('every exploited value is one the file allows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-pbt-'));
    const file = join(dir, 'pbt.net');
    writeFileSync(
      file,
      `model m(input: [2]) {
  dense(16, activation: relu)
  drop = dropout(0.3)
  dense(1, activation: sigmoid)
}
ensemble { members: 8 seed: 3 vary drop.rate: [0.2, 0.5, 0.8] vary momentum: uniform(0.9, 1) vary lr: loguniform(0.01, 0.5) }
train { data: moons(n: 200, noise: 0.2) validation: 0.25 loss: binary_crossentropy optimizer: sgd(lr: 0.05, momentum: 0.9) batch: 20 epochs: 12 }
schedule pbt { every: 1 epochs, metric: val_loss, quantile: 0.25, perturb: [0.8, 1.2], resample: 0 }
`,
    );
    const code = await main(['train', file, '--backend', 'cpu', '--out', join(dir, 'run')], { out: () => {}, err: () => {} });
    expect(code).toBe(0);
    const exploits = readFileSync(join(dir, 'run', 'events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(exploits.length).toBeGreaterThan(10);
    for (const e of exploits) {
      expect([0.2, 0.5, 0.8]).toContain(e.hyperparameters['drop.rate']);
      expect(e.hyperparameters.momentum).toBeGreaterThanOrEqual(0.9);
      expect(e.hyperparameters.momentum).toBeLessThan(1);
      expect(e.hyperparameters.lr).toBeGreaterThanOrEqual(0.01);
      expect(e.hyperparameters.lr).toBeLessThan(0.5);
    }
  });
});
