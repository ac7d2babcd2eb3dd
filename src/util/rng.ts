// Deterministic random numbers, independent of the backend: the same seed gives the same numbers on
// every machine. Streams are named by hashing their parts — (seed, member) for initialisation,
// (seed, 'shuffle', epoch) for batching — so one member's stream never depends on how many members
// there are.

/** A 32-bit hash of numbers and strings (murmur3's mixing steps). */
export function seedFor(...parts: (number | string)[]): number {
  let h = 0x9e3779b9;
  const mix = (k: number) => {
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  };
  for (const part of parts) {
    if (typeof part === 'number') {
      // integers hash exactly; other numbers by their float64 bits
      if (Number.isInteger(part) && Math.abs(part) < 2 ** 31) mix(part | 0);
      else {
        const view = new DataView(new ArrayBuffer(8));
        view.setFloat64(0, part);
        mix(view.getInt32(0));
        mix(view.getInt32(4));
      }
    } else {
      mix(0x5f3759df);
      for (let i = 0; i < part.length; i++) mix(part.charCodeAt(i));
    }
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** sfc32: a small, fast generator with a 128-bit state, seeded through splitmix32. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const split = () => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = split();
    this.b = split();
    this.c = split();
    this.d = split();
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  static of(...parts: (number | string)[]): Rng {
    return new Rng(seedFor(...parts));
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** uniform in [0, 1) */
  uniform(): number {
    return this.nextUint32() / 4294967296;
  }

  /** uniform in [low, high) */
  range(low: number, high: number): number {
    return low + (high - low) * this.uniform();
  }

  /** an integer in [0, n) */
  int(n: number): number {
    return Math.floor(this.uniform() * n);
  }

  /** standard normal, by Box–Muller (one value per call, so the stream stays simple to reproduce) */
  normal(): number {
    const u = 1 - this.uniform(); // (0, 1]
    const v = this.uniform();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /** standard normal redrawn until it lies within two standard deviations (Keras' truncated normal) */
  truncatedNormal(): number {
    for (;;) {
      const z = this.normal();
      if (Math.abs(z) <= 2) return z;
    }
  }

  /** a Fisher–Yates permutation of 0..n-1 */
  permutation(n: number): Int32Array {
    const p = new Int32Array(n);
    for (let i = 0; i < n; i++) p[i] = i;
    for (let i = n - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
    return p;
  }
}
