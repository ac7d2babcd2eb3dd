// npy() and npz() through the CLI: a .net file trains on .npy files found next to it, `netc eval` and
// `netc predict` take --data 'npy(...)' and 'npz(...)' (paths relative to the current directory), and a
// malformed file is one diagnostic line: at the data call in the .net file, or naming the data file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { netc, spawnNode } from './helpers.js';
import { tempDir } from './data/helpers.js';
import { npyBytes, npzBytes, zeroMember, zipOfDeflated } from './data/npy-writer.js';
import { analyze } from '../src/lsp/document.js';
import { diagnosticsOf } from '../src/lsp/diagnostics.js';
import { fileHost } from '../src/cli/host.js';

const root = tempDir();
const run = join(root, 'run');
const count = 30;
// three classes of points in [4]: class c is near (c, -c, c/2, 1)
const labels = Array.from({ length: count }, (_, i) => i % 3);
const features = labels.flatMap((c, i) => [c, -c, c / 2, 1].map((v, j) => v + 0.1 * Math.sin(7 * i + j)));
const oneHot = labels.flatMap((c) => [0, 1, 2].map((k) => (k === c ? 1 : 0)));

const NET = `model points(input: [4]) {
  dense(8, activation: relu)
  dense(3, activation: softmax)
}

ensemble {
  members: 2
  seed: 3
}

train {
  data: npy(x: "data/x.npy", y: "data/y.npy")
  loss: sparse_categorical_crossentropy
  optimizer: adam(lr: 0.05)
  batch: 10
  steps: 30
}
`;

/** A path as --data writes it: relative to the current directory, as a user in another folder would. */
const here = (file: string) => relative(process.cwd(), file);

beforeAll(async () => {
  mkdirSync(join(root, 'data'));
  writeFileSync(join(root, 'data', 'x.npy'), npyBytes('<f4', [count, 4], features));
  writeFileSync(join(root, 'data', 'y.npy'), npyBytes('<i8', [count], labels));
  writeFileSync(join(root, 'test.npz'), npzBytes({ x_test: npyBytes('<f8', [count, 4], features), y_test: npyBytes('<f4', [count, 3], oneHot) }, true));
  // a test set whose labels hold two of the three classes
  writeFileSync(join(root, 'two.npz'), npzBytes({ x: npyBytes('<f4', [4, 4], features.slice(0, 16)), y: npyBytes('|u1', [4], [0, 1, 0, 1]) }));
  writeFileSync(join(root, 'fortran.npy'), npyBytes('<f4', [count, 4], features, { fortran: true }));
  writeFileSync(join(root, 'wide.npy'), npyBytes('<f4', [count, 5], new Array(count * 5).fill(0)));
  writeFileSync(join(root, 'points.net'), NET);
  const trained = await netc('train', join(root, 'points.net'), '--backend', 'cpu', '--out', run);
  expect(trained.code, trained.err).toBe(0);
});

describe('npy and npz on the command line', () => {
  it('trains on .npy files relative to the .net file, and netc eval reads them again, and as an npz archive', async () => {
    const npy = await netc('eval', run, '--data', `npy(x: "${here(join(root, 'data/x.npy'))}", y: "${here(join(root, 'data/y.npy'))}")`, '--format', 'json', '--backend', 'cpu');
    expect(npy.code, npy.err).toBe(0);
    const npz = await netc('eval', run, '--data', `npz("${here(join(root, 'test.npz'))}", x: "x_test", y: "y_test")`, '--format', 'json', '--backend', 'cpu');
    expect(npz.code, npz.err).toBe(0);
    const [a, b] = [JSON.parse(npy.out), JSON.parse(npz.out)];
    expect(a.examples).toBe(count);
    // float64 features and one-hot labels in the archive are the same examples as float32 and indices
    expect(b.members).toEqual(a.members);
    expect(a.ensemble.mean.accuracy).toBeGreaterThan(0.5);
  });

  it('netc predict --data npz(...) gives each example its label, and data lacking a class keeps the run\'s classes', async () => {
    const p = await netc('predict', run, '--data', `npz("${here(join(root, 'test.npz'))}", x: "x_test", y: "y_test")`, '--format', 'json', '--backend', 'cpu');
    expect(p.code, p.err).toBe(0);
    const predictions = JSON.parse(p.out).predictions as { label: number; ensemble: { p: number[] } }[];
    expect(predictions.map((r) => r.label)).toEqual(labels);
    expect(predictions[0].ensemble.p).toHaveLength(3);
    const two = await netc('eval', run, '--data', `npz("${here(join(root, 'two.npz'))}", x: "x", y: "y")`, '--format', 'json', '--backend', 'cpu');
    expect(two.code, two.err).toBe(0);
    expect(JSON.parse(two.out).examples).toBe(4);
  });

  it('a malformed --data file is one line naming it; a shape that does not fit the model is --data(1,1)', async () => {
    const fortran = join(root, 'fortran.npy');
    const e = await netc('eval', run, '--data', `npy(x: "${here(fortran)}", y: "${here(join(root, 'data/y.npy'))}")`, '--backend', 'cpu');
    expect(e.code).toBe(1);
    expect(e.err.trim()).toBe(`${fortran}: error NET4072: "${here(fortran)}" is stored in Fortran order (fortran_order: True), which netc does not read; save it in C order: np.save(file, np.ascontiguousarray(array))`);
    const wide = await netc('predict', run, '--data', `npy(x: "${here(join(root, 'wide.npy'))}", y: "${here(join(root, 'data/y.npy'))}")`, '--backend', 'cpu');
    expect(wide.code).toBe(1);
    expect(wide.err).toContain('--data(1,1): error NET4006: the model input [4] does not fit the data: npy(x: ');
    expect(wide.err).toContain('gives examples of shape [5]');
  });

  it('netc train and netc check point at the data call for a missing npz key', async () => {
    const broken = join(root, 'broken.net');
    writeFileSync(broken, NET.replace('npy(x: "data/x.npy", y: "data/y.npy")', 'npz("test.npz", x: "x_train", y: "y_test")'));
    for (const command of ['check', 'train']) {
      const r = await netc(command, broken, ...(command === 'train' ? ['--backend', 'cpu', '--out', join(root, 'never')] : []));
      expect(r.code, command).toBe(1);
      expect(r.err).toContain(`${broken}(12,9): error NET4079: "test.npz" has no array "x_train"; the arrays it holds are: x_test, y_test`);
    }
  });
});

// A zip bomb: a 1.3 MB archive whose x.npy inflates to 1.1 GB of zeros (y.npy to 275 MB). The checker needs
// x's header and y's header (y's values only up to 16 MB), so that is all it inflates; a loader inflates
// no more than the values a header promises. Peak memory is the process's own maxRSS, in a child process.
describe('an npz zip bomb', () => {
  const bombDir = tempDir();
  const rows = 275_000_000;
  const net = join(bombDir, 'bomb.net');
  const source = `model m(input: [1]) {\n  dense(2, activation: softmax)\n}\ntrain { data: npz("bomb.npz", x: "x", y: "y", classes: 2) loss: sparse_categorical_crossentropy batch: 8 steps: 1 }\n`;
  const repo = fileURLToPath(new URL('..', import.meta.url));
  // prints the child's peak resident memory in MB on stderr as it exits
  const peak = join(bombDir, 'peak.cjs');
  const peakOf = (err: string) => Number(/peak (\d+) MB/.exec(err)?.[1]);
  beforeAll(() => {
    const x = zeroMember(npyBytes('<f4', [rows], []), 4 * rows);
    const y = zeroMember(npyBytes('|u1', [rows], []), rows);
    writeFileSync(join(bombDir, 'bomb.npz'), zipOfDeflated({ 'x.npy': x, 'y.npy': y }));
    // x's header promises 4 values; its member inflates to 1.1 GB past them
    const lying = zeroMember(npyBytes('<f4', [4, 1], []), 4 * rows);
    writeFileSync(join(bombDir, 'lying.npz'), zipOfDeflated({ 'x.npy': lying, 'y.npy': zeroMember(npyBytes('|u1', [4], []), 4) }));
    writeFileSync(net, source);
    writeFileSync(peak, 'process.on("exit", () => process.stderr.write(`peak ${Math.round(process.resourceUsage().maxRSS / 1024)} MB\\n`));\n');
  }, 60_000);

  it('netc check of a 1.3 MB archive that inflates to 1.1 GB stays under 300 MB (it peaked at 2.4 GB)', async () => {
    const r = await spawnNode(['-r', peak, join(repo, 'bin/netc.js'), 'check', net], bombDir);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('ok: model m');
    expect(peakOf(r.err), r.err).toBeLessThan(300);
  }, 120_000);

  it("the language server's analysis of the file answers at once, with the shape from x's header", () => {
    const started = performance.now();
    const a = analyze(TextDocument.create('file:///bomb.net', 'net', 1, source), net, fileHost(net));
    const ms = performance.now() - started;
    expect(diagnosticsOf(a)).toEqual([]);
    expect(ms).toBeLessThan(2000);
  });

  it('loading an archive whose member inflates past what its header promises reads only the promised values', async () => {
    const script = `import(${JSON.stringify(join(repo, 'dist/data/numpy.js'))}).then((m) => { const d = m.loadNpz('lying.npz', 'x', 'y', 2); console.log(JSON.stringify([d.count, Array.from(d.x)])); })`;
    const r = await spawnNode(['-r', peak, '-e', script], bombDir);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toEqual([4, [0, 0, 0, 0]]);
    expect(peakOf(r.err), r.err).toBeLessThan(300);
  }, 120_000);
});
