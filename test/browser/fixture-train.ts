// A tiny plain TF.js training run for the browser test: a 4-6-2 tanh MLP, Adam on MSE, full batch.
// Everything (initial weights, data, step count) comes in `input`, so a run is fully determined by it,
// and only TF.js kernels decide whether the browser and Node agree.
import * as tf from '@tensorflow/tfjs';

export interface TrainInput {
  /** initial [w1 4x6, b1 6, w2 6x2, b2 2] */
  weights: { w1: number[][]; b1: number[]; w2: number[][]; b2: number[] };
  x: number[][];
  y: number[][];
  steps: number;
  learningRate: number;
}

export interface TrainOutput {
  w1: number[][];
  b1: number[];
  w2: number[][];
  b2: number[];
  /** the loss before each step */
  losses: number[];
}

export async function run(input: TrainInput): Promise<TrainOutput> {
  const v = {
    w1: tf.variable(tf.tensor2d(input.weights.w1)),
    b1: tf.variable(tf.tensor1d(input.weights.b1)),
    w2: tf.variable(tf.tensor2d(input.weights.w2)),
    b2: tf.variable(tf.tensor1d(input.weights.b2)),
  };
  const x = tf.tensor2d(input.x);
  const y = tf.tensor2d(input.y);
  const optimizer = tf.train.adam(input.learningRate);
  const loss = () => tf.losses.meanSquaredError(y, tf.tanh(x.matMul(v.w1).add(v.b1)).matMul(v.w2).add(v.b2)) as tf.Scalar;
  const losses: number[] = [];
  for (let i = 0; i < input.steps; i++) {
    const value = optimizer.minimize(loss, true)!;
    losses.push((await value.data())[0]);
    value.dispose();
  }
  // read with array(), not arraySync(): WebGPU can only read back asynchronously
  const out = {
    w1: (await v.w1.array()) as number[][],
    b1: (await v.b1.array()) as number[],
    w2: (await v.w2.array()) as number[][],
    b2: (await v.b2.array()) as number[],
    losses,
  };
  optimizer.dispose();
  tf.dispose([x, y, v.w1, v.b1, v.w2, v.b2]);
  return out;
}
