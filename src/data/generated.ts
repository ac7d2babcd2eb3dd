// The generated toy sets: 2-D points with class labels, drawn from the seed alone so that every run and
// every machine sees the same data. Each set draws from its own stream, Rng.of(seed, 'data', name), and
// is shuffled at the end, so a validation split taken from the end holds every class.
import { Rng } from '../util/rng.js';
import { permuted, type Dataset } from './dataset.js';

/** What a generated set of n examples allocates: its features and labels, and the shuffled copy moons and spirals make. */
export function generatedBytes(name: 'xor' | 'moons' | 'spirals', n: number): number {
  const once = 4 * n * (2 + 1);
  return name === 'xor' ? once : 2 * once;
}

/** Points near the corners (0/1, 0/1) of the unit square; the label is x XOR y. */
export function xor(n: number, noise: number, seed: number): Dataset {
  const rng = Rng.of(seed, 'data', 'xor');
  const x = new Float32Array(2 * n);
  const y = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const corner = rng.int(4);
    const a = corner & 1;
    const b = corner >> 1;
    x[2 * i] = a + noise * rng.normal();
    x[2 * i + 1] = b + noise * rng.normal();
    y[i] = a ^ b;
  }
  return points('xor()', x, y, n, 2);
}

/** scikit-learn's make_moons: an upper half circle (class 0) and a lower one shifted into it (class 1). */
export function moons(n: number, noise: number, seed: number): Dataset {
  const rng = Rng.of(seed, 'data', 'moons');
  const outer = Math.floor(n / 2); // as scikit-learn: the inner moon takes the odd point
  const x = new Float32Array(2 * n);
  const y = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const inner = i >= outer;
    const k = inner ? i - outer : i;
    const m = inner ? n - outer : outer;
    const t = m > 1 ? (Math.PI * k) / (m - 1) : 0; // linspace(0, pi, m)
    x[2 * i] = (inner ? 1 - Math.cos(t) : Math.cos(t)) + noise * rng.normal();
    x[2 * i + 1] = (inner ? 0.5 - Math.sin(t) : Math.sin(t)) + noise * rng.normal();
    y[i] = inner ? 1 : 0;
  }
  return shuffled(points('moons()', x, y, n, 2), rng);
}

/**
 * K arms winding out from the centre, one class each: arm j starts at angle 2πj/K and turns 4 radians
 * while its radius grows to 1. The n points are shared as evenly as the count allows.
 */
export function spirals(n: number, classes: number, noise: number, seed: number): Dataset {
  const rng = Rng.of(seed, 'data', 'spirals');
  const x = new Float32Array(2 * n);
  const y = new Float32Array(n);
  let i = 0;
  for (let j = 0; j < classes; j++) {
    const m = Math.floor(n / classes) + (j < n % classes ? 1 : 0);
    for (let k = 0; k < m; k++, i++) {
      const r = (k + 0.5) / m;
      const t = (2 * Math.PI * j) / classes + 4 * r;
      x[2 * i] = r * Math.cos(t) + noise * rng.normal();
      x[2 * i + 1] = r * Math.sin(t) + noise * rng.normal();
      y[i] = j;
    }
  }
  return shuffled(points('spirals()', x, y, n, classes), rng);
}

function points(name: string, x: Float32Array, y: Float32Array, count: number, classes: number): Dataset {
  return { name, count, x, featureShape: [2], y, labels: { kind: 'classes', classes } };
}

/** The same examples in a random order. */
function shuffled(ds: Dataset, rng: Rng): Dataset {
  return permuted(ds, rng.permutation(ds.count));
}
