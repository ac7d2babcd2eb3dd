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
import { loadSpamAssassin } from './spam.js';
import type { Holdout } from './split.js';
import { loadTextCsv, type TextOptions } from './text.js';

export interface LoadOptions {
  /** the folder file paths are relative to */
  baseDir: string;
  /** the seed of the generated sets (xor, moons, spirals) */
  seed: number;
  /**
   * the train block's held-out fractions (and the holdout seed under `holdout: shuffled`): a text source
   * learns its vocabulary from the examples that train, never from those held out
   */
  holdout?: Holdout;
  /** the model reads the features as token ids: an npy or npz x of uint8 holds ids, not pixels to scale to [0, 1] */
  tokenIds?: boolean;
  /** a text source's vocabulary learnt before (the run's, for `netc predict --data`), used instead of learning one */
  vocabulary?: readonly string[];
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
    case 'text':
      return loadTextCsv(file(str('path')), str('path'), { text: str('text'), label: str('label') }, textOptions(config, options));
    case 'spam_assassin':
      return loadSpamAssassin(num('limit'), num('offset'), textOptions(config, options));
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
      return loadNpy(file(str('x')), file(str('y')), a.classes as number | undefined, (f) => shown.get(f) ?? f, options.tokenIds);
    }
    case 'npz':
      return loadNpz(file(str('path')), str('x'), str('y'), a.classes as number | undefined, str('path'), options.tokenIds);
    default:
      // the checker only lets through the names in sources.ts
      throw new Error(`internal error: no loader for the data source '${config.name}'`);
  }
}

/** How a text source's call and the load options turn its texts into token ids. */
function textOptions(config: CallConfig, options: LoadOptions): TextOptions {
  const { holdout, vocabulary } = options;
  return { vocab: config.args.vocab as number, length: config.args.length as number, ...(holdout ? { holdout } : {}), ...(vocabulary ? { vocabulary } : {}) };
}
