// `--steps 0` snapshots the initial weights; a run that trains no step has no warmup to check, so an
// lr_schedule with a warmup is not refused (NET4041) for it (issue 37, smaller things).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectClean, expectError, netc } from './helpers.js';

const warm = `model m(input: [2]) { dense(1, activation: sigmoid) }\ntrain { data: xor(n: 40) loss: binary_crossentropy epochs: 2 batch: 10 lr_schedule: cosine(warmup: 10 steps) }\n`;

describe('steps: 0 and a warmup', () => {
  it('is clean with --steps 0 and with steps: 0, and still refused with --steps 5', () => {
    expectClean(warm, { overrides: { steps: 0 } });
    expectClean(warm.replace('epochs: 2', 'steps: 0'));
    expectError(warm, 4041, 'the run 5 steps (--steps)', { overrides: { steps: 5 } });
  });

  it('netc train --steps 0 writes the initial weights', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-steps0-'));
    writeFileSync(join(dir, 'warm.net'), warm);
    const r = await netc('train', join(dir, 'warm.net'), '--steps', '0', '--backend', 'cpu', '--out', join(dir, 'run'));
    expect(r.code, r.err).toBe(0);
  }, 60_000);
});
