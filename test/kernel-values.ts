// Inputs for the tests that run a generated kernel alone (test/conv-direct.test.ts, test/dense-rows.test.ts).

/** Deterministic values in [-1, 1), some of them exactly 0 (as relu's gradients are). */
export function values(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const v = s / 2 ** 32;
    return v < 0.1 ? 0 : v * 2 - 1;
  });
}
