// Evaluation: each member's loss and metrics (accuracy, mse, mae) over a whole dataset, in batches of at least 64, with
// dropout off and batchnorm's running statistics. Used by the trainer and by shard jobs alike.
import { batchRanges, epochOrder } from '../data/batches.js';
import type { Dataset } from '../data/dataset.js';
import type { Population } from '../runtime/population.js';
import type { TF, Tensor } from '../kernels/tf.js';

export type BatchFn = (ds: Dataset, order: Int32Array, start: number, end: number) => { x: Tensor; y: Tensor; size: number };

/** The loss and each named metric per member over a whole dataset, without training. */
export async function evaluatePopulation(tf: TF, population: Population, ds: Dataset, batch: BatchFn, trainBatch: number, metrics: readonly string[]) {
  const sums = new Sums(tf, population.n);
  const order = epochOrder(ds.count, false, 0, 0);
  for (const [start, end] of batchRanges(ds.count, Math.max(trainBatch, 64))) {
    const { x, y, size } = batch(ds, order, start, end);
    for (const [name, values] of Object.entries(population.evaluate(x, y, metrics))) sums.add(name, values, size);
    tf.dispose([x, y]);
  }
  return sums.means(['loss', ...metrics]);
}

/** Example-weighted sums of per-member values over an evaluation, kept on the device until read. */
class Sums {
  private totals = new Map<string, Tensor>();
  private count = 0;
  constructor(
    private tf: TF,
    private n: number,
  ) {}

  add(name: string, values: Tensor, size: number): void {
    const { tf } = this;
    const prev = this.totals.get(name);
    const next = tf.tidy(() => (prev ? tf.add(prev, tf.mul(values, size)) : tf.mul(values, size)));
    prev?.dispose();
    values.dispose();
    this.totals.set(name, next);
    if (name === 'loss') this.count += size;
  }

  async means(names: readonly string[]): Promise<Record<string, number[]>> {
    const out: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, new Array(this.n).fill(NaN)]));
    for (const [name, t] of this.totals) {
      out[name] = Array.from(await t.data()).map((v) => v / this.count);
      t.dispose();
    }
    this.totals.clear();
    this.count = 0;
    return out;
  }
}

