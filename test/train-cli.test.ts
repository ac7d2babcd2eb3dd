// `netc train` as a user runs it: the run directory's files, --steps 0, determinism, and the mistakes
// that must end in a clear message and the right exit code.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { paramBytes } from './run-files.js';

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-train-'));
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

describe('netc train', () => {
  it('trains the forum example and writes the run directory', async () => {
    const dir = tmp();
    const r = await run('train', 'examples/forum.net', '--steps', '200', '--backend', 'cpu', '--out', dir);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('backend: cpu');
    expect(r.out).toMatch(/│ rank │ member │ +lr │ +loss │ accuracy │ val_loss │ val_accuracy │/);
    const summary = readJson(join(dir, 'summary.json'));
    expect(summary).toMatchObject({ members: 15, steps: 200, backend: 'cpu', lowering: 'grouped' });
    expect(summary.train_seconds).toBeGreaterThan(0);
    expect(summary.member_steps_per_second).toBeGreaterThan(0);
    expect(summary.per_member).toHaveLength(15);
    expect(Object.keys(summary.per_member[0].metrics).sort()).toEqual(['accuracy', 'loss', 'val_accuracy', 'val_loss']);
    // 800 training examples at batch 5: 160 steps an epoch, so 200 steps end in the second epoch
    const lines = readFileSync(join(dir, 'metrics.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2 * 15);
    expect(lines[0]).toMatchObject({ epoch: 1, step: 160, member: 0 });
    const population = readJson(join(dir, 'population.json'));
    const runInfo = readJson(join(dir, 'run.json'));
    expect(runInfo.slicing_map.members).toBe(15);
    expect(runInfo.slicing_map.params.map((p: { name: string }) => p.name)).toEqual(runInfo.model.params.map((p: { name: string }) => p.name));
    expect(lines[15]).toMatchObject({ epoch: 2, step: 200, member: 0 });
    expect(population).toMatchObject({ members: 15, model: 'forum', position: { step: 200 } });
    expect(paramBytes(dir).length).toBe(4 * 15 * 81);
  });

  it('writes the untrained population with --steps 0', async () => {
    const dir = tmp();
    const r = await run('train', 'examples/xor.net', '--steps', '0', '--backend', 'cpu', '--out', dir);
    expect(r.code, r.err).toBe(0);
    expect(readJson(join(dir, 'summary.json'))).toMatchObject({ steps: 0, members: 8 });
    expect(readJson(join(dir, 'population.json')).position.step).toBe(0);
    expect(readJson(join(dir, 'summary.json')).per_member[0].metrics.loss).toBeGreaterThan(0);
  });

  it('gives the same weights for the same file and seed, and other weights for another seed', async () => {
    const weights = async (seed: string, backend: string) => {
      const dir = tmp();
      const r = await run('train', 'examples/xor.net', '--steps', '40', '--seed', seed, '--backend', backend, '--out', dir);
      expect(r.code, r.err).toBe(0);
      return paramBytes(dir);
    };
    for (const backend of ['cpu', 'wasm']) {
      const a = await weights('3', backend);
      expect((await weights('3', backend)).equals(a), backend).toBe(true);
      expect((await weights('4', backend)).equals(a), backend).toBe(false);
    }
  });

  it('--members changes the member count, and member i starts where it would in any population', async () => {
    const [small, large] = [tmp(), tmp()];
    await run('train', 'examples/xor.net', '--steps', '0', '--members', '2', '--backend', 'cpu', '--out', small);
    await run('train', 'examples/xor.net', '--steps', '0', '--members', '5', '--backend', 'cpu', '--out', large);
    const a = new Float32Array(new Uint8Array(paramBytes(small)).buffer);
    const b = new Float32Array(new Uint8Array(paramBytes(large)).buffer);
    // the first parameter, dense_1/kernel [2, 8]: member 1's 16 values follow member 0's
    expect(Array.from(b.slice(0, 32))).toEqual(Array.from(a.slice(0, 32)));
    expect(readJson(join(large, 'summary.json')).members).toBe(5);
  });

  it('trains under every lowering', async () => {
    for (const lowering of ['blockdiag', 'loop']) {
      const r = await run('train', 'examples/residual.net', '--steps', '5', '--members', '3', '--lowering', lowering, '--backend', 'cpu', '--out', tmp());
      expect(r.code, r.err).toBe(0);
      expect(r.out).toContain(`cpu, ${lowering}, TF.js ops)`);
    }
  });
});

describe('netc train mistakes', () => {
  it('--epochs and --steps together are a usage error', async () => {
    const r = await run('train', 'examples/xor.net', '--epochs', '1', '--steps', '2');
    expect(r.code).toBe(2);
    expect(r.err).toContain('give --epochs or --steps, not both');
  });

  it('a bad option value is a usage error', async () => {
    expect((await run('train', 'examples/xor.net', '--members', '0')).code).toBe(2);
    expect((await run('train', 'examples/xor.net', '--lowering', 'diagonal')).code).toBe(2);
    expect((await run('train', 'examples/xor.net', '--backend', 'tpu')).code).toBe(2);
  });

  it('a file without a train block says so', async () => {
    const dir = tmp();
    const file = join(dir, 'model.net');
    writeFileSync(file, 'model m(input: [2]) { dense(1) }\n');
    const r = await run('train', file);
    expect(r.code).toBe(1);
    expect(r.err).toContain("error NET4001: the file has no 'train' block");
  });

  it('a bad csv row is reported with its file, row and column', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'points.csv'), 'y,a,b\n1,0.5,0.25\n0,oops,1\n');
    writeFileSync(join(dir, 'points.net'), 'model m(input: [2]) { dense(1) }\ntrain { data: csv("points.csv", label: "y") loss: mse steps: 1 }\n');
    const r = await run('train', join(dir, 'points.net'), '--backend', 'cpu', '--out', join(dir, 'run'));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/points\.csv\(3,2\): error NET4012: .*oops/);
    expect(r.err).not.toMatch(/\n\s+at /);
  });

  it('an unavailable backend is explained, not a crash', async () => {
    const r = await run('train', 'examples/xor.net', '--backend', 'node-gpu', '--steps', '1');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^netc: @tensorflow\/tfjs-node-gpu is not installed/m);
  });
});

describe('netc report', () => {
  it('rewrites a run report, and explains a directory that is not a run', async () => {
    const dir = tmp();
    await run('train', 'examples/xor.net', '--steps', '30', '--backend', 'cpu', '--out', dir);
    expect(readFileSync(join(dir, 'slicing-map.json'), 'utf8')).toContain('"netc-slicing-map-2"');
    const r = await run('report', dir);
    expect(r.code).toBe(0);
    expect(r.out).toBe(`report: ${join(dir, 'report.html')}\n`);
    expect(readFileSync(join(dir, 'report.html'), 'utf8')).toContain('<svg');
    const bad = await run('report', join(dir, 'nope'));
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/^netc: cannot write the report of .*summary\.json: not found/);
  });
});
