// Helpers for the data tests: a data call with the checker's defaults, temp folders, and what the
// checker's shape() promised for a source.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect } from 'vitest';
import type { BoundValue } from '../../src/core/arg-spec.js';
import type { CallConfig } from '../../src/core/arg-spec.js';
import { loadDataset } from '../../src/data/load.js';
import { DataError, type Dataset } from '../../src/data/dataset.js';
import { dataSources, type Host } from '../../src/data/sources.js';

/** `name(args)` as the checker hands it on: the given arguments over the defaults. */
export function call(name: string, args: Record<string, BoundValue> = {}): CallConfig {
  const spec = dataSources.find((s) => s.name === name);
  if (!spec) throw new Error(`no data source ${name}`);
  const defaults = Object.fromEntries(spec.args.filter((a) => a.default !== undefined).map((a) => [a.name, a.default!]));
  return { name, args: { ...defaults, ...args } };
}

/** A fresh temp folder, removed after the file's tests. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'netc-data-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export async function load(name: string, args: Record<string, BoundValue> = {}, baseDir = '.', seed = 0): Promise<Dataset> {
  return loadDataset(call(name, args), { baseDir, seed });
}

/** Asserts that a loaded dataset is what the checker's shape() said it would be, and well formed. */
export function expectMatchesShape(ds: Dataset, config: CallConfig, baseDir = '.'): void {
  const host: Host = {
    readBytes(path, maxBytes) {
      try {
        return readFileSync(resolve(baseDir, path)).subarray(0, maxBytes);
      } catch {
        return undefined;
      }
    },
  };
  const shape = dataSources.find((s) => s.name === config.name)!.shape(config.args, host);
  if (shape && 'features' in shape) {
    expect(ds.featureShape).toEqual(shape.features);
    expect(ds.labels).toEqual(shape.labels);
  } else expect(shape).toBeUndefined(); // gzip idx: known only once loaded
  const width = ds.featureShape.reduce((a, b) => a * b, 1);
  expect(ds.x.length).toBe(ds.count * width);
  expect(ds.y.length).toBe(ds.count * (ds.labels.kind === 'classes' ? 1 : ds.labels.columns));
  if (ds.labels.kind === 'classes') {
    const k = ds.labels.classes;
    expect(ds.y.every((c) => Number.isInteger(c) && c >= 0 && c < k)).toBe(true);
  }
}

/** Runs `f`, expecting a DataError, and returns it. */
export async function dataErrorOf(f: () => unknown): Promise<DataError> {
  try {
    await f();
  } catch (e) {
    expect(e).toBeInstanceOf(DataError);
    return e as DataError;
  }
  throw new Error('expected a DataError');
}

/** How many examples of each class. */
export function classCounts(ds: Dataset): number[] {
  const k = ds.labels.kind === 'classes' ? ds.labels.classes : 0;
  const counts = new Array<number>(k).fill(0);
  ds.y.forEach((c) => counts[c]++);
  return counts;
}
