// Packaged sets that are stored class by class (iris, mnist, fashion_mnist) are served in one fixed
// interleaved order instead, so that any prefix (a `limit`) and any suffix (a validation split) holds
// every class in proportion.

/**
 * The fixed order of examples for classes of these sizes: example k of a class of n sits at
 * (k + 0.5) / n, ties going to the lower class. Returns each position's class and index in its class.
 */
export function interleave(counts: readonly number[]): { classOf: Int32Array; indexIn: Int32Array } {
  const total = counts.reduce((a, b) => a + b, 0);
  const keys: { key: number; c: number; k: number }[] = [];
  counts.forEach((n, c) => {
    for (let k = 0; k < n; k++) keys.push({ key: (k + 0.5) / n, c, k });
  });
  keys.sort((a, b) => a.key - b.key || a.c - b.c);
  const classOf = new Int32Array(total);
  const indexIn = new Int32Array(total);
  keys.forEach((e, i) => {
    classOf[i] = e.c;
    indexIn[i] = e.k;
  });
  return { classOf, indexIn };
}
