// idx(): IDX files written here, plain and gzip, ubyte and float32, and the mistakes in them.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { call, dataErrorOf, expectMatchesShape, load, tempDir } from './helpers.js';

const dir = tempDir();

/** An IDX file: magic 0 0, type, rank, big-endian dims, big-endian values. */
function idxBytes(type: 0x08 | 0x0d, dims: number[], values: number[]): Buffer {
  const size = type === 0x08 ? 1 : 4;
  const b = Buffer.alloc(4 + 4 * dims.length + size * values.length);
  b.writeUInt8(type, 2);
  b.writeUInt8(dims.length, 3);
  dims.forEach((d, i) => b.writeUInt32BE(d, 4 + 4 * i));
  const start = 4 + 4 * dims.length;
  values.forEach((v, i) => (type === 0x08 ? b.writeUInt8(v, start + i) : b.writeFloatBE(v, start + 4 * i)));
  return b;
}

function write(name: string, bytes: Buffer): string {
  writeFileSync(join(dir, name), bytes);
  return name;
}

// 3 images of 2x3 pixels
const pixels = Array.from({ length: 18 }, (_, i) => i * 15);
const labels = [2, 0, 1];

describe('idx', () => {
  for (const gzip of [false, true]) {
    it(`round-trips ubyte images and labels (${gzip ? 'gzip' : 'plain'})`, async () => {
      const pack = (b: Buffer) => (gzip ? gzipSync(b) : b);
      const args = {
        images: write(`images-${gzip}.idx`, pack(idxBytes(0x08, [3, 2, 3], pixels))),
        labels: write(`labels-${gzip}.idx`, pack(idxBytes(0x08, [3], labels))),
        classes: 3,
      };
      const ds = await load('idx', args, dir);
      expectMatchesShape(ds, call('idx', args), dir);
      expect(ds.featureShape).toEqual([2, 3, 1]);
      expect(ds.count).toBe(3);
      expect(Array.from(ds.x)).toEqual(pixels.map((p) => Math.fround(p / 255)));
      expect(Array.from(ds.y)).toEqual(labels);
      expect(ds.labels).toEqual({ kind: 'classes', classes: 3 });
    });
  }

  it('takes float32 values as they are, and [count, n] files as flat features', async () => {
    const values = [0.5, -2, 3.25, 1e6, 0, 7];
    const args = { images: write('f32.idx', idxBytes(0x0d, [2, 3], values)), labels: write('l2.idx', idxBytes(0x08, [2], [9, 0])) };
    const ds = await load('idx', args, dir);
    expectMatchesShape(ds, call('idx', args), dir);
    expect(ds.featureShape).toEqual([3]);
    expect(Array.from(ds.x)).toEqual(values);
    expect(ds.labels).toEqual({ kind: 'classes', classes: 10 });
  });

  it('a float value that is not a finite float32 (NaN, Infinity) is an error naming its byte offset', async () => {
    const images = write('nan.idx', idxBytes(0x0d, [2, 2], [0.5, 1, NaN, 2]));
    const e = await dataErrorOf(() => load('idx', { images, labels: write('l3.idx', idxBytes(0x08, [2], [1, 0])) }, dir));
    expect([e.code, e.message]).toEqual([4019, '"nan.idx" at byte offset 20 (value 2, counting from 0) holds NaN, which is not a finite float32 (the largest is about 3.4e38): training on it would turn every weight into NaN; scale the values down']);
  });

  it('image and label counts must agree', async () => {
    const images = write('three.idx', idxBytes(0x08, [3, 2, 3], pixels));
    const e = await dataErrorOf(() => load('idx', { images, labels: write('two.idx', idxBytes(0x08, [2], [0, 1])) }, dir));
    expect(e.code).toBe(4016);
    expect(e.message).toBe('the idx files disagree: "three.idx" holds 3 example(s), "two.idx" holds 2 label(s)');
  });

  it('labels must be class indices below `classes`, and the error says what to do with classes:', async () => {
    const images = write('three.idx', idxBytes(0x08, [3, 2, 3], pixels));
    const e = await dataErrorOf(() => load('idx', { images, labels: write('big.idx', idxBytes(0x08, [3], [0, 5, 1])), classes: 5 }, dir));
    expect([e.code, e.file]).toEqual([4017, join(dir, 'big.idx')]);
    expect(e.message).toBe('label 5 of example 1 (counting from 0) is not a class index in 0..4: classes: 5 allows 5 classes; give classes: 6 or more, or leave classes: out and netc counts them from the labels');
  });

  for (const gzip of [false, true]) {
    it(`counts the classes from the labels (max label + 1) when classes: is not given, at check time and when loaded (${gzip ? 'gzip' : 'plain'} labels)`, async () => {
      const images = write('three.idx', idxBytes(0x08, [3, 2, 3], pixels));
      const labelBytes = idxBytes(0x08, [3], [4, 0, 1]);
      const args = { images, labels: write(`five-${gzip}.idx`, gzip ? gzipSync(labelBytes) : labelBytes) };
      const ds = await load('idx', args, dir);
      expect(ds.labels).toEqual({ kind: 'classes', classes: 5 });
      expectMatchesShape(ds, call('idx', args), dir);
    });
  }

  it('counts at least 2 classes, and says a label that is no class index is one', async () => {
    const images = write('three.idx', idxBytes(0x08, [3, 2, 3], pixels));
    expect((await load('idx', { images, labels: write('zeros.idx', idxBytes(0x08, [3], [0, 0, 0])) }, dir)).labels).toEqual({ kind: 'classes', classes: 2 });
    const e = await dataErrorOf(() => load('idx', { images, labels: write('half.idx', idxBytes(0x0d, [3], [0, 1.5, 1])) }, dir));
    expect(e.message).toBe('label 1.5 of example 1 (counting from 0) is not a class index: class indices are whole numbers from 0');
  });

  it('a missing, truncated, foreign or corrupt gzip file is an error naming it', async () => {
    const labelsFile = write('ok-labels.idx', idxBytes(0x08, [3], labels));
    const tryImages = (images: string) => dataErrorOf(() => load('idx', { images, labels: labelsFile }, dir));
    expect((await tryImages('missing.idx')).code).toBe(4011);
    const truncated = await tryImages(write('short.idx', idxBytes(0x08, [3, 2, 3], pixels).subarray(0, 20)));
    expect([truncated.code, truncated.file]).toEqual([4015, join(dir, 'short.idx')]);
    expect(truncated.message).toContain('truncated');
    expect((await tryImages(write('foreign.idx', Buffer.from('hello, world')))).message).toContain('bad magic number');
    expect((await tryImages(write('corrupt.idx', gzipSync(idxBytes(0x08, [3, 2, 3], pixels)).subarray(0, 15)))).message).toContain('gzip');
    expect((await tryImages(labelsFile)).message).toContain('rank is 1');
  });
});
