// `netc train --seed`, `--epochs` and `--steps` go into the compile (CompileOptions.overrides), so the
// checker sees the run the command line asks for: a file may leave its length to the command line, a
// warmup is checked against the overridden length, and the seed's draws are the ones the table hands out.
import { describe, expect, it } from 'vitest';
import { expectClean, expectError } from './helpers.js';

const model = 'model m(input: [2]) {\n  dense(4, activation: relu)\n  dense(1, activation: sigmoid)\n}\n';
const file = (train: string, ensemble = 'members: 3 vary lr: loguniform(1e-3, 1e-1)') =>
  `${model}ensemble { ${ensemble} }\ntrain { data: xor() loss: binary_crossentropy ${train} }\n`;

describe('command-line overrides in the compile', () => {
  it('a file without epochs or steps is an error, unless the command line gives the length', () => {
    expectError(file(''), 4004, "needs 'epochs' or 'steps'");
    expect(expectClean(file(''), { overrides: { epochs: 3 } }).program!.train).toMatchObject({ epochs: 3, steps: undefined });
    expect(expectClean(file(''), { overrides: { steps: 7 } }).program!.train).toMatchObject({ steps: 7, epochs: undefined });
  });

  it('--steps replaces the file epochs, --epochs its steps', () => {
    expect(expectClean(file('epochs: 5'), { overrides: { steps: 40 } }).program!.train).toMatchObject({ steps: 40, epochs: undefined });
    expect(expectClean(file('steps: 100'), { overrides: { epochs: 2 } }).program!.train).toMatchObject({ epochs: 2, steps: undefined });
  });

  it('a warmup is checked against the overridden length, and the message says where that length came from', () => {
    const warm = file('steps: 100 lr_schedule: linear(warmup: 50 steps)');
    expectClean(warm);
    expectError(warm, 4041, 'the run 40 steps (--steps)', { overrides: { steps: 40 } });
    expectClean(file('steps: 10 lr_schedule: linear(warmup: 50 steps)'), { overrides: { steps: 60 } });
  });

  it('--seed is the program seed, and the compiled run draws the varied values from it', () => {
    const overridden = expectClean(file('epochs: 1', 'members: 3 seed: 1 vary lr: loguniform(1e-3, 1e-1)'), { overrides: { seed: 9 } });
    const written = expectClean(file('epochs: 1', 'members: 3 seed: 9 vary lr: loguniform(1e-3, 1e-1)'));
    const other = expectClean(file('epochs: 1', 'members: 3 seed: 1 vary lr: loguniform(1e-3, 1e-1)'));
    expect(overridden.program!.ensemble.seed).toBe(9);
    const lrs = (s: typeof written) => [0, 1, 2].map((m) => s.run!.hyper.value('lr', m));
    expect(lrs(overridden)).toEqual(lrs(written));
    expect(lrs(overridden)).not.toEqual(lrs(other));
  });

  it('without a block, the ensemble takes the seed from the command line as well', () => {
    expect(expectClean(`${model}train { data: xor() loss: binary_crossentropy epochs: 1 }\n`, { overrides: { seed: 4 } }).program!.ensemble.seed).toBe(4);
  });
});
