// Data for sequence models: integer token ids from npy and npz, text() from a csv file and the built-in
// spam_assassin() as token ids (the vocabulary learnt from the training rows alone), the token-id range
// check, and the packaged images as 28 steps of 28 features.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileHost } from '../src/cli/host.js';
import { compile } from '../src/pipeline.js';
import { loadDataset } from '../src/data/load.js';
import { splitData, trainingRows } from '../src/data/split.js';
import { encodeTexts, learnVocabulary, tokenize } from '../src/data/text.js';
import { checkTokenIds } from '../src/data/token-ids.js';
import { spamAssassinFiles } from '../src/data/spam.js';
import { formatDataError, type Dataset } from '../src/data/dataset.js';
import { checkDataFit } from '../src/check/data-fit.js';
import { DiagnosticSink } from '../src/diagnostics/sink.js';
import type { LayerKind } from '../src/layers/layer-kind.js';
import type { ModelCheck } from '../src/check/check-model.js';
import { call, dataErrorOf, expectMatchesShape, tempDir } from './data/helpers.js';
import { npyBytes, npzBytes } from './data/npy-writer.js';
import { netc } from './helpers.js';

const dir = tempDir();
const fixtures = join(import.meta.dirname, 'fixtures', 'text');
let files = 0;
function file(bytes: Uint8Array, ext = 'npy'): string {
  const name = `s${files++}.${ext}`;
  writeFileSync(join(dir, name), bytes);
  return name;
}
const labels = (n: number) => file(npyBytes('<i8', [n], Array.from({ length: n }, (_, i) => i % 2)));

/** The diagnostics of a model with input `input` trained on `data` (paths relative to `base`), with the text each underlines. */
function checked(data: string, input: string, body: string, base = dir) {
  const source = `model m(input: ${input}) {\n  ${body}\n}\ntrain {\n  data: ${data}\n  loss: sparse_categorical_crossentropy\n  epochs: 1\n}\n`;
  const path = join(base, 'check.net');
  const state = compile(source, path, { host: fileHost(path) });
  return state.diagnostics.map((d) => ({ code: d.code, message: d.message, at: source.slice(d.start, d.start + d.length) }));
}

describe('integer token ids from npy and npz', () => {
  const ids = [0, 5, 9999, 3, 70000, 1]; // 2 examples of 3 steps
  it('loads [n, T] of every integer type as the exact ids, and uint8 as ids when the model reads token ids', async () => {
    for (const descr of ['<i4', '>i4', '<i8', '<u4', '<u8']) {
      const ds = await loadDataset(call('npy', { x: file(npyBytes(descr, [2, 3], ids)), y: labels(2) }), { baseDir: dir, seed: 0 });
      expect([ds.featureShape, Array.from(ds.x)], descr).toEqual([[3], ids]);
    }
    for (const descr of ['<i2', '<u2']) {
      const ds = await loadDataset(call('npy', { x: file(npyBytes(descr, [2, 3], [0, 5, 9999, 3, 7000, 1])), y: labels(2) }), { baseDir: dir, seed: 0 });
      expect(Array.from(ds.x), descr).toEqual([0, 5, 9999, 3, 7000, 1]);
    }
    const bytes = [0, 5, 255, 3, 7, 1];
    const npz = file(npzBytes({ x: npyBytes('|u1', [2, 3], bytes), y: npyBytes('<i8', [2], [0, 1]) }, true), 'npz');
    const pixels = await loadDataset(call('npz', { path: npz, x: 'x', y: 'y' }), { baseDir: dir, seed: 0 });
    expect(pixels.x[2]).toBe(1); // 255 is white, as ever
    const tokens = await loadDataset(call('npz', { path: npz, x: 'x', y: 'y' }), { baseDir: dir, seed: 0, tokenIds: true });
    expect(Array.from(tokens.x)).toEqual(bytes);
  });

  it('refuses an integer float32 would round, naming the array, the row and the value (NET4080)', async () => {
    const x = file(npyBytes('<i8', [3, 2], [1, 2, 3, 4, 2 ** 25, 2 ** 24 + 1]));
    const e = await dataErrorOf(() => loadDataset(call('npy', { x, y: labels(3) }), { baseDir: dir, seed: 0 }));
    expect(e.code).toBe(4080);
    expect(e.message).toMatch(new RegExp(`^"${x}" row 2 \\(counting from 0\\) holds 16777217 \\(<i8\\), which float32 cannot hold exactly`));
    // 2^25 is a float32, and 16777216 too: exact, so taken
    const ok = await loadDataset(call('npy', { x: file(npyBytes('<u4', [1, 2], [2 ** 25, 2 ** 24])), y: labels(1) }), { baseDir: dir, seed: 0 });
    expect(Array.from(ok.x)).toEqual([2 ** 25, 2 ** 24]);
  });
});

describe('the token-id range check', () => {
  const ds = (x: number[]): Dataset => ({ name: 'npy(x: "data/spam.npy")', count: x.length / 3, x: new Float32Array(x), featureShape: [3], y: new Float32Array(x.length / 3), labels: { kind: 'classes', classes: 2 } });
  it('names the data, the row, the step and the value of the first id outside [0, vocab) (NET4090)', () => {
    expect(() => checkTokenIds(ds([0, 1, 9999, 4, 5, 6]), { layer: 'embedding_1', vocab: 10000 })).not.toThrow();
    const error = (x: number[]) => {
      try {
        checkTokenIds(ds(x), { layer: 'embedding_1', vocab: 10000 });
      } catch (e) {
        return formatDataError(e as never);
      }
    };
    expect(error([0, 1, 2, 3, 12001, 5])).toBe(`npy(x: "data/spam.npy"): error NET4090: row 1 (counting from 0), step 1: token id 12001 is outside the vocabulary [0, 10000) of embedding_1, which reads the model's input`);
    expect(error([0, 0.5, 2])).toBe(`npy(x: "data/spam.npy"): error NET4090: row 0 (counting from 0), step 1: token id 0.5 is not a whole number: embedding_1 reads the model's input as token ids in [0, 10000)`);
    expect(error([0, 1, -1])).toContain('step 2: token id -1 is outside');
  });
});

describe('a text source against the layer that reads token ids, at check time', () => {
  // no layer kind reads token ids yet on this branch: a stand-in with the embedding's rule
  const embedding = { name: 'embedding', tokenIds: (a: Record<string, unknown>) => a.vocab as number } as unknown as LayerKind;
  const model = (vocab: number): ModelCheck => ({
    input: [4],
    model: { name: 'm', input: [4], layers: [{ index: 0, kind: embedding, shared: false, args: { vocab }, inputs: [-1], shape: [4, 8], span: { start: 0, length: 1 } }] },
  });
  const reported = (tokens: number, vocab: number) => {
    const sink = new DiagnosticSink('f.net');
    const at = { start: 10, length: 5 };
    checkDataFit(model(vocab), { features: [4], labels: { kind: 'values', columns: 1 }, tokens }, undefined, { data: at, loss: at }, 'text', sink);
    return sink.diagnostics.map((d) => [d.code, d.message]);
  };
  it('is NET4091 when the data gives more ids than the layer looks up', () => {
    expect(reported(10000, 10000)).toEqual([]);
    expect(reported(20000, 10000)).toEqual([[4091, 'text() gives token ids in [0, 20000) (vocab: 20000), but embedding reads ids in [0, 10000): give the data vocab: 10000 or less, or the layer a vocabulary of 20000']]);
  });
});

describe('text(): a csv column as token ids', () => {
  it('tokenizes lowercased runs of [a-z0-9\']', () => {
    expect(tokenize("Don't STOP-now! 3x ok")).toEqual(["don't", 'stop', 'now', '3x', 'ok']);
  });

  it('learns the vocabulary from the training rows only: by frequency, ties by first appearance; pads at the front, keeps the first words', async () => {
    const args = { path: 'reviews.csv', text: 'review', label: 'stars', vocab: 8, length: 4 };
    const ds = await loadDataset(call('text', args), { baseDir: fixtures, seed: 0, holdout: { validation: 0.25, test: 0 } });
    expectMatchesShape(ds, call('text', args), fixtures);
    expect(ds.vocabulary).toEqual(['', '<oov>', 'good', 'bad', 'film', "it's", 'and', 'cast']);
    const rows = Array.from({ length: ds.count }, (_, r) => Array.from(ds.x.subarray(r * 4, r * 4 + 4)));
    // rows 7 and 8 are held out: their words are out of the vocabulary (1), never in it
    expect(rows).toEqual([[2, 4, 2, 7], [3, 1, 3, 1], [0, 2, 2, 2], [5, 3, 6, 5], [0, 1, 1, 4], [0, 1, 6, 3], [1, 1, 1, 1], [0, 1, 1, 1]]);
    expect(Array.from(ds.y)).toEqual([1, 0, 1, 0, 1, 0, 1, 0]);
    const all = await loadDataset(call('text', { ...args, vocab: 100 }), { baseDir: fixtures, seed: 0 });
    expect(all.vocabulary).toContain('zebra');
  });

  it("learns from the rows splitData trains on under holdout: shuffled too", () => {
    const count = 50;
    const ds: Dataset = { name: 'd', count, x: Float32Array.from({ length: count }, (_, i) => i), featureShape: [1], y: new Float32Array(count), labels: { kind: 'values', columns: 1 } };
    const { train } = splitData(ds, 0.2, 0.1, 7);
    expect(Array.from(trainingRows(count, { validation: 0.2, test: 0.1, seed: 7 }))).toEqual(Array.from(train.x));
    const texts = [['b', 'a'], ['a'], ['c', 'c', 'c']];
    const vocabulary = learnVocabulary(texts, [0, 1], 10);
    expect(vocabulary).toEqual(['', '<oov>', 'a', 'b']);
    expect(Array.from(encodeTexts(texts, vocabulary, 2))).toEqual([3, 2, 0, 2, 1, 1]);
  });

  it('checks its columns at the argument that names them, and its vocabulary against the input layer', () => {
    const data = (text: string) => `text("reviews.csv", text: "${text}", label: "stars", length: 4)`;
    expect(checked(data('review'), '[4]', 'dense(2, activation: softmax)', fixtures)).toEqual([]);
    expect(checked(data('body'), '[4]', 'dense(2, activation: softmax)', fixtures)).toEqual([
      { code: 4008, message: 'the csv file "reviews.csv" has no column "body"; its columns are: id, review, stars', at: '"body"' },
    ]);
    expect(checked(data('review'), '[5]', 'dense(2, activation: softmax)', fixtures)[0]).toMatchObject({ code: 4006, message: expect.stringContaining('text() gives examples of shape [4]') });
  });
});

describe('spam_assassin()', () => {
  it('lists 6,046 emails: 4,150 ham and 1,896 spam', () => {
    expect(spamAssassinFiles().map((files) => files.length)).toEqual([4150, 1896]);
  });

  it('reads a slice of its interleaved order, both labels, as token ids', async () => {
    const args = { vocab: 500, length: 50, limit: 60, offset: 3000 };
    const ds = await loadDataset(call('spam_assassin', args), { baseDir: '.', seed: 0, holdout: { validation: 0.5, test: 0 } });
    expectMatchesShape(ds, call('spam_assassin', args));
    expect(ds.count).toBe(60);
    const spam = ds.y.reduce((a, b) => a + b, 0);
    expect(spam).toBeGreaterThan(10);
    expect(spam).toBeLessThan(30);
    expect(ds.vocabulary!.length).toBe(500);
    expect(ds.x.every((v) => Number.isInteger(v) && v >= 0 && v < 500)).toBe(true);
  });
});

describe('images as sequences', () => {
  it('mnist() and fashion_mnist() fit a model whose input is [28, 28]: 28 steps of 28 features', () => {
    for (const set of ['mnist', 'fashion_mnist']) {
      expect(checked(`${set}(limit: 100)`, '[28, 28]', 'flatten()\n  dense(10, activation: softmax)'), set).toEqual([]);
    }
  });
});

describe('netc train on token ids outside an embedding’s vocabulary', () => {
  it('stops at load time with NET4090, naming the row, the step and the id', async () => {
    const rows = ['a,b,c,y', '1,2,3,0', '4,5,6,1', '7,12,0,1', '3,2,1,0'];
    writeFileSync(join(dir, 'ids.csv'), rows.join('\n') + '\n');
    const net = join(dir, 'ids.net');
    writeFileSync(net, 'model m(input: [3]) {\n  embedding(10, 2)\n  flatten()\n  dense(1, activation: sigmoid)\n}\nensemble { members: 2 seed: 1 }\ntrain { data: csv("ids.csv", label: "y") loss: binary_crossentropy optimizer: sgd(lr: 0.1) batch: 2 epochs: 1 }\n');
    const { code, err } = await netc('train', net, '--out', join(dir, 'ids-run'));
    expect(code).toBe(1);
    expect(err).toContain('error NET4090: row 2 (counting from 0), step 1: token id 12 is outside the vocabulary [0, 10) of embedding_1');
    expect(err).not.toMatch(/\n\s+at /);
  });
});
