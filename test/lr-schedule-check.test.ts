// The checker's side of learning-rate schedules: every schedule of the language notes checks clean, its
// arguments become per-member hyperparameters (`lr_schedule.min`, intervals by their amount and unit), and
// the mistakes the golden files do not cover are reported with their codes.
import { describe, expect, it } from 'vitest';
import { hyperTable } from '../src/runtime/hyper.js';
import { expectClean, expectDiagnostics, expectError } from './helpers.js';

const model = 'model m(input: [2]) {\n  dense(4, activation: relu)\n  dense(1, activation: sigmoid)\n}\n';
const file = (schedule: string, ensemble = 'members: 2', extra = 'validation: 0.2') =>
  `${model}ensemble { ${ensemble} }\ntrain { data: xor() loss: binary_crossentropy epochs: 4 ${extra}\n  lr_schedule: ${schedule}\n}\n`;

describe('lr_schedule', () => {
  it.each([
    'constant()',
    'step(every: 2 epochs, gamma: 0.5)',
    'step(every: 10 steps)',
    'exponential(every: 100 steps, gamma: 0.9)',
    'cosine(warmup: 100 steps, min: 0.01)',
    'cosine()',
    'linear(warmup: 1 epochs, min: 0.1)',
    'plateau(metric: val_loss, patience: 2, factor: 0.5, min_delta: 0.001, min_lr: 1e-5)',
  ])('%s checks clean', (schedule) => {
    expectClean(file(schedule));
  });

  it('the language notes example: vary lr_schedule.min gives each member its own minimum', () => {
    const state = expectClean(file('cosine(warmup: 100 steps, min: 0.01)', 'members: 4 vary lr_schedule.min: [0.1, 0.01]'));
    const table = hyperTable(state.program!, state.ir!);
    expect([0, 1, 2, 3].map((m) => table.value('lr_schedule.min', m))).toEqual([0.1, 0.01, 0.1, 0.01]);
    expect(table.value('lr_schedule.warmup', 2)).toBe(100);
    expect(table.units.get('lr_schedule.warmup')).toBe('steps');
    expect(table.varied.get('lr_schedule.min')).toBe('lr_schedule.min');
  });

  it('a varied interval replaces the train block unit with its own', () => {
    const state = expectClean(file('step(every: 10 steps, gamma: 0.5)', 'members: 2 vary lr_schedule.every: [1 epochs, 2 epochs] vary lr_schedule.gamma: [0.5, 0.9]'));
    const table = hyperTable(state.program!, state.ir!);
    expect(table.units.get('lr_schedule.every')).toBe('epochs');
    expect([table.value('lr_schedule.every', 1), table.value('lr_schedule.gamma', 1)]).toEqual([2, 0.9]);
  });

  it('a warmup in steps is checked against steps, in epochs against epochs; other pairs wait for the data', () => {
    expectError(file('cosine(warmup: 5 epochs)'), 4041, 'warmup 5 epochs, the run 4 epochs');
    expectClean(file('cosine(warmup: 1000 steps)'));
    expectClean(file('cosine(warmup: 0 steps)'));
    expectError(file('cosine(warmup: 1 steps)').replace('epochs: 4', 'steps: 1'), 4041, 'warmup 1 steps, the run 1 steps');
  });

  it('an integer argument is varied by a list or choice, not drawn from a real range', () => {
    expectError(file('plateau(patience: 2)', 'members: 2 vary lr_schedule.patience: uniform(1, 5)'), 3005, 'draws real numbers, but this hyperparameter takes integers');
    expectClean(file('plateau(patience: 2)', 'members: 2 vary lr_schedule.patience: [1, 5]'));
  });

  it("plateau's metric is not a number, so it cannot vary", () => {
    expectError(file('plateau()', 'members: 2 vary lr_schedule.metric: [loss]'), 3003, "'metric' of the lr_schedule is not a numeric hyperparameter");
  });

  it('plateau watching a validation metric without validation data warns, as the schedules do', () => {
    const source = file('plateau(patience: 2)', 'members: 2', 'validation: 0');
    expectDiagnostics(
      source,
      `test.net(7,16): warning NET4042: lr_schedule plateau watches val_loss, but there is no validation data, so it watches loss instead; set 'validation' in the train block (e.g. validation: 0.2) to watch val_loss
   7 |   lr_schedule: plateau(patience: 2)
     |                ~~~~~~~~~~~~~~~~~~~~`,
    );
    expectClean(file('plateau(metric: loss)', 'members: 2', 'validation: 0'));
  });
});
