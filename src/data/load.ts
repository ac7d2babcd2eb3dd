// The one entry point from a checked `data:` call to a Dataset. The checker has bound the arguments and
// filled in their defaults (src/data/sources.ts); files are found relative to baseDir, the
// .net file's folder. The Dataset's featureShape and labels agree with what sources.ts's shape()
// promised the checker.
import { isAbsolute, join } from 'node:path';
import type { CallConfig } from '../core/arg-spec.js';
import { loadCsv } from './csv.js';
import type { Dataset } from './dataset.js';
import { generatedBytes, moons, spirals, xor } from './generated.js';
import { loadIdx } from './idx.js';
import { loadImages } from './images.js';
import { iris } from './iris.js';
import { loadNpy, loadNpz } from './numpy.js';

export interface LoadOptions {
  /** the folder file paths are relative to */
  baseDir: string;
  /** the seed of the generated sets (xor, moons, spirals) */
  seed: number;
}

/** The size of a data set known before it loads: its examples and the bytes they take. */
export interface DataSize {
  /** the call as the .net file gives it: xor(n: 1000000000000) */
  shown: string;
  examples: number;
  bytes: number;
}

/** What a generated set (xor, moons, spirals) will allocate when it loads; undefined for the others. */
export function dataSize(config: CallConfig): DataSize | undefined {
  const name = config.name;
  if (name !== 'xor' && name !== 'moons' && name !== 'spirals') return undefined;
  const n = config.args.n as number;
  return { shown: `${name}(n: ${n})`, examples: n, bytes: generatedBytes(name, n) };
}

/** Loads a data source; a mistake in a data file is thrown as a DataError. */
export async function loadDataset(config: CallConfig, options: LoadOptions): Promise<Dataset> {
  const a = config.args;
  const num = (name: string) => a[name] as number;
  const str = (name: string) => a[name] as string;
  const file = (path: string) => (isAbsolute(path) ? path : join(options.baseDir, path));
  switch (config.name) {
    case 'xor':
      return xor(num('n'), num('noise'), options.seed);
    case 'moons':
      return moons(num('n'), num('noise'), options.seed);
    case 'spirals':
      return spirals(num('n'), num('classes'), num('noise'), options.seed);
    case 'iris':
      return iris(num('offset'), num('limit'));
    case 'mnist':
    case 'fashion_mnist':
      return loadImages(config.name, num('limit'), num('offset'));
    case 'csv': {
      const label = a.label as string | string[] | undefined;
      return loadCsv(file(str('path')), str('path'), typeof label === 'string' ? [label] : label);
    }
    case 'idx': {
      const shown = new Map([[file(str('images')), str('images')], [file(str('labels')), str('labels')]]);
      return loadIdx(file(str('images')), file(str('labels')), a.classes as number | undefined, (f) => shown.get(f) ?? f);
    }
    case 'npy': {
      const shown = new Map([[file(str('x')), str('x')], [file(str('y')), str('y')]]);
      return loadNpy(file(str('x')), file(str('y')), a.classes as number | undefined, (f) => shown.get(f) ?? f);
    }
    case 'npz':
      return loadNpz(file(str('path')), str('x'), str('y'), a.classes as number | undefined, str('path'));
    default:
      // the checker only lets through the names in sources.ts
      throw new Error(`internal error: no loader for the data source '${config.name}'`);
  }
}
