// What the export tests share: tiny runs trained for a few steps, the TF.js LayersModel `netc extract`
// writes as the reference, and NHWC <-> NCHW for their inputs and outputs.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { netc } from './helpers.js';

export const tmp = (): string => mkdtempSync(join(tmpdir(), 'netc-export-'));

/** The seeded pattern of the CSV's feature i of row r: a number in [-1, 1], or a token id in [0, tokens). */
const feature = (r: number, i: number, tokens?: number): string => {
  const v = Math.sin(r * 7.1 + i * 1.3);
  return tokens ? String(Math.min(tokens - 1, Math.floor(((v + 1) / 2) * tokens))) : v.toFixed(4);
};

/** A CSV of `rows` examples of `features` numbers (token ids in [0, tokens) where given) and a label of `classes` (a seeded pattern, not noise). */
export function csvData(dir: string, features: number, rows = 24, classes = 3, tokens?: number): string {
  const head = [...Array.from({ length: features }, (_, i) => `f${i}`), 'y'].join(',');
  const lines = Array.from({ length: rows }, (_, r) => [...Array.from({ length: features }, (_, i) => feature(r, i, tokens)), String(r % classes)].join(','));
  const path = join(dir, 'd.csv');
  writeFileSync(path, [head, ...lines].join('\n') + '\n');
  return path;
}

/** Trains `source` (a .net text, whose data may read d.csv beside it) in a fresh folder; returns the run directory. */
export async function trainTiny(source: string, features?: number, classes?: number, tokens?: number): Promise<{ dir: string; run: string }> {
  const dir = tmp();
  if (features) csvData(dir, features, 24, classes, tokens);
  writeFileSync(join(dir, 'm.net'), source);
  const run = join(dir, 'run');
  const r = await netc('train', join(dir, 'm.net'), '--backend', 'cpu', '--out', run);
  expect(r.code, r.err).toBe(0);
  return { dir, run };
}

/** Runs `netc extract RUN ARGS... --out DIR` and returns DIR. */
export async function extract(run: string, out: string, ...args: string[]): Promise<string> {
  const r = await netc('extract', run, ...args, '--out', out, '--backend', 'cpu');
  expect(r.code, r.err).toBe(0);
  return out;
}

/** [B, H, W, C] -> [B, C, H, W] (any other rank as it is): netc's layout into the exported one. */
export function toExported(t: tf.Tensor): tf.Tensor {
  return t.rank === 4 ? tf.transpose(t, [0, 3, 1, 2]) : t;
}

/** Random inputs of netc's shape [B, ...shape], seeded; token ids in [0, tokens) where given. */
export const randomInput = (batch: number, shape: number[], seed = 11, tokens?: number): tf.Tensor =>
  tokens ? tf.floor(tf.randomUniform([batch, ...shape], 0, tokens - 1e-3, 'float32', seed)) : tf.randomUniform([batch, ...shape], -2, 2, 'float32', seed);

/** The largest |a - b| of two arrays of one length. */
export function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}
