// NumPy itself writes the fixtures (np.save, np.lib.format.write_array at versions 1.0, 2.0 and 3.0,
// np.savez, np.savez_compressed) with a JSON of the values it wrote; netc reads them back equal. Runs
// where `python3 -c 'import numpy'` works, and is SKIPPED with the reason elsewhere (CI does not need it).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, dataErrorOf, expectMatchesShape, load, tempDir } from './helpers.js';

const probe = spawnSync('python3', ['-c', 'import numpy'], { encoding: 'utf8' });
const skipped = probe.error ? `python3 cannot be run (${probe.error.message})` : probe.status !== 0 ? `python3 has no numpy (${probe.stderr.trim().split('\n').pop()})` : undefined;
if (skipped) console.log(`SKIPPED test/data/numpy-python.test.ts: ${skipped}`);

const script = String.raw`
import json, sys, numpy as np
from numpy.lib import format as fmt
out = sys.argv[1]
rng = np.random.default_rng(7)
arrays = {
  'x_f4': rng.standard_normal((6, 3)).astype(np.float32),
  'x_f8': rng.standard_normal((6, 3)) * 1e3,
  'x_be': rng.standard_normal((6, 3)).astype('>f4'),
  'x_u1': rng.integers(0, 256, (6, 4, 5), dtype=np.uint8),
  'x_rgb': rng.integers(0, 256, (6, 2, 2, 3), dtype=np.uint8),
  'x_i2': rng.integers(-300, 300, (6, 2), dtype=np.int16),
  'x_flat': np.arange(6, dtype=np.float64),
  'y_i8': np.array([0, 2, 1, 2, 0, 1]),
  'y_u1': np.array([3, 0, 1, 2, 3, 0], dtype=np.uint8),
  'y_bool': np.array([True, False, True, True, False, False]),
  'y_col': np.array([[1], [0], [1], [1], [0], [0]], dtype=np.int32),
  'y_hot': np.eye(4, dtype=np.float32)[[1, 3, 0, 2, 2, 1]],
  'y_f4': np.array([1, 0, 4, 2, 0, 3], dtype=np.float32),
}
for name, a in arrays.items():
  np.save(f'{out}/{name}.npy', a)
for v in [(1, 0), (2, 0), (3, 0)]:
  with open(f'{out}/x_v{v[0]}.npy', 'wb') as f:
    fmt.write_array(f, arrays['x_f4'], version=v)
np.savez(f'{out}/plain.npz', x_train=arrays['x_f4'], y_train=arrays['y_i8'], x_test=arrays['x_u1'], y_test=arrays['y_hot'])
np.savez_compressed(f'{out}/packed.npz', x_train=arrays['x_f8'], y_train=arrays['y_hot'], x_test=arrays['x_rgb'], y_test=arrays['y_u1'])
np.savez(f'{out}/positional.npz', arrays['x_i2'], arrays['y_bool'])
np.save(f'{out}/fortran.npy', np.asfortranarray(arrays['x_f8']))
np.save(f'{out}/half.npy', arrays['x_f4'].astype(np.float16))
np.save(f'{out}/fields.npy', np.zeros(6, dtype=[('a', '<f4'), ('b', '<i4')]))
json.dump({k: {'shape': list(a.shape), 'values': a.astype(np.float64).ravel().tolist()} for k, a in arrays.items()}, open(f'{out}/values.json', 'w'))
`;

const dir = tempDir();
let written: Record<string, { shape: number[]; values: number[] }> = {};

/** What netc should read from array `name`: float32 values, uint8 ones scaled to [0, 1]. */
function features(name: string): number[] {
  const scale = /_u1$|_rgb$/.test(name) ? 255 : 1;
  return written[name].values.map((v) => Math.fround(Math.fround(v) / scale));
}

/** The class indices array `name` holds: its values, or each one-hot row's 1. */
function classes(name: string): number[] {
  const { shape, values } = written[name];
  if (shape.length === 1 || shape[1] === 1) return values;
  return Array.from({ length: shape[0] }, (_, r) => values.slice(r * shape[1], (r + 1) * shape[1]).indexOf(1));
}

describe.skipIf(skipped !== undefined)('NumPy writes, netc reads', () => {
  beforeAll(() => {
    const r = spawnSync('python3', ['-c', script, dir], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`the fixture script failed: ${r.stderr}`);
    written = JSON.parse(readFileSync(join(dir, 'values.json'), 'utf8'));
  });

  const pairs: [string, string, number[]][] = [
    ['x_f4', 'y_i8', [3]],
    ['x_f8', 'y_u1', [3]],
    ['x_be', 'y_bool', [3]],
    ['x_u1', 'y_col', [4, 5, 1]],
    ['x_rgb', 'y_hot', [2, 2, 3]],
    ['x_i2', 'y_f4', [2]],
    ['x_flat', 'y_i8', [1]],
  ];
  for (const [x, y, shape] of pairs) {
    it(`np.save: ${x} with ${y}`, async () => {
      const args = { x: `${x}.npy`, y: `${y}.npy` };
      const ds = await load('npy', args, dir);
      expectMatchesShape(ds, call('npy', args), dir);
      expect([ds.count, ds.featureShape]).toEqual([6, shape]);
      expect(Array.from(ds.x)).toEqual(features(x));
      expect(Array.from(ds.y)).toEqual(classes(y));
    });
  }

  it('np.lib.format.write_array at versions 1.0, 2.0 and 3.0', async () => {
    for (const v of [1, 2, 3]) {
      const ds = await load('npy', { x: `x_v${v}.npy`, y: 'y_i8.npy' }, dir);
      expect(Array.from(ds.x), `version ${v}`).toEqual(features('x_f4'));
    }
  });

  const archives: [string, string, string, string, string][] = [
    ['plain.npz', 'x_train', 'y_train', 'x_f4', 'y_i8'],
    ['plain.npz', 'x_test', 'y_test', 'x_u1', 'y_hot'],
    ['packed.npz', 'x_train', 'y_train', 'x_f8', 'y_hot'],
    ['packed.npz', 'x_test', 'y_test', 'x_rgb', 'y_u1'],
    ['positional.npz', 'arr_0', 'arr_1', 'x_i2', 'y_bool'],
  ];
  for (const [path, xKey, yKey, x, y] of archives) {
    it(`${path.startsWith('packed') ? 'np.savez_compressed' : 'np.savez'}: ${path} ${xKey}, ${yKey}`, async () => {
      const args = { path, x: xKey, y: yKey };
      const ds = await load('npz', args, dir);
      expectMatchesShape(ds, call('npz', args), dir);
      expect(Array.from(ds.x)).toEqual(features(x));
      expect(Array.from(ds.y)).toEqual(classes(y));
    });
  }

  it('refuses what NumPy writes that netc does not read: Fortran order, float16, fields, a missing key', async () => {
    const refused = async (args: Record<string, string>, name = 'npy') => (await dataErrorOf(() => load(name, args, dir))).code;
    expect(await refused({ x: 'fortran.npy', y: 'y_i8.npy' })).toBe(4072);
    expect(await refused({ x: 'half.npy', y: 'y_i8.npy' })).toBe(4073);
    expect(await refused({ x: 'fields.npy', y: 'y_i8.npy' })).toBe(4073);
    const e = await dataErrorOf(() => load('npz', { path: 'packed.npz', x: 'x_val', y: 'y_train' }, dir));
    expect(e.message).toBe('"packed.npz" has no array "x_val"; the arrays it holds are: x_train, y_train, x_test, y_test');
  });
});
