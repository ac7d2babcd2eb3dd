// Where `netc train` writes, and what it says while it trains: --out onto a run, a file or an unwritable
// place; --force; stderr closed early; progress lines when stderr is not a terminal; counts in messages.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { trainCommand } from '../src/cli/train-command.js';

async function run(...argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-out-'));
const XOR = ['train', 'examples/xor.net', '--steps', '5', '--backend', 'cpu'];
const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at |bug in netc/);

describe('--out onto something that exists', () => {
  it('refuses a directory that holds another run, and says how to continue or replace it', async () => {
    const dir = tmp();
    expect((await run(...XOR, '--out', dir)).code).toBe(0);
    writeFileSync(join(dir, 'events.jsonl'), '{"step":1,"event":"exploit","member":0,"source":3}\n');
    const r = await run(...XOR, '--out', dir);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`netc: ${dir} already holds a netc run; continue it with --resume ${dir}, or give --force to replace it`);
    noStack(r.err);
  });

  it('refuses a non-empty directory that is not a run', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'notes.txt'), 'mine\n');
    const r = await run(...XOR, '--out', dir);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`netc: ${dir} is not empty and is not a netc run directory`);
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('mine\n');
  });

  it('takes an empty directory', async () => {
    expect((await run(...XOR, '--out', tmp())).code).toBe(0);
  });

  it('--force replaces a run: none of the old run files is left to mix with the new', async () => {
    const dir = tmp();
    expect((await run(...XOR, '--out', dir)).code).toBe(0);
    writeFileSync(join(dir, 'events.jsonl'), '{"step":1,"event":"exploit","member":0,"source":3}\n');
    writeFileSync(join(dir, 'population-999.bin'), '');
    const r = await run(...XOR, '--members', '2', '--out', dir, '--force');
    expect(r.code, r.err).toBe(0);
    expect(existsSync(join(dir, 'events.jsonl'))).toBe(false);
    expect(existsSync(join(dir, 'population-999.bin'))).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')).members).toBe(2);
  });

  it('--force never deletes files netc did not write', async () => {
    const dir = tmp();
    expect((await run(...XOR, '--out', dir)).code).toBe(0);
    writeFileSync(join(dir, 'notes.txt'), 'mine\n');
    mkdirSync(join(dir, 'best'));
    const r = await run(...XOR, '--out', dir, '--force');
    expect(r.code).toBe(1);
    expect(r.err).toContain(`netc: ${dir} holds files netc did not write (best/, notes.txt); --force replaces only a run's own files`);
    expect(existsSync(join(dir, 'run.json'))).toBe(true);
    expect(existsSync(join(dir, 'notes.txt'))).toBe(true);
  });

  it('a file is refused with a message, not reported as a bug', async () => {
    const file = join(tmp(), 'taken');
    writeFileSync(file, 'x');
    for (const out of [file, join(file, 'run')]) {
      const r = await run(...XOR, '--out', out);
      expect(r.code, r.err).toBe(1);
      expect(r.err).toMatch(/^netc: cannot use .* as the run directory: .*taken is a file$/m);
      noStack(r.err);
    }
  });

  it('a place where no directory can be made is refused at once (/proc/x made mkdir spin)', async () => {
    const started = performance.now();
    const r = await run(...XOR, '--out', '/proc/netc-test/run');
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^netc: cannot create the run directory \/proc\/netc-test\/run: /m);
    noStack(r.err);
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});

describe('progress output', () => {
  it('goes on training and writes the whole run when stderr is closed early (netc train 2>&1 | head)', async () => {
    const dir = tmp();
    const bin = new URL('../bin/netc.js', import.meta.url).pathname;
    const child = spawn('node', [bin, 'train', 'examples/xor.net', '--steps', '60', '--backend', 'cpu', '--out', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    // the reader goes away after the first line: every later write to stderr meets a closed pipe
    child.stderr.once('data', () => child.stderr.destroy());
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(out).toContain(`run directory: ${dir}`);
    expect(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')).steps).toBe(60);
    expect(JSON.parse(readFileSync(join(dir, 'population.json'), 'utf8')).position.step).toBe(60);
    expect(existsSync(join(dir, 'report.html'))).toBe(true);
  });

  it('prints a line on a timer, not only at the end of an epoch, when stderr is not a terminal', async () => {
    let err = '';
    const io = { out: () => {}, err: (t: string) => void (err += t) };
    // xor.net has 19 steps an epoch; a line every 0 s is a line every step
    const code = await trainCommand('examples/xor.net', { steps: 5, backend: 'cpu', lowering: 'grouped', out: join(tmp(), 'run'), progress: false, progressSeconds: 0 }, io);
    expect(code, err).toBe(0);
    expect(err).toMatch(/^step 3\/5 \(epoch 1\/1\): \d+ member-steps\/s, best loss (\d\.\d{4}|-)$/m);
    expect(err.indexOf('step 3/5')).toBeLessThan(err.indexOf('epoch 1/1: step 5/5'));
  });

  it('the first line names the engine; where the fused step does not cover the model, one line says why', async () => {
    // --engine auto, as the default is, whatever NETC_ENGINE says (the suite also runs with NETC_ENGINE=ops)
    const fused = await run('train', 'examples/xor.net', '--steps', '2', '--engine', 'auto', '--out', join(tmp(), 'run'));
    expect(fused.code, fused.err).toBe(0);
    expect(fused.err.split('\n').find((l) => l.startsWith('training'))).toContain('(grouped, fused step)');
    const ops = await run('train', 'examples/xor.net', '--steps', '2', '--engine', 'ops', '--out', join(tmp(), 'run2'));
    expect(ops.err).toContain('(grouped, TF.js ops)');
    expect(ops.err).not.toContain('does not cover');
    const blockdiag = await run('train', 'examples/xor.net', '--steps', '2', '--lowering', 'blockdiag', '--engine', 'auto', '--out', join(tmp(), 'run3'));
    expect(blockdiag.err).toContain('(blockdiag, TF.js ops)');
    expect(blockdiag.err).toContain('the fused step does not cover the blockdiag lowering (the generated step is built for grouped): each step runs on TF.js ops');
  });

  it('a conv model with a shared conv trunk and batchnorm after its convs trains on the fused step', async () => {
    const dir = tmp();
    // 8x8 one-channel images of three classes: a bright row, a bright column, or neither
    const pixels = Array.from({ length: 64 }, (_, i) => `p${i}`);
    const rows = [['y0', 'y1', 'y2', ...pixels].join(',')];
    for (let e = 0; e < 48; e++) {
      const c = e % 3;
      const image = pixels.map((_, i) => ((c === 0 && Math.floor(i / 8) === e % 8) || (c === 1 && i % 8 === e % 8) ? 1 : ((i * 7 + e) % 5) / 10));
      rows.push([...[0, 1, 2].map((k) => (k === c ? 1 : 0)), ...image].join(','));
    }
    writeFileSync(join(dir, 'images.csv'), rows.join('\n') + '\n');
    const model = [
      'model trunk(input: [8, 8, 1]) {',
      '  shared conv2d(4, kernel: 3, padding: same, activation: relu)',
      '  conv2d(4, kernel: 3, padding: same, bias: false)',
      '  batchnorm()',
      '  relu()',
      '  maxpool2d(2)',
      '  flatten()',
      '  dense(3, activation: softmax)',
      '}',
      'ensemble { members: 3 seed: 2 vary lr: [0.003, 0.01, 0.03] }',
      'train { data: csv("images.csv", label: ["y0", "y1", "y2"]) loss: categorical_crossentropy batch: 16 steps: 4 }',
    ].join('\n');
    writeFileSync(join(dir, 'trunk.net'), model + '\n');
    const fused = await run('train', join(dir, 'trunk.net'), '--engine', 'auto', '--out', join(dir, 'run'));
    expect(fused.code, fused.err).toBe(0);
    expect(fused.err.split('\n').find((l) => l.startsWith('training'))).toContain('training 3 members of trunk (grouped, fused step)');
    expect(fused.err).not.toContain('does not cover');
    const ops = await run('train', join(dir, 'trunk.net'), '--engine', 'ops', '--out', join(dir, 'run2'));
    expect(ops.code, ops.err).toBe(0);
    expect(ops.err).toContain('(grouped, TF.js ops)');
  });

  it('counts in the singular say so: 1 member, 1 step, 1 epoch', async () => {
    const r = await run('train', 'examples/xor.net', '--members', '1', '--steps', '1', '--backend', 'cpu', '--out', join(tmp(), 'run'));
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('training 1 member of xor (grouped, TF.js ops) on 300 examples (+100 for validation): 1 step, 1 epoch of 19');
    expect(r.err).toContain('epoch 1/1: step 1/1, 1 member, best member 0');
    expect(r.out).toMatch(/^1 step x 1 member: trained in /m);
    expect(r.err + r.out).not.toMatch(/\b1 (members|steps|epochs)\b/);
  });
});
