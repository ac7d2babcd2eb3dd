// Resume under schedules: a population stopped at any step and resumed ends byte-identical to one that
// never stopped, whatever the schedules changed (PBT's hyperparameters, halving's retired members, early
// stopping's patience) and whatever they rank by. The stops fall mid-interval (step 37) and exactly where
// every schedule is due (step 60, where the stopped run ends before they act).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { runFiles } from './run-files.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-resume-'));
async function netc(...argv: string[]) {
  let err = '';
  const code = await main(argv, { out: () => {}, err: (t) => void (err += t) });
  return { code, err };
}

// 300 training examples in batches of 20: 15 steps an epoch, 120 steps in all
const source = (schedule: string) => `model m(input: [2]) {
  dense(16, activation: relu)
  dense(1, activation: sigmoid)
}
ensemble { members: 8 seed: 5 vary lr: loguniform(0.001, 0.5) }
train { data: moons(n: 400, noise: 0.2) validation: 0.25 loss: binary_crossentropy optimizer: sgd(lr: 0.05, momentum: 0.9) batch: 20 epochs: 8 metrics: [accuracy] }
${schedule}
`;

const schedules: Record<string, string> = {
  // trained in waves of 3, the rest waiting in host memory
  'halving by val_accuracy, in waves': 'schedule halving { every: 2 epochs, keep: 0.5, metric: val_accuracy }',
  'pbt and early stopping by loss, in waves': 'schedule pbt { every: 2 epochs, metric: loss, quantile: 0.25 }\nschedule early_stopping { patience: 2, metric: loss, min_delta: 0.01 }',
  'pbt by loss': 'schedule pbt { every: 2 epochs, metric: loss, quantile: 0.25 }',
  'pbt by val_loss': 'schedule pbt { every: 2 epochs, metric: val_loss, quantile: 0.25 }',
  'halving by loss': 'schedule halving { every: 2 epochs, keep: 0.5, metric: loss }',
  'halving by val_accuracy': 'schedule halving { every: 2 epochs, keep: 0.5, metric: val_accuracy }',
  'early stopping by loss': 'schedule early_stopping { patience: 2, metric: loss, min_delta: 0.01 }',
  'early stopping by val_loss': 'schedule early_stopping { patience: 2, metric: val_loss, min_delta: 0.01 }',
  'pbt and early stopping by loss': 'schedule pbt { every: 2 epochs, metric: loss, quantile: 0.25 }\nschedule early_stopping { patience: 2, metric: loss, min_delta: 0.01 }',
};


describe.each(Object.entries(schedules))('resume with %s', (name, schedule) => {
  const args = ['--backend', 'cpu', ...(name.endsWith('in waves') ? ['--resident', '3'] : [])];
  const dir = tmp();
  const file = join(dir, 'pop.net');
  writeFileSync(file, source(schedule));
  const straight = join(dir, 'straight');

  it('the straight run changes the population', async () => {
    const r = await netc('train', file, ...args, '--out', straight);
    expect(r.code, r.err).toBe(0);
    // a schedule that never acted would make the comparison below prove nothing
    expect(readFileSync(join(straight, 'events.jsonl'), 'utf8').trim().split('\n').length).toBeGreaterThan(0);
  });

  it.each([37, 60])('stopped at step %i and resumed, it ends byte-identical', async (stop) => {
    const resumed = join(dir, `stopped-${stop}`);
    expect((await netc('train', file, ...args, '--steps', String(stop), '--out', resumed)).code).toBe(0);
    // the run was started with --steps N, which it keeps: --epochs 8 (the file's) asks for the rest
    const r = await netc('train', file, ...args, '--resume', resumed, '--epochs', '8');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`resuming at step ${stop}`);
    const [a, b] = [runFiles(straight), runFiles(resumed)];
    for (const name of Object.keys(a)) expect(b[name], name).toEqual(a[name]);
    // members that stopped before the resume keep their final metrics
    for (const m of JSON.parse(b['summary.json'] as string).per_member) expect(m.metrics.loss, `member ${m.member}`).toEqual(expect.any(Number));
  });
});
