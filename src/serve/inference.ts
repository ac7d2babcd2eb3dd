// Inference with a trained population: its members' predictions on new data, combined into the ensemble's.
// The combining functions take member-first predictions [N, B, K] (what Population.forward returns) and
// are pure: each runs in a tf.tidy and returns one new tensor. predictBatches and evaluateEnsemble walk a
// dataset in batches, so a large one never has all its activations on the device at once.
import { batchRanges, epochOrder, gatherBatch, labelEncoding } from '../data/batches.js';
import { featureSize, type Dataset } from '../data/dataset.js';
import { losses as lossSpecs } from '../vocabulary/losses.js';
import { memberAccuracy, memberLosses, memberMetric } from '../kernels/losses.js';
import type { Population } from '../runtime/population.js';
import type { TF, Tensor } from '../kernels/tf.js';

/** How a population's outputs are combined: their mean, the members' majority class, or not at all. */
export type Combine = 'mean' | 'vote' | 'none';
export const combineModes: readonly Combine[] = ['mean', 'vote', 'none'];

/** Whether a loss makes the outputs class scores (probabilities), so they have a class and accuracy. */
export function isClassificationLoss(loss: string): boolean {
  const spec = lossSpecs.find((l) => l.name === loss);
  if (!spec) throw new Error(`internal error: unknown loss ${loss}`);
  return spec.expects !== 'regression';
}

/** [N, B, ...] -> [1, B, ...]: the members' mean output (mean probabilities for sigmoid/softmax outputs). */
export function combineMean(tf: TF, out: Tensor): Tensor {
  return tf.tidy(() => tf.mean(out, 0, true));
}

/** [N, B, K] -> [N, B] int32: each member's class, the argmax of K > 1 outputs or p > 0.5 for one output. */
export function memberClasses(tf: TF, out: Tensor): Tensor {
  return tf.tidy(() => {
    const k = out.shape[out.rank - 1];
    return k === 1 ? tf.cast(tf.greater(tf.reshape(out, out.shape.slice(0, -1)), 0.5), 'int32') : tf.cast(tf.argMax(out, -1), 'int32');
  });
}

/** [N, B, K] -> [B, C] float32: how many members pick each class (C = K, or 2 for one output). */
export function voteCounts(tf: TF, out: Tensor): Tensor {
  return tf.tidy(() => {
    const k = out.shape[out.rank - 1];
    const classes = memberClasses(tf, out);
    return tf.sum(tf.cast(tf.oneHot(classes, Math.max(k, 2)), 'float32'), 0);
  });
}

/** [N, B, K] -> [B] int32: the class most members pick; a tie goes to the lowest class index. */
export function voteClasses(tf: TF, out: Tensor): Tensor {
  return tf.tidy(() => {
    const counts = voteCounts(tf, out);
    const c = counts.shape[1]!;
    // count * C + (C - 1 - class): the largest count wins, and among equal counts the lowest class, on any
    // backend whatever its argMax does with ties
    const preference = tf.sub(c - 1, tf.range(0, c, 1, 'float32'));
    return tf.cast(tf.argMax(tf.add(tf.mul(counts, c), preference), -1), 'int32');
  });
}

/**
 * [N, B, K] -> [1, B, K]: the vote as a prediction: the one-hot row of the voted class (K > 1), or the voted
 * class as 0/1 (one output), so memberAccuracy scores it like any member.
 */
export function combineVote(tf: TF, out: Tensor): Tensor {
  return tf.tidy(() => {
    const k = out.shape[out.rank - 1];
    const b = out.shape[1]!;
    const voted = voteClasses(tf, out);
    return k === 1 ? tf.reshape(tf.cast(voted, 'float32'), [1, b, 1]) : tf.reshape(tf.cast(tf.oneHot(voted, k), 'float32'), [1, b, k]);
  });
}

/**
 * The ensemble's metrics on one batch, as [1] tensors: the loss and each named metric (accuracy, mse, mae;
 * by default accuracy for a classification loss) of the mean-combined prediction, and for a classification
 * loss the accuracy of the vote.
 */
export function ensembleMetrics(
  tf: TF,
  loss: { name: string; args: Record<string, unknown> },
  out: Tensor,
  y: Tensor,
  metrics: readonly string[] = isClassificationLoss(loss.name) ? ['accuracy'] : [],
): { loss: Tensor; voteAccuracy?: Tensor } & Record<string, Tensor> {
  const classification = isClassificationLoss(loss.name);
  return tf.tidy(() => {
    const mean = combineMean(tf, out);
    const result: Record<string, Tensor> = { loss: memberLosses(tf, loss.name, loss.args, mean, y) };
    for (const name of metrics) result[name] = memberMetric(tf, name, loss.name, mean, y);
    if (classification) result.voteAccuracy = memberAccuracy(tf, loss.name, combineVote(tf, out), y);
    return result as { loss: Tensor } & Record<string, Tensor>;
  });
}

/** Member-first outputs flattened to [N, B, K]: the forward pass in inference mode (no dropout, running statistics). */
function forwardFlat(population: Population, x: Tensor): Tensor {
  const { tf } = population;
  const out = population.forward(x, false);
  return tf.reshape(out, [out.shape[0], out.shape[1]!, -1]);
}

/** The model's input shape and the number of outputs per example. */
export function populationShapes(population: Population): { input: number[]; outputs: number } {
  const model = population.ir.model;
  return { input: model.ops[0].shape, outputs: model.ops[model.output].shape.reduce((a, b) => a * b, 1) };
}

/** Examples [start, end) of a dataset as the model's input [end - start, ...input]. */
function features(tf: TF, ds: Dataset, input: number[], start: number, end: number): Tensor {
  const width = featureSize(ds);
  return tf.tensor(ds.x.subarray(start * width, end * width), [end - start, ...input]);
}

/** One batch of predictions, read back from the device; every array is example-major within a member. */
export interface BatchPrediction {
  /** the index of the batch's first example in the dataset */
  start: number;
  size: number;
  /** outputs per example */
  k: number;
  /** [N, size, K]: each member's outputs */
  members: Float32Array;
  /** [N, size]: each member's class (classification) */
  memberClasses?: Float32Array;
  /** [size, K]: the mean of the members' outputs (combine mean) */
  mean?: Float32Array;
  /** [size]: the class of the mean (combine mean, classification) or the voted class (combine vote) */
  classes?: Float32Array;
  /** [size]: how many members picked the voted class (combine vote) */
  votes?: Float32Array;
}

/**
 * The population's predictions on every example of `ds`, `batch` examples at a time, in order. Tensors are
 * made and freed batch by batch: nothing stays on the device between yields.
 */
export async function* predictBatches(
  population: Population,
  ds: Dataset,
  options: { batch: number; combine: Combine; classification: boolean },
): AsyncGenerator<BatchPrediction> {
  const { tf } = population;
  const { input, outputs: k } = populationShapes(population);
  if (options.combine === 'vote' && !options.classification) throw new Error('internal error: a vote needs class outputs');
  for (const [start, end] of batchRanges(ds.count, options.batch)) {
    const tensors = tf.tidy(() => {
      const out = forwardFlat(population, features(tf, ds, input, start, end));
      const result: Record<string, Tensor> = { members: out };
      if (options.classification) result.memberClasses = memberClasses(tf, out);
      if (options.combine === 'mean') {
        const mean = combineMean(tf, out);
        result.mean = mean;
        if (options.classification) result.classes = tf.reshape(memberClasses(tf, mean), [-1]);
      } else if (options.combine === 'vote') {
        const counts = voteCounts(tf, out);
        result.classes = voteClasses(tf, out);
        result.votes = tf.max(counts, -1);
      }
      return result;
    });
    try {
      const read = async (name: string) => (tensors[name] ? await readFloat(tensors[name]) : undefined);
      yield {
        start,
        size: end - start,
        k,
        members: (await read('members'))!,
        memberClasses: await read('memberClasses'),
        mean: await read('mean'),
        classes: await read('classes'),
        votes: await read('votes'),
      };
    } finally {
      tf.dispose(Object.values(tensors));
    }
  }
}

async function readFloat(t: Tensor): Promise<Float32Array> {
  const values = await t.data();
  return values instanceof Float32Array ? values : Float32Array.from(values as ArrayLike<number>);
}

/** Metrics over a whole dataset: example-weighted means of the per-batch values. */
export interface EnsembleEvaluation {
  examples: number;
  /** per member, in population order: the loss and each metric asked for */
  members: { loss: number[]; [metric: string]: number[] };
  /** the mean-combined prediction's loss and metrics, and (classification) the vote's accuracy */
  ensemble: { loss: number; voteAccuracy?: number; [metric: string]: number | undefined };
}

/**
 * Every member's loss and named metrics (accuracy only for a classification loss) on `ds`, and the
 * ensemble's (mean, and vote for a classification loss), with the labels encoded as the population's loss
 * wants them, `batch` examples at a time.
 */
export async function evaluateEnsemble(population: Population, ds: Dataset, options: { batch: number; metrics: readonly string[] }): Promise<EnsembleEvaluation> {
  const { tf } = population;
  const loss = population.spec.loss;
  const classification = isClassificationLoss(loss.name);
  const expects = lossSpecs.find((l) => l.name === loss.name)!.expects;
  const encoding = labelEncoding(expects, ds.labels);
  const classes = ds.labels.kind === 'classes' ? ds.labels.classes : 0;
  const { input } = populationShapes(population);
  const n = population.n;
  const names = ['loss', ...options.metrics];
  // per batch, one row: each name's N member values, then each name's ensemble value, then the vote's accuracy
  const width = names.length * (n + 1) + (classification ? 1 : 0);
  const sums = new Float64Array(width);
  const order = epochOrder(ds.count, false, 0, 0);
  for (const [start, end] of batchRanges(ds.count, options.batch)) {
    const b = gatherBatch(ds, order, start, end, encoding, classes);
    const row = tf.tidy(() => {
      const x = tf.tensor(b.x, [b.size, ...input]);
      const y = tf.tensor(b.y, [b.size, b.yWidth]);
      const out = forwardFlat(population, x);
      const members = [memberLosses(tf, loss.name, loss.args, out, y), ...options.metrics.map((name) => memberMetric(tf, name, loss.name, out, y))];
      const ensemble = ensembleMetrics(tf, loss, out, y, options.metrics);
      return tf.concat([...members, ...names.map((name) => ensemble[name]), ...(classification ? [ensemble.voteAccuracy!] : [])]);
    });
    const values = await readFloat(row);
    row.dispose();
    for (let i = 0; i < width; i++) sums[i] += values[i] * b.size;
  }
  const mean = Array.from(sums, (s) => s / ds.count);
  const at = names.length * n;
  return {
    examples: ds.count,
    members: Object.fromEntries(names.map((name, j) => [name, mean.slice(j * n, (j + 1) * n)])) as EnsembleEvaluation['members'],
    ensemble: { ...Object.fromEntries(names.map((name, j) => [name, mean[at + j]])), ...(classification ? { voteAccuracy: mean[at + names.length] } : {}) } as EnsembleEvaluation['ensemble'],
  };
}
