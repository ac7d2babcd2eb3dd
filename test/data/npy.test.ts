// npy() and npz(): .npy files and .npz archives written byte by byte here (npy-writer.ts), every dtype and
// label form netc reads, and every malformed file, both when it loads (a DataError naming the file) and at
// check time (the same code, at the data call in the .net file).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BoundValue } from '../../src/core/arg-spec.js';
import { fileHost } from '../../src/cli/host.js';
import { compile } from '../../src/pipeline.js';
import { call, dataErrorOf, expectMatchesShape, load, tempDir } from './helpers.js';
import { npyBytes, npyHeader, npzBytes } from './npy-writer.js';
import { npyValues, parseNpyHeader } from '../../src/data/npy.js';

const dir = tempDir();
let files = 0;

/** Writes bytes to a fresh file in the temp folder and returns its name. */
function file(bytes: Uint8Array, ext = 'npy'): string {
  const name = `f${files++}.${ext}`;
  writeFileSync(join(dir, name), bytes);
  return name;
}

const f4 = (shape: number[], values: number[]) => file(npyBytes('<f4', shape, values));
const labels = (values: number[], descr = '<i8') => file(npyBytes(descr, [values.length], values));

/** Loads a data call from the temp folder, and checks that the checker's shape() promised what loaded. */
async function loaded(name: string, args: Record<string, BoundValue>) {
  const ds = await load(name, args, dir);
  expectMatchesShape(ds, call(name, args), dir);
  return ds;
}

/** The diagnostics `netc check` gives a model with input `input` trained on `data`, with the text each underlines. */
function checked(data: string, input = '[3]', out = 'dense(2, activation: softmax)') {
  const source = `model m(input: ${input}) {\n  ${out}\n}\ntrain {\n  data: ${data}\n  loss: categorical_crossentropy\n  epochs: 1\n}\n`;
  const path = join(dir, 'check.net');
  const state = compile(source, path, { host: fileHost(path) });
  return state.diagnostics.map((d) => ({ code: d.code, message: d.message, at: source.slice(d.start, d.start + d.length) }));
}

const x3 = [0.5, -1, 2, 3.25, 0, 1e6]; // 2 examples of 3 features

describe('npy: dtypes and shapes', () => {
  it('reads float32 features [count, n] and int64 class indices, counting the classes', async () => {
    const ds = await loaded('npy', { x: f4([2, 3], x3), y: labels([2, 0]) });
    expect([ds.count, ds.featureShape, Array.from(ds.x), Array.from(ds.y), ds.labels]).toEqual([2, [3], x3, [2, 0], { kind: 'classes', classes: 3 }]);
    expect(ds.name).toMatch(/^npy\(x: "f\d+\.npy"\)$/);
  });

  it('reads float64 features as float32, little- and big-endian', async () => {
    const values = [0.1, 1 / 3, -2.5e-8, 7, 123456.789, -0.0];
    for (const descr of ['<f8', '>f8', '>f4']) {
      const ds = await loaded('npy', { x: file(npyBytes(descr, [2, 3], values)), y: labels([1, 0]) });
      expect(Array.from(ds.x)).toEqual(values.map(Math.fround));
    }
  });

  it('scales uint8 images to [0, 1] as idx does, [count, h, w] as [h, w, 1] and [count, h, w, c] as it is', async () => {
    const pixels = Array.from({ length: 12 }, (_, i) => i * 20);
    const hw = await loaded('npy', { x: file(npyBytes('|u1', [2, 2, 3], pixels)), y: labels([0, 1], '|u1') });
    expect([hw.featureShape, Array.from(hw.x)]).toEqual([[2, 3, 1], pixels.map((p) => Math.fround(p / 255))]);
    const hwc = await loaded('npy', { x: file(npyBytes('|u1', [2, 1, 2, 3], pixels)), y: labels([0, 1]) });
    expect(hwc.featureShape).toEqual([1, 2, 3]);
  });

  it('takes the other integer types and bool as they are, in either byte order', async () => {
    const values = [-3, 0, 7, 100, -128, 1];
    for (const descr of ['|i1', '<i2', '>i2', '<i4', '>i4', '<i8', '>i8']) {
      const ds = await loaded('npy', { x: file(npyBytes(descr, [2, 3], values)), y: labels([0, 1]) });
      expect(Array.from(ds.x), descr).toEqual(values);
    }
    const unsigned = [0, 1, 65535, 7, 40000, 2];
    for (const descr of ['<u2', '>u2', '<u4', '>u4', '<u8', '>u8']) {
      const ds = await loaded('npy', { x: file(npyBytes(descr, [2, 3], unsigned)), y: labels([0, 1]) });
      expect(Array.from(ds.x), descr).toEqual(unsigned);
    }
    const bools = await loaded('npy', { x: file(npyBytes('|b1', [2, 3], [1, 0, 0, 1, 1, 0])), y: labels([0, 1]) });
    expect(Array.from(bools.x)).toEqual([1, 0, 0, 1, 1, 0]);
  });

  it('reads the values wherever their bytes lie in memory (a Buffer may start at any offset of its pool)', () => {
    for (const descr of ['<f4', '<f8', '<i2', '<u4', '<i8', '>f8']) {
      const bytes = npyBytes(descr, [2, 3], [1, 2, 3, 4, 5, 6]);
      for (let offset = 0; offset < 8; offset++) {
        const shifted = new Uint8Array(bytes.length + offset).fill(0xee, 0, offset);
        shifted.set(bytes, offset);
        const at = shifted.subarray(offset);
        const where = { file: 'f.npy', shown: '"f.npy"' };
        expect(Array.from(npyValues(at, parseNpyHeader(at, where), where)), `${descr} at ${offset}`).toEqual([1, 2, 3, 4, 5, 6]);
      }
    }
  });

  it('reads x of shape [count] as one feature per example', async () => {
    const ds = await loaded('npy', { x: f4([3], [1, 2, 3]), y: labels([0, 1, 0]) });
    expect([ds.featureShape, ds.count]).toEqual([[1], 3]);
  });

  it('reads format versions 1.0, 2.0 and 3.0 (UTF-8 header)', async () => {
    for (const version of [1, 2, 3] as const) {
      const ds = await loaded('npy', { x: file(npyBytes('<f4', [2, 3], x3, { version })), y: file(npyBytes('<i8', [2], [1, 0], { version })) });
      expect(Array.from(ds.x)).toEqual(x3);
    }
  });

  it('reads a Fortran-order array with one axis longer than 1: its bytes are in C order too', async () => {
    const ds = await loaded('npy', { x: file(npyBytes('<f4', [3, 1], [1, 2, 3], { fortran: true })), y: labels([0, 1, 0]) });
    expect(Array.from(ds.x)).toEqual([1, 2, 3]);
  });
});

describe('npy: labels', () => {
  const x = () => f4([2, 3], x3);
  it('takes class indices of any integer type, bool, whole floats and [count, 1]', async () => {
    for (const descr of ['|u1', '|i1', '<i2', '<u4', '>i4', '<i8', '<u8', '<f4', '<f8']) {
      const ds = await loaded('npy', { x: x(), y: labels([3, 1], descr) });
      expect([Array.from(ds.y), ds.labels], descr).toEqual([[3, 1], { kind: 'classes', classes: 4 }]);
    }
    const bools = await loaded('npy', { x: x(), y: labels([1, 0], '|b1') });
    expect(bools.labels).toEqual({ kind: 'classes', classes: 2 });
    const column = await loaded('npy', { x: x(), y: file(npyBytes('<i4', [2, 1], [4, 2])) });
    expect([Array.from(column.y), column.labels]).toEqual([[4, 2], { kind: 'classes', classes: 5 }]);
  });

  it('counts at least 2 classes, and classes: gives more than the labels hold', async () => {
    expect((await loaded('npy', { x: x(), y: labels([0, 0]) })).labels).toEqual({ kind: 'classes', classes: 2 });
    expect((await loaded('npy', { x: x(), y: labels([0, 1]), classes: 10 })).labels).toEqual({ kind: 'classes', classes: 10 });
  });

  it('turns one-hot rows [count, classes] of floats or integers into class indices', async () => {
    for (const descr of ['<f4', '<f8', '|u1', '<i8']) {
      const ds = await loaded('npy', { x: x(), y: file(npyBytes(descr, [2, 4], [0, 0, 1, 0, 1, 0, 0, 0])) });
      expect([Array.from(ds.y), ds.labels], descr).toEqual([[2, 0], { kind: 'classes', classes: 4 }]);
    }
    const given = await loaded('npy', { x: x(), y: file(npyBytes('<f4', [2, 3], [0, 0, 1, 1, 0, 0])), classes: 3 });
    expect(given.labels).toEqual({ kind: 'classes', classes: 3 });
  });
});

describe('npz', () => {
  const arrays = () => ({ x_train: npyBytes('<f4', [2, 3], x3), y_train: npyBytes('<i8', [2], [1, 0]), x_test: npyBytes('|u1', [1, 3], [0, 51, 255]), y_test: npyBytes('<i8', [1], [1]) });
  for (const compressed of [false, true]) {
    it(`reads the arrays it is asked for from a ${compressed ? 'deflated (savez_compressed)' : 'stored (savez)'} archive`, async () => {
      const path = file(npzBytes(arrays(), compressed), 'npz');
      const train = await loaded('npz', { path, x: 'x_train', y: 'y_train' });
      expect([train.count, Array.from(train.x), Array.from(train.y), train.labels]).toEqual([2, x3, [1, 0], { kind: 'classes', classes: 2 }]);
      expect(train.name).toBe(`npz("${path}", x: "x_train")`);
      const test = await loaded('npz', { path, x: 'x_test', y: 'y_test', classes: 2 });
      expect(Array.from(test.x)).toEqual([0, 0.2, 1].map(Math.fround));
    });
  }

  it('takes a key with its .npy too, and reads one-hot labels from an archive', async () => {
    const path = file(npzBytes({ a: npyBytes('<f8', [2, 3], x3), b: npyBytes('<f4', [2, 2], [0, 1, 1, 0]) }, true), 'npz');
    const ds = await loaded('npz', { path, x: 'a.npy', y: 'b' });
    expect([Array.from(ds.y), ds.labels]).toEqual([[1, 0], { kind: 'classes', classes: 2 }]);
  });
});

describe('npy: long headers (issue 37)', () => {
  // a valid version 2.0 header of 20 MB: the dict, then spaces (np.save pads with them too)
  const long = (descr: string, shape: number[], values: number[], mb = 20) =>
    npyBytes(descr, shape, values, { version: 2, header: npyHeader(descr, shape) + ' '.repeat(mb << 20) });

  it('reads a 20 MB header from a .npy file and from stored and deflated .npz members, at load and check time', async () => {
    const [x, y] = [long('<f4', [2, 3], x3), npyBytes('<i8', [2], [1, 0])];
    expect(x.readUInt32LE(8)).toBeGreaterThan(20 << 20);
    // loaded() checks too: the checker's shape, from the header it reads through the host, is the one loaded
    const ds = await loaded('npy', { x: file(x), y: file(y) });
    expect([Array.from(ds.x), Array.from(ds.y)]).toEqual([x3, [1, 0]]);
    for (const compressed of [false, true]) {
      const path = file(npzBytes({ x, y }, compressed), 'npz');
      expect(Array.from((await loaded('npz', { path, x: 'x', y: 'y' })).x)).toEqual(x3);
    }
  });

  it('refuses a header longer than netc reads by its length, not as a file cut short', async () => {
    const head = Buffer.from([0x93, ...Buffer.from('NUMPY'), 2, 0, 0, 0, 0, 0]);
    head.writeUInt32LE(100 << 20, 8);
    const x = file(Buffer.concat([head, Buffer.from("{'descr': '<f4', ")]));
    const e = await loadError('npy', { x, y: labels([0, 1]) });
    expect(e).toMatchObject({ code: 4071, message: expect.stringContaining(`its header is ${100 << 20} bytes long, more than the ${64 << 20} bytes netc reads`) });
    expect(e.message).not.toContain('truncated');
    expect(checked(`npy(x: "${x}", y: "${labels([0, 1])}")`).map((d) => [d.code, d.message])).toEqual([[4071, e.message]]);
  });

  it('quotes at most the first 80 characters of a 2 MB header or value into an error', async () => {
    const pad = ' '.repeat(2 << 20);
    const y = labels([0, 1]);
    const broken = {
      syntax: `{'descr': '<f4', 'fortran_order': nope, ${pad}'shape': (2, 3), }`,
      notDict: `[1, 2, ${'3, '.repeat(1 << 20)}]`,
      shape: `{'descr': '<f4', 'fortran_order': False, 'shape': (${'-1, '.repeat(1 << 19)}), }`,
      descr: `{'descr': '${'x'.repeat(2 << 20)}', 'fortran_order': False, 'shape': (2, 3), }`,
      token: `{'descr': '<f4', 'fortran_order': '${'y'.repeat(2 << 20)}' 'shape': (2, 3), }`,
    };
    for (const [what, header] of Object.entries(broken)) {
      const e = await loadError('npy', { x: file(npyBytes('<f4', [2, 3], x3, { version: 2, header })), y });
      expect([e.code, e.message.length < 400, e.message], what).toEqual([expect.any(Number), true, expect.stringMatching(/…\(\d+ more characters\)/)]);
    }
  });
});

/** The DataError loading gives, as [code, file, message]. */
async function loadError(name: string, args: Record<string, BoundValue>) {
  const e = await dataErrorOf(() => load(name, args, dir));
  return { code: e.code, file: e.file, message: e.message };
}

describe('npy: malformed files, at load time', () => {
  const y = () => labels([0, 1]);
  const xError = (bytes: Uint8Array) => {
    const x = file(bytes);
    return loadError('npy', { x, y: y() }).then((e) => {
      expect(e.file).toBe(join(dir, x));
      expect(e.message.startsWith(`"${x}"`)).toBe(true);
      return e;
    });
  };

  it('a bad magic, saying what the file looks like when it knows', async () => {
    expect(await xError(Buffer.from('hello, this is no numpy file'))).toMatchObject({ code: 4070, message: expect.stringContaining('is not a .npy file: it does not begin with the magic string \\x93NUMPY') });
    expect((await xError(npzBytes({ a: npyBytes('<f4', [1], [1]) }))).message).toContain('it is a zip archive (an .npz file?); read it with npz(');
    expect((await xError(Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1]))).message).toContain('gzip');
    expect((await xError(Buffer.from([0x93, 0x4e]))).message).toContain('it is 2 byte(s) long');
  });

  it('an unknown version and broken header dicts', async () => {
    const v4 = npyBytes('<f4', [2, 3], x3);
    v4[6] = 4;
    expect(await xError(v4)).toMatchObject({ code: 4071, message: expect.stringContaining('format version 4.0; netc reads versions 1.0, 2.0 and 3.0') });
    expect((await xError(npyBytes('<f4', [2, 3], x3, { header: "{'descr': '<f4', 'shape': (2, 3), }" }))).message).toContain("it has no 'fortran_order'");
    expect((await xError(npyBytes('<f4', [2, 3], x3, { header: "{'descr': '<f4', 'fortran_order': False, 'shape': [2, -3], }" }))).message).toContain("its 'shape' is not a tuple of whole numbers");
    expect((await xError(npyBytes('<f4', [2, 3], x3, { header: "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3) " }))).message).toContain('the header ends early');
    // (6) is no tuple in Python, only 6 in parentheses: NumPy refuses it too
    expect((await xError(npyBytes('<f4', [6], x3, { header: "{'descr': '<f4', 'fortran_order': False, 'shape': (6), }" }))).message).toContain("its 'shape' is not a tuple of whole numbers: 6");
    expect((await xError(npyBytes('<f4', [2, 3], x3, { header: "{'descr': '<f4', 'fortran_order': nope, 'shape': (2, 3)}" }))).message).toContain('unexpected "n" at character 34');
    expect((await xError(npyBytes('<f4', [2, 3], x3, { header: "[1, 2]" }))).message).toContain('it is not a dict');
    expect((await xError(npyBytes('<f4', [2, 3], x3, { header: "{'descr': '<f4', 'fortran_order': 1, 'shape': (2, 3)}" }))).message).toContain("'fortran_order' is not True or False");
  });

  it('a header or data cut short', async () => {
    const whole = npyBytes('<f4', [2, 3], x3);
    expect(await xError(whole.subarray(0, 40))).toMatchObject({ code: 4074, message: expect.stringContaining('its header is 118 bytes long, the file ends after 30 of them') });
    expect(await xError(whole.subarray(0, whole.length - 5))).toMatchObject({
      code: 4074,
      message: expect.stringContaining('is truncated: its header promises 6 value(s) of shape (2, 3), 24 bytes of <f4, and the file holds 19 bytes after the header'),
    });
  });

  it('Fortran order, when the bytes differ from C order', async () => {
    expect(await xError(npyBytes('<f4', [2, 3], x3, { fortran: true }))).toMatchObject({ code: 4072, message: expect.stringContaining('np.ascontiguousarray') });
  });

  it('a dtype netc does not read, named as NumPy names it', async () => {
    const cases: [string, string][] = [
      ['<f2', "dtype '<f2' (float16)"],
      ['<c8', "dtype '<c8' (complex64)"],
      ['<U5', "dtype '<U5' (a unicode string)"],
      ['|O', "dtype '|O' (object)"],
      ['<M8[ns]', "dtype '<M8[ns]' (datetime64)"],
      ['<i16', "dtype '<i16'"],
    ];
    for (const [descr, shown] of cases) {
      const e = await xError(npyBytes(descr, [2, 3], []));
      expect([e.code, e.message], descr).toEqual([4073, expect.stringContaining(`holds ${shown}, which netc does not read; it reads bool, int8 to int64, uint8 to uint64, float32 and float64`)]);
    }
    const structured = npyBytes('', [2], [], { header: "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (2,), }" });
    expect((await xError(structured)).message).toContain('a structured dtype (with fields)');
    expect((await xError(npyBytes('=f4', [2, 3], []))).message).toContain('its byte order is the writing machine\'s ("=")');
  });

  it('a float that is no finite float32 (NaN, or a float64 beyond 3.4e38), by its byte offset', async () => {
    expect(await xError(npyBytes('<f4', [2, 3], [0, 1, NaN, 2, 3, 4]))).toMatchObject({ code: 4019, message: expect.stringContaining('at byte offset 136 (value 2, counting from 0) holds NaN') });
    expect((await xError(npyBytes('<f8', [2, 3], [0, 1, 2, 3, 1e39, 4]))).message).toContain('at byte offset 160 (value 4, counting from 0) holds 1e+39');
  });

  it('x and y of different lengths', async () => {
    const [x, yy] = [f4([2, 3], x3), labels([0, 1, 1])];
    expect(await loadError('npy', { x, y: yy })).toEqual({ code: 4075, file: join(dir, yy), message: `x and y disagree: "${x}" holds 2 example(s), "${yy}" holds 3 label(s)` });
  });

  it('shapes that are no features or labels', async () => {
    const scalar = f4([], [1]);
    expect(await loadError('npy', { x: scalar, y: y() })).toMatchObject({ code: 4076, message: `"${scalar}" has shape (): it is a single number; features need one row per example, [count, ...]` });
    const cube = file(npyBytes('<i8', [2, 2, 2], [0, 1, 0, 1, 0, 1, 0, 1]));
    expect((await loadError('npy', { x: f4([2, 3], x3), y: cube })).message).toBe(`"${cube}" has shape (2, 2, 2): labels are one class index per example, [count], or one one-hot row per example, [count, classes]`);
    const hot = file(npyBytes('<f4', [2, 3], [0, 0, 1, 1, 0, 0]));
    expect((await loadError('npy', { x: f4([2, 3], x3), y: hot, classes: 5 })).message).toBe(`"${hot}" has shape (2, 3): one-hot rows of 3 classes, but classes: 5; give classes: 3, or leave classes: out (one-hot rows give their own count)`);
  });

  it('one-hot rows that are not one-hot, and class indices that are none', async () => {
    const two = file(npyBytes('<f4', [2, 3], [0, 0, 1, 1, 1, 0]));
    expect(await loadError('npy', { x: f4([2, 3], x3), y: two })).toEqual({
      code: 4077,
      file: join(dir, two),
      message: `row 1 of "${two}" (counting from 0) is not one-hot: a [count, 3] label array needs one 1 and 2 0s in each row, this row is [1, 1, 0]`,
    });
    const soft = file(npyBytes('<f4', [2, 2], [0.3, 0.7, 1, 0]));
    expect((await loadError('npy', { x: f4([2, 3], x3), y: soft })).message).toContain('row 0 of');
    const half = labels([0, 1.5], '<f4');
    expect(await loadError('npy', { x: f4([2, 3], x3), y: half })).toMatchObject({ code: 4017, message: `label 1.5 of example 1 (counting from 0) is not a class index: class indices in "${half}" are whole numbers from 0` });
    const big = labels([0, 7]);
    expect((await loadError('npy', { x: f4([2, 3], x3), y: big, classes: 3 })).message).toContain('label 7 of example 1 (counting from 0) is not a class index in 0..2: classes: 3 allows 3 classes; give classes: 8 or more');
    expect((await loadError('npy', { x: f4([2, 3], x3), y: labels([-1, 0]) })).code).toBe(4017);
  });

  it('a file that is missing or a folder', async () => {
    expect(await loadError('npy', { x: 'none.npy', y: y() })).toMatchObject({ code: 4011, file: join(dir, 'none.npy'), message: expect.stringContaining('cannot read the data file "none.npy"') });
    expect((await loadError('npy', { x: '.', y: y() })).message).toContain('it is a directory, not a file');
  });
});

describe('npz: malformed archives, at load time', () => {
  const good = () => ({ x_train: npyBytes('<f4', [2, 3], x3), y_train: npyBytes('<i8', [2], [1, 0]) });
  const npzError = (bytes: Uint8Array, x = 'x_train', y = 'y_train') => {
    const path = file(bytes, 'npz');
    return loadError('npz', { path, x, y }).then((e) => ({ ...e, path }));
  };

  it('a missing key, listing the keys it holds', async () => {
    const e = await npzError(npzBytes(good()), 'x_tarin');
    expect(e).toEqual({ code: 4079, file: join(dir, e.path), path: e.path, message: `"${e.path}" has no array "x_tarin"; the arrays it holds are: x_train, y_train` });
    expect((await npzError(npzBytes({}))).message).toContain('the arrays it holds are: none (the archive is empty)');
  });

  it('no zip archive, a cut-short one, a .npy file, an empty file and a damaged deflate stream', async () => {
    const zip = npzBytes(good(), true);
    expect(await npzError(Buffer.from('just some text'))).toMatchObject({ code: 4078, message: expect.stringContaining('is not a readable .npz file (a zip archive of .npy arrays): it is not a zip archive') });
    expect((await npzError(zip.subarray(0, zip.length - 30))).message).toContain('it has no zip directory at its end (it is cut short, or not a zip archive)');
    expect((await npzError(npyBytes('<f4', [2, 3], x3))).message).toContain('it is a single .npy file; read it with npy(');
    expect((await npzError(Buffer.alloc(0))).message).toContain('the file is empty');
    const damaged = Buffer.from(zip);
    damaged.fill(0xff, 40, 60); // inside the first member's deflate stream
    expect((await npzError(damaged)).code).toBe(4078);
  });

  it("a malformed member is named by the archive and its key", async () => {
    const e = await npzError(npzBytes({ ...good(), x_train: npyBytes('<f4', [2, 3], x3, { fortran: true }) }));
    expect([e.code, e.message.slice(0, e.message.indexOf(' is stored'))]).toEqual([4072, `"${e.path}" array "x_train"`]);
    const rows = await npzError(npzBytes({ ...good(), y_train: npyBytes('<i8', [3], [0, 1, 1]) }));
    expect(rows.message).toBe(`x and y disagree: "${rows.path}" array "x_train" holds 2 example(s), "${rows.path}" array "y_train" holds 3 label(s)`);
  });
});

describe('npy and npz at check time: the same diagnostics, at the data call', () => {
  it('gives the shape the model is checked against, and says when the input does not fit', () => {
    const data = `npy(x: "${f4([2, 3], x3)}", y: "${labels([1, 0])}")`;
    expect(checked(data)).toEqual([]);
    expect(checked(data, '[4]')).toEqual([{ code: 4006, message: 'the model input [4] does not fit the data: npy() gives examples of shape [3]', at: data }]);
    expect(checked(data, '[3]', 'dense(5, activation: softmax)')[0]).toMatchObject({ code: 4007, message: expect.stringContaining('with 2 classes: the last layer must give [2]') });
    const images = `npy(x: "${file(npyBytes('|u1', [2, 2, 3], new Array(12).fill(9)))}", y: "${labels([0, 1])}")`;
    expect(checked(images, '[2, 3, 1]', 'flatten()\n  dense(2, activation: softmax)')).toEqual([]);
  });

  it('reads an archive for its shape, and lists its keys when one is missing', () => {
    const path = file(npzBytes({ x_train: npyBytes('<f4', [2, 3], x3), y_train: npyBytes('<f4', [2, 2], [1, 0, 0, 1]) }, true), 'npz');
    expect(checked(`npz("${path}", x: "x_train", y: "y_train")`)).toEqual([]);
    const missing = `npz("${path}", x: "x", y: "y_train")`;
    expect(checked(missing)).toEqual([{ code: 4079, message: `"${path}" has no array "x"; the arrays it holds are: x_train, y_train`, at: missing }]);
  });

  it('answers again when an archive changes (the checker keeps the answers for archives it has unpacked)', () => {
    const path = file(npzBytes({ x: npyBytes('<f4', [2, 3], x3), y: npyBytes('<i8', [2], [0, 1]) }, true), 'npz');
    const data = `npz("${path}", x: "x", y: "y")`;
    expect(checked(data)).toEqual([]);
    expect(checked(data)).toEqual([]);
    writeFileSync(join(dir, path), npzBytes({ x: npyBytes('<f4', [2, 4], [...x3, 0, 0]), y: npyBytes('<i8', [2], [0, 1]) }, true));
    expect(checked(data).map((d) => d.message)).toEqual(['the model input [3] does not fit the data: npz() gives examples of shape [4]']);
  });

  it('reports each kind of malformed file with its own code', () => {
    const y = labels([0, 1]);
    const codeOf = (data: string) => checked(data).map((d) => [d.code, d.at === data]);
    expect(codeOf(`npy(x: "${file(Buffer.from('not numpy at all'))}", y: "${y}")`)).toEqual([[4070, true]]);
    expect(codeOf(`npy(x: "${file(npyBytes('<f4', [2, 3], x3, { fortran: true }))}", y: "${y}")`)).toEqual([[4072, true]]);
    expect(codeOf(`npy(x: "${file(npyBytes('<c16', [2, 3], []))}", y: "${y}")`)).toEqual([[4073, true]]);
    expect(codeOf(`npy(x: "${file(npyBytes('<f4', [2, 3], x3).subarray(0, 50))}", y: "${y}")`)).toEqual([[4074, true]]);
    expect(codeOf(`npy(x: "${f4([2, 3], x3)}", y: "${labels([0, 1, 0])}")`)).toEqual([[4075, true]]);
    expect(codeOf(`npy(x: "${f4([2, 3], x3)}", y: "${file(npyBytes('<f4', [2, 2], [1, 1, 0, 1]))}")`)).toEqual([[4077, true]]);
    expect(codeOf(`npy(x: "${f4([2, 3], x3)}", y: "${labels([0, 9])}", classes: 4)`)).toEqual([[4017, true]]);
    expect(codeOf(`npz("${file(Buffer.from('PK nope'), 'npz')}", x: "a", y: "b")`)).toEqual([[4078, true]]);
  });

  it('warns about a file that does not exist yet, as for csv and idx', () => {
    const data = `npy(x: "later.npy", y: "${labels([0, 1])}")`;
    expect(checked(data)).toEqual([{ code: 4010, message: 'cannot read the npy file "later.npy"; its shape is not checked, and training will fail until it exists', at: data }]);
  });

  it('needs both x and y, and npz its path', () => {
    expect(checked('npy(x: "a.npy")').map((d) => d.message)).toEqual(["npy needs the argument 'y'"]);
    expect(checked('npz(x: "a", y: "b")').map((d) => d.message)).toEqual(["npz needs the argument 'path'"]);
  });

  it('leaves the classes to loading when a label file is larger than the checker reads', () => {
    const n = (16 << 20) / 8; // 16 MiB of int64 labels (all 0): past what the checker reads
    const x = file(Buffer.concat([npyBytes('|u1', [n, 1], []), Buffer.alloc(n)]));
    const y = file(Buffer.concat([npyBytes('<i8', [n], []), Buffer.alloc(8 * n)]));
    expect(checked(`npy(x: "${x}", y: "${y}")`, '[5]')).toEqual([]); // unknown shape: not checked
    expect(checked(`npy(x: "${x}", y: "${y}", classes: 2)`, '[5]').map((d) => d.code)).toEqual([4006]);
  });
});

// the header the writer makes is NumPy's, byte for byte (numpy 2.x, np.save of a float32 [2, 3] array)
it("the test writer's header is the one np.save writes", () => {
  const bytes = npyBytes('<f4', [2, 3], x3);
  expect(bytes.subarray(10, 10 + npyHeader('<f4', [2, 3]).length).toString('latin1')).toBe("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }");
  expect([bytes.readUInt16LE(8), (10 + bytes.readUInt16LE(8)) % 64, bytes[10 + bytes.readUInt16LE(8) - 1]]).toEqual([118, 0, 0x0a]);
});
