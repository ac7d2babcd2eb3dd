// Extraction: members come out of the fused population as ordinary TF.js LayersModels that load with
// plain @tensorflow/tfjs, predict what the fused member predicts, and train on alone (model.fit) to what
// netc trained. Import puts a model back into a member's slot.
import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { loadTF } from '../src/runtime/backend.js';
import { netc } from './helpers.js';
import { lowerings } from '../src/layers/forward.js';
import { openRun, readCheckpoint } from '../src/cli/run-dir.js';
import { memberParams } from '../src/train/checkpoint.js';
import { registerFileScheme } from '../src/serve/file-io.js';
import { parseDataSource } from '../src/check/data-expression.js';
import { loadDataset } from '../src/data/load.js';
import type { TF } from '../src/kernels/tf.js';
import { expectClose } from './equivalence/harness.js';

// TF.js as netc loads it, without TF.js's Node.js banner on the first cpu tensor (issue 37)
await loadTF();

const tmp = () => mkdtempSync(join(tmpdir(), 'netc-extract-'));

const MODEL = `model m(input: [4]) {
  h = dense(8, activation: relu)
  b = batchnorm()
  r = dense(8, activation: tanh)
  add(b, r)
  dense(3, activation: softmax)
}
ensemble { members: 4 seed: 6 vary lr: [0.01, 0.03, 0.003, 0.02] }
train { data: iris() validation: 0.2 loss: categorical_crossentropy optimizer: adam batch: 16 epochs: 1 }
`;

// a static file server on loopback: plain TF.js loads over http with no netc code at all
let base = '';
const server = createServer((req, res) => {
  try {
    res.end(readFileSync(decodeURIComponent(new URL(req.url!, 'http://x').pathname)));
  } catch {
    res.statusCode = 404;
    res.end();
  }
});
beforeAll(async () => {
  await tf.setBackend('cpu');
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => void server.close());

describe.each(lowerings)('extract under %s', (lowering) => {
  it('every member loads in plain TF.js and predicts what its fused self predicts', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'm.net'), MODEL);
    const run = join(dir, 'run');
    expect((await netc('train', join(dir, 'm.net'), '--lowering', lowering, '--backend', 'cpu', '--out', run)).code).toBe(0);
    const r = await netc('extract', run, '--all', '--out', join(dir, 'models'), '--backend', 'cpu');
    expect(r.code, r.err).toBe(0);
    const x = tf.randomUniform([7, 4], -1, 1, 'float32', 3);
    const { population } = openRun(run, tf as unknown as TF);
    const fused = population.forward(x, false);
    for (let m = 0; m < 4; m++) {
      const model = await tf.loadLayersModel(`${base}${join(dir, 'models', `member-${m}`, 'model.json')}`);
      const mine = tf.squeeze(tf.slice(fused, m, 1), [0]);
      expectClose((model.predict(x) as tf.Tensor).dataSync(), mine.dataSync(), `member ${m}`);
      model.dispose();
    }
    population.dispose();
  });
});

describe('extract', () => {
  it('loads from file:// in plain TF.js once registerFileScheme has taught it the scheme', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'm.net'), MODEL);
    await netc('train', join(dir, 'm.net'), '--steps', '0', '--backend', 'cpu', '--out', join(dir, 'run'));
    expect((await netc('extract', join(dir, 'run'), '--member', '2', '--out', join(dir, 'm2'), '--backend', 'cpu')).code).toBe(0);
    registerFileScheme(tf as unknown as TF);
    const model = await tf.loadLayersModel(pathToFileURL(join(dir, 'm2', 'model.json')).href);
    expect(model.layers.map((l) => l.name)).toEqual(['input', 'dense_1', 'batchnorm_1', 'dense_2', 'add_1', 'dense_3']);
    // the untrained population: member 2's initial weights
    const { manifest, tensors } = readCheckpoint(join(dir, 'run'));
    expect(Array.from(model.getLayer('dense_1').getWeights()[0].dataSync())).toEqual(Array.from(memberParams(manifest, tensors, 2).get('dense_1/kernel')!));
  });

  it('--best follows the leaderboard, or --metric', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'm.net'), MODEL);
    await netc('train', join(dir, 'm.net'), '--backend', 'cpu', '--out', join(dir, 'run'));
    const summary = JSON.parse(readFileSync(join(dir, 'run', 'summary.json'), 'utf8'));
    const byLoss = [...summary.per_member].sort((a, b) => a.metrics.loss - b.metrics.loss)[0].member;
    const r = await netc('extract', join(dir, 'run'), '--best', '--metric', 'loss', '--out', join(dir, 'best'), '--backend', 'cpu');
    expect(r.out).toContain(`member ${byLoss} `);
    expect(JSON.parse(readFileSync(join(dir, 'best', 'model.json'), 'utf8')).netc.member).toBe(byLoss);
  });

  it('writes a leaky_relu activation argument as a linear layer and a LeakyReLU layer with alpha 0.2, and predicts what the fused member predicts', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'm.net'), 'model m(input: [2]) { dense(3, activation: leaky_relu) dense(1) }\nensemble { members: 2 }\ntrain { data: xor() loss: mse steps: 5 }\n');
    const run = join(dir, 'run');
    expect((await netc('train', join(dir, 'm.net'), '--backend', 'cpu', '--out', run)).code).toBe(0);
    const r = await netc('extract', run, '--member', '1', '--out', join(dir, 'x'), '--backend', 'cpu');
    expect(r.code, r.err).toBe(0);
    const model = await tf.loadLayersModel(`${base}${join(dir, 'x', 'model.json')}`);
    expect(model.layers.map((l) => l.name)).toEqual(['input', 'dense_1', 'dense_1_leaky_relu', 'dense_2']);
    expect(model.getLayer('dense_1').getConfig().activation).toBe('linear');
    expect(model.getLayer('dense_1_leaky_relu').getConfig().alpha).toBe(0.2);
    const x = tf.randomUniform([16, 2], -2, 2, 'float32', 4);
    const { population } = openRun(run, tf as unknown as TF);
    const fused = population.forward(x, false);
    expectClose((model.predict(x) as tf.Tensor).dataSync(), tf.slice(fused, 1, 1).dataSync(), 'member 1');
    population.dispose();
    model.dispose();
  });

  it('refuses bad choices', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'm.net'), 'model m(input: [2]) { dense(3, activation: relu) dense(1) }\ntrain { data: xor() loss: mse steps: 1 }\n');
    await netc('train', join(dir, 'm.net'), '--backend', 'cpu', '--out', join(dir, 'run'));
    expect((await netc('extract', join(dir, 'run'), '--member', '5', '--out', join(dir, 'x'))).err).toContain('has no member 5');
    expect((await netc('extract', join(dir, 'run'), '--out', join(dir, 'x'))).code).toBe(2);
    expect((await netc('extract', join(dir, 'nope'), '--all', '--out', join(dir, 'x'))).err).toContain('is not a netc run directory');
  });

  it('--out where no directory can be made, into the run itself, or onto another run: one line, exit 1, nothing written', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'm.net'), 'model m(input: [2]) { dense(1) }\ntrain { data: xor() loss: mse steps: 1 }\n');
    const run = join(dir, 'run');
    expect((await netc('train', join(dir, 'm.net'), '--backend', 'cpu', '--out', run)).code).toBe(0);
    const cases: [string[], string][] = [
      // a recursive mkdir spun forever here
      [['--member', '0', '--out', '/proc/netc-test/m'], 'netc: cannot create the output directory /proc/netc-test/m: '],
      [['--all', '--out', run], `netc: --out ${run} is inside the run ${run}`],
      [['--member', '0', '--out', join(run, 'm0')], 'is inside the run'],
    ];
    for (const [args, message] of cases) {
      const r = await netc('extract', run, ...args, '--backend', 'cpu');
      expect(r.code, r.err).toBe(1);
      expect(r.err).toContain(message);
      expect(r.err).not.toMatch(/\n\s+at |bug in netc/);
    }
    expect(existsSync(join(run, 'member-0')) || existsSync(join(run, 'm0')) || existsSync(join(run, 'model.json'))).toBe(false);
    const other = join(dir, 'other');
    expect((await netc('train', join(dir, 'm.net'), '--backend', 'cpu', '--out', other)).code).toBe(0);
    expect((await netc('extract', run, '--all', '--out', other, '--backend', 'cpu')).err).toContain(`netc: ${other} is a netc run directory`);
  });
});

// extract never replaces a file of the user's in --out without --force, as predict --output and train --out
// refuse: each format's files, member-K/'s with --all, and --all --format pytorch's stacked files.
describe('extract into a folder that holds files of the same names', () => {
  const tiny = 'model m(input: [2]) { dense(1) }\nensemble { members: 2 }\ntrain { data: xor() loss: mse steps: 1 }\n';
  let run = '';
  beforeAll(async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'm.net'), tiny);
    run = join(dir, 'run');
    expect((await netc('train', join(dir, 'm.net'), '--backend', 'cpu', '--out', run)).code).toBe(0);
  });

  it.each([
    [['--member', '0'], ['model.json'], 'model.json'],
    [['--member', '0'], ['weights.bin', 'model.json'], 'model.json and weights.bin'],
    [['--all'], ['member-1/weights.bin'], 'member-1/weights.bin'],
    [['--member', '1', '--format', 'pytorch'], ['model.py'], 'model.py'],
    [['--member', '1', '--format', 'pytorch'], ['model.safetensors'], 'model.safetensors'],
    [['--all', '--format', 'pytorch'], ['members.json', 'ensemble.safetensors'], 'ensemble.safetensors and members.json'],
    [['--all', '--format', 'pytorch'], ['member-0/model.py'], 'member-0/model.py'],
    [['--member', '0', '--format', 'onnx'], ['model.onnx'], 'model.onnx'],
    [['--all', '--format', 'onnx'], ['member-0/model.onnx', 'member-1/model.onnx'], 'member-0/model.onnx and member-1/model.onnx'],
    [['--ensemble', '--format', 'onnx'], ['ensemble.onnx'], 'ensemble.onnx'],
  ])('%j over %j: refused without --force, nothing written; replaced with it', async (args, mine, listed) => {
    const out = tmp();
    for (const f of mine) {
      mkdirSync(dirname(join(out, f)), { recursive: true });
      writeFileSync(join(out, f), `mine: ${f}\n`);
    }
    writeFileSync(join(out, 'notes.txt'), 'my notes\n');
    const before = readdirSync(out, { recursive: true }).map(String).sort();
    const r = await netc('extract', run, ...args, '--out', out, '--backend', 'cpu');
    expect(r.code, r.err).toBe(1);
    expect(r.err).toBe(`netc: --out ${out} already holds ${listed}, which netc extract would write; give --force to replace ${mine.length === 1 ? 'it' : 'them'}, or another --out\n`);
    for (const f of mine) expect(readFileSync(join(out, f), 'utf8')).toBe(`mine: ${f}\n`);
    expect(readdirSync(out, { recursive: true }).map(String).sort()).toEqual(before);
    const forced = await netc('extract', run, ...args, '--out', out, '--backend', 'cpu', '--force');
    expect(forced.code, forced.err).toBe(0);
    for (const f of mine) expect(readFileSync(join(out, f), 'utf8')).not.toBe(`mine: ${f}\n`);
    expect(readFileSync(join(out, 'notes.txt'), 'utf8')).toBe('my notes\n');
  });

  it('writes beside files of other names without --force, and refuses a folder where a file goes', async () => {
    const out = tmp();
    writeFileSync(join(out, 'notes.txt'), 'my notes\n');
    expect((await netc('extract', run, '--member', '0', '--out', out, '--backend', 'cpu')).code).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['model.json', 'notes.txt', 'weights.bin']);
    const folder = tmp();
    mkdirSync(join(folder, 'model.onnx'));
    const r = await netc('extract', run, '--member', '0', '--format', 'onnx', '--out', folder, '--force');
    expect(r.code).toBe(1);
    expect(r.err).toBe(`netc: cannot write ${join(folder, 'model.onnx')}: it is a directory; give another --out\n`);
  });
});

// Every layer argument `vary` can give a member, and an optimizer one: each member's own values, cycled
// from these lists by member id, differ from the file's (batchnorm() and layernorm() defaults, 0.2, 0.2).
const MOMENTA = [0.5, 0.8, 0.95];
const RATES = [0.1, 0.3, 0.5];
const VARIED = `model m(input: [2]) {
  bn = batchnorm()
  dense(8, activation: tanh)
  ln = layernorm()
  leak = leaky_relu(0.2)
  drop = dropout(0.2)
  dense(1, activation: sigmoid)
}
ensemble {
  members: 3
  seed: 7
  vary lr: [0.01, 0.03, 0.1]
  vary bn.momentum: [${MOMENTA.join(', ')}]
  vary bn.epsilon: [0.01, 0.1, 1.0]
  vary ln.epsilon: [0.05, 0.5, 2.0]
  vary leak.alpha: [0.01, 0.5, 0.9]
  vary drop.rate: [${RATES.join(', ')}]
}
train { data: moons(n: 200) validation: 0.25 loss: binary_crossentropy optimizer: adam batch: 25 epochs: 1 }
`;

describe('extract with varied layer arguments', () => {
  it("each extracted member predicts what netc predict says it predicts, and carries its own rate and momentum", async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'm.net'), VARIED);
    const run = join(dir, 'run');
    expect((await netc('train', join(dir, 'm.net'), '--backend', 'cpu', '--out', run)).code).toBe(0);
    expect((await netc('extract', run, '--all', '--out', join(dir, 'models'), '--backend', 'cpu')).code).toBe(0);
    const data = 'moons(n: 40)';
    const p = await netc('predict', run, '--data', data, '--combine', 'none', '--format', 'json', '--backend', 'cpu');
    expect(p.code, p.err).toBe(0);
    const predicted = JSON.parse(p.out) as { members: number[]; predictions: { members: { p: number[] }[] }[] };
    expect(predicted.members).toEqual([0, 1, 2]);
    // the same examples predict drew: generated from the run's seed
    const ds = await loadDataset(parseDataSource(data).config!, { baseDir: dir, seed: 7 });
    const x = tf.tensor(ds.x, [ds.count, 2]);
    for (const [m, id] of predicted.members.entries()) {
      const model = await tf.loadLayersModel(`${base}${join(dir, 'models', `member-${id}`, 'model.json')}`);
      const netcSays = predicted.predictions.flatMap((e) => e.members[m].p);
      expectClose((model.predict(x) as tf.Tensor).dataSync(), netcSays, `member ${id}`);
      expect(model.getLayer('dropout_1').getConfig().rate, `member ${id} dropout rate`).toBe(RATES[id]);
      const bn = model.getLayer('batchnorm_1');
      expect(bn.getConfig().momentum, `member ${id} momentum`).toBe(MOMENTA[id]);
      // trained on with model.fit, the running mean moves by the member's own momentum (bn reads x itself)
      const before = bn.getWeights()[2].dataSync().slice();
      const batchMean = tf.mean(x, 0).dataSync();
      model.compile({ optimizer: tf.train.sgd(0.01), loss: 'binaryCrossentropy' });
      await model.fit(x, tf.tensor(ds.y, [ds.count, 1]), { batchSize: ds.count, epochs: 1, shuffle: false, verbose: 0 });
      const expected = Array.from(before, (v, j) => v - (v - batchMean[j]) * (1 - MOMENTA[id]));
      expectClose(bn.getWeights()[2].dataSync(), expected, `member ${id} moving_mean after fit`);
      model.dispose();
    }
  });

  it('model.json names the initializers netc used: init:/bias_init: as written, else glorot_uniform and zeros', async () => {
    const dir = tmp();
    writeFileSync(
      join(dir, 'm.net'),
      'model m(input: [2, 2, 1]) {\n  conv2d(2, kernel: 2, init: he_normal, bias_init: ones)\n  flatten()\n  dense(4)\n  dense(3, activation: softmax, init: lecun_uniform, bias_init: glorot_normal)\n}\n' +
        'train { data: iris() loss: categorical_crossentropy steps: 1 }\n',
    );
    const run = join(dir, 'run');
    expect((await netc('train', join(dir, 'm.net'), '--steps', '0', '--backend', 'cpu', '--out', run)).code).toBe(0);
    expect((await netc('extract', run, '--member', '0', '--out', join(dir, 'm0'), '--backend', 'cpu')).code).toBe(0);
    const layers = JSON.parse(readFileSync(join(dir, 'm0', 'model.json'), 'utf8')).modelTopology.config.layers as { name: string; config: Record<string, unknown> }[];
    const inits = Object.fromEntries(layers.filter((l) => l.config.kernel_initializer).map((l) => [l.name, [l.config.kernel_initializer, l.config.bias_initializer]]));
    // Keras' definitions of the initializers, serialized as tfjs-layers and Keras write them
    const scaling = (scale: number, mode: string, distribution: string) => ({ class_name: 'VarianceScaling', config: { scale, mode, distribution, seed: null } });
    expect(inits).toEqual({
      conv2d_1: [scaling(2, 'fan_in', 'normal'), { class_name: 'Ones', config: {} }], // he_normal, ones
      dense_1: [scaling(1, 'fan_avg', 'uniform'), { class_name: 'Zeros', config: {} }], // glorot_uniform, zeros
      dense_2: [scaling(1, 'fan_in', 'uniform'), scaling(1, 'fan_avg', 'normal')], // lecun_uniform, glorot_normal
    });
  });
});

describe('an extracted initial member trained alone with model.fit matches netc', () => {
  it('same data order, same batches, same weights', async () => {
    const dir = tmp();
    const rows = Array.from({ length: 40 }, (_, i) => {
      const a = Math.sin(i * 1.7);
      const b = Math.cos(i * 0.9);
      return [a * b > 0 ? 1 : 0, a, b];
    });
    writeFileSync(join(dir, 'points.csv'), 'y,a,b\n' + rows.map((r) => r.join(',')).join('\n') + '\n');
    writeFileSync(
      join(dir, 'm.net'),
      'model m(input: [2]) { dense(6, activation: tanh) dense(1, activation: sigmoid) }\nensemble { members: 3 seed: 4 vary lr: [0.05, 0.01, 0.1] }\n' +
        'train { data: csv("points.csv", label: "y") validation: 0.25 loss: binary_crossentropy optimizer: adam batch: 8 epochs: 3 shuffle: false }\n',
    );
    await netc('train', join(dir, 'm.net'), '--steps', '0', '--backend', 'cpu', '--out', join(dir, 'untrained'));
    await netc('train', join(dir, 'm.net'), '--backend', 'cpu', '--out', join(dir, 'trained'));
    await netc('extract', join(dir, 'untrained'), '--member', '1', '--out', join(dir, 'm1'), '--backend', 'cpu');
    const model = await tf.loadLayersModel(`${base}${join(dir, 'm1', 'model.json')}`);
    model.compile({ optimizer: tf.train.adam(0.01), loss: 'binaryCrossentropy' });
    const x = tf.tensor(rows.map((r) => [r[1], r[2]]));
    const y = tf.tensor(rows.map((r) => [r[0]]));
    await model.fit(x, y, { batchSize: 8, epochs: 3, shuffle: false, validationSplit: 0.25, verbose: 0 });
    const { manifest, tensors } = readCheckpoint(join(dir, 'trained'));
    const trained = memberParams(manifest, tensors, 1);
    expectClose(model.getLayer('dense_1').getWeights()[0].dataSync(), trained.get('dense_1/kernel')!, 'dense_1/kernel');
    expectClose(model.getLayer('dense_2').getWeights()[1].dataSync(), trained.get('dense_2/bias')!, 'dense_2/bias');
  });
});

describe('import', () => {
  it("puts a model's weights into a member's slot, and explains mismatches", async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'm.net'), MODEL);
    const run = join(dir, 'run');
    await netc('train', join(dir, 'm.net'), '--steps', '3', '--backend', 'cpu', '--out', run);
    await netc('extract', run, '--member', '3', '--out', join(dir, 'm3'), '--backend', 'cpu');
    const r = await netc('import', join(dir, 'm3'), '--into', run, '--member', '0');
    expect(r.code, r.err).toBe(0);
    const { manifest, tensors } = readCheckpoint(run);
    for (const [name, values] of memberParams(manifest, tensors, 3)) expect(Array.from(memberParams(manifest, tensors, 0).get(name)!), name).toEqual(Array.from(values));
    expect(manifest.acc_beta1[0]).toBe(1);
    // a renamed weight and a reshaped one
    const json = JSON.parse(readFileSync(join(dir, 'm3', 'model.json'), 'utf8'));
    json.weightsManifest[0].weights[0].name = 'dense_1/kernal';
    writeFileSync(join(dir, 'm3', 'model.json'), JSON.stringify(json));
    const bad = await netc('import', join(dir, 'm3'), '--into', run, '--member', '0');
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("error NET4020: the run's model 'm' has no weight 'dense_1/kernal' (did you mean 'dense_1/kernel'?)");
    expect(bad.err).toContain("the model has no weight 'dense_1/kernel'");
    // model.json is one long line: its excerpt is a window around the span, underline included
    const excerpts = bad.err.split('\n').filter((l) => /^ *\d* \| /.test(l));
    expect(excerpts.length).toBeGreaterThanOrEqual(4);
    for (const l of excerpts) expect(l.length).toBeLessThanOrEqual(110);
    const [line, underline] = excerpts;
    expect(line.slice(underline.indexOf('~'), underline.lastIndexOf('~') + 1)).toBe('"dense_1/kernal"');
  });
});
