// Checkpoints and exact resume: a run stopped by kill -9 or Ctrl-C and resumed ends with byte-identical
// weights, optimizer state and metrics to a run that was never interrupted; a checkpoint only resumes
// the model and member count it was written for.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { lowerings } from '../src/layers/forward.js';
import { restore, encodeCheckpoint, decodeTensors, manifestChunks } from '../src/train/checkpoint.js';
import { LazyArray } from '../src/util/json-chunks.js';
import { build, randomBatch, tf, useBackend } from './equivalence/harness.js';

const bin = new URL('../bin/netc.js', import.meta.url).pathname;
const tmp = () => mkdtempSync(join(tmpdir(), 'netc-ckpt-'));
const ARGS = ['examples/xor.net', '--steps', '2000', '--checkpoint-every', '100'];

function state(dir: string) {
  const manifest = JSON.parse(readFileSync(join(dir, 'population.json'), 'utf8'));
  return { manifest, bytes: readFileSync(join(dir, manifest.data)), metrics: readFileSync(join(dir, 'metrics.jsonl'), 'utf8') };
}

function netc(...args: string[]) {
  return spawnSync('node', [bin, ...args], { encoding: 'utf8' });
}

/** Starts a run, waits for a checkpoint at or past `step`, then sends `signal`; the exit code and stderr. */
async function interrupted(dir: string, backend: string, signal: NodeJS.Signals, step = 300): Promise<{ code: number | null; stderr: string }> {
  const child = spawn('node', [bin, 'train', ...ARGS, '--backend', backend, '--out', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stderr })));
  for (let i = 0; i < 600; i++) {
    try {
      if (JSON.parse(readFileSync(join(dir, 'population.json'), 'utf8')).position.step >= step) break;
    } catch {
      // not written yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  child.kill(signal);
  return exited;
}

describe.each(['cpu', 'wasm'])('resume on %s', (backend) => {
  const straight = tmp();
  it('an uninterrupted run', () => {
    const r = netc('train', ...ARGS, '--backend', backend, '--out', straight);
    expect(r.status, r.stderr).toBe(0);
  });

  it('after kill -9: byte-identical weights, optimizer state and metrics', async () => {
    const dir = tmp();
    await interrupted(dir, backend, 'SIGKILL');
    const at = state(dir).manifest.position.step;
    expect(at).toBeGreaterThanOrEqual(300);
    expect(at).toBeLessThan(2000);
    const r = netc('train', ...ARGS, '--backend', backend, '--resume', dir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`resuming at step ${at}`);
    const [a, b] = [state(straight), state(dir)];
    expect(b.manifest.position.step).toBe(2000);
    expect(b.bytes.equals(a.bytes)).toBe(true);
    expect(b.manifest.acc_beta1).toEqual(a.manifest.acc_beta1);
    expect(b.metrics).toBe(a.metrics);
  });

  it('after Ctrl-C: stops cleanly, says how to resume, and resumes identically with that command alone', async () => {
    const dir = tmp();
    const { code, stderr } = await interrupted(dir, backend, 'SIGINT');
    expect(code).toBe(1);
    const hint = stderr.match(/continue with: (netc train .*)$/m)?.[1];
    expect(hint).toBe(`netc train --resume ${dir}`);
    // the run keeps --steps, --checkpoint-every and --backend: the hint needs none of them
    const r = netc('train', '--resume', dir);
    expect(r.status, r.stderr).toBe(0);
    expect(state(dir).bytes.equals(state(straight).bytes)).toBe(true);
    expect(state(dir).metrics).toBe(state(straight).metrics);
  });
});

describe('checkpoint files', () => {
  it('leave one buffer and no temporary files behind', async () => {
    const dir = tmp();
    expect(await main(['train', 'examples/xor.net', '--steps', '250', '--checkpoint-every', '50', '--backend', 'cpu', '--out', dir], { out: () => {}, err: () => {} })).toBe(0);
    const files = readdirSync(dir);
    expect(files.filter((f) => f.startsWith('population-'))).toEqual(['population-250.bin']);
    expect(files.some((f) => f.includes('.tmp-'))).toBe(false);
    expect(existsSync(join(dir, 'run.json'))).toBe(true);
  });

  it('refuse another model or member count', async () => {
    const dir = tmp();
    const quiet = { out: () => {}, err: () => {} };
    await main(['train', 'examples/xor.net', '--steps', '10', '--backend', 'cpu', '--out', dir], quiet);
    let err = '';
    const io = { out: () => {}, err: (t: string) => void (err += t) };
    expect(await main(['train', 'examples/forum.net', '--resume', dir, '--backend', 'cpu'], io)).toBe(1);
    expect(err).toMatch(/error NET4020: the checkpoint in .* holds 8 members of model 'xor' .*; examples\/forum\.net compiles to 15 members of 'forum'/);
    err = '';
    // a member count given on the command line that is not the run's is a usage error (exit code 2)
    expect(await main(['train', 'examples/xor.net', '--resume', dir, '--members', '3', '--backend', 'cpu'], io)).toBe(2);
    expect(err).toContain('--members 3 conflicts with');
    err = '';
    expect(await main(['train', 'examples/xor.net', '--resume', join(dir, 'nope'), '--backend', 'cpu'], io)).toBe(1);
    expect(err).toContain('it does not exist');
  });
});

describe('a checkpoint restores the whole state under every lowering', () => {
  it.each(lowerings)('%s: 3 steps, checkpoint, 3 more == 6 straight', async (lowering) => {
    await useBackend('cpu');
    const src = `model m(input: [4]) {\n  dense(5, activation: relu)\n  batchnorm()\n  dense(3, activation: softmax)\n}\nensemble { seed: 2 vary lr: [0.01, 0.05, 0.02] }\ntrain { data: iris() loss: categorical_crossentropy optimizer: adam steps: 6 }\n`;
    const batches = Array.from({ length: 6 }, (_, s) => ({ x: randomBatch(s, [4, 4]), y: tf.oneHot(tf.tensor1d([0, 1, s % 3, 2], 'int32'), 3).toFloat() }));
    const straight = build(src, lowering, 3);
    for (const { x, y } of batches) straight.pop.step({ kind: 'tensors', x, y }).dispose();
    const first = build(src, lowering, 3);
    for (const { x, y } of batches.slice(0, 3)) first.pop.step({ kind: 'tensors', x, y }).dispose();
    const { manifest, bytes } = await encodeCheckpoint(first.pop, { step: 3, epoch: 0, batch: 3 }, { fingerprint: 'f', seed: 2, hyperKeys: [], data: 'x.bin' });
    const second = build(src, lowering, 3);
    restore(second.pop, manifest, decodeTensors(manifest, bytes));
    for (const { x, y } of batches.slice(3)) second.pop.step({ kind: 'tensors', x, y }).dispose();
    const [a, b] = [await straight.pop.exportState(), await second.pop.exportState()];
    for (const [name, values] of a) expect(Array.from(b.get(name)!), name).toEqual(Array.from(values));
    [straight, first, second].forEach((x) => x.pop.dispose());
  });
});

describe('population.json written piece by piece', () => {
  it('is JSON.stringify(manifest) byte for byte, each member hyperparameters row made as it is written', async () => {
    await useBackend('cpu');
    const src = `model m(input: [4]) {\n  dense(3, activation: softmax)\n}\nensemble { seed: 2 vary lr: [0.01, 0.05, 0.02] }\ntrain { data: iris() loss: categorical_crossentropy optimizer: adam steps: 6 }\n`;
    const { pop } = build(src, 'grouped', 3);
    const { manifest } = await encodeCheckpoint(pop, { step: 0, epoch: 0, batch: 0 }, { fingerprint: 'f', seed: 2, hyperKeys: ['lr', 'beta1'], data: 'x.bin' });
    expect(manifest.hyperparameters).toEqual([{ lr: 0.01, beta1: 0.9 }, { lr: 0.05, beta1: 0.9 }, { lr: 0.02, beta1: 0.9 }]);
    const made: number[] = [];
    const draft = { ...manifest, hyperparameters: new LazyArray(3, (m: number) => (made.push(m), manifest.hyperparameters[m])) };
    expect([...manifestChunks(draft)].join('')).toBe(JSON.stringify(manifest) + '\n');
    expect(made).toEqual([0, 1, 2]);
    pop.dispose();
  });
});
