// The rows of a table at a tensor's token ids, with its gradient scattered back onto the rows: the
// embedding layer's op (src/layers/embedding.ts). A kernel, so that the compiled module calls it as netc
// runs it: TF.js's own gradient of gather is an UnsortedSegmentSum, which TF.js's wasm backend lacks (netc
// registers one for tfjs-layers models); ScatterNd is on every backend.
import { kernel } from './kernel.js';
import type { TF, Tensor } from './tf.js';

type GradFunc = Parameters<TF['customGrad']>[0];

/**
 * The rows of `table` [R, D] at the ids of `x` (float32 values that are integers, any shape): [...x, D].
 * With `members` > 0, x's axis `axis` is the member axis and member m's ids are offset by m * `vocab`
 * (the members' tables stacked as one [N*vocab, D]). The ids are made inside, so that they live until the
 * backward pass; the offsets by ops, so that a trace keeps N a variable.
 */
function gatherRowsKernel(tf: TF, table: Tensor, x: Tensor, members: number, vocab: number, axis: number): Tensor {
  const [rows, dim] = table.shape;
  const f = tf.customGrad(((t: Tensor, save: (ts: Tensor[]) => void) => {
    const ids = members > 0 ? memberIds(tf, x, members, vocab, axis) : tf.cast(x, 'int32');
    save([ids]);
    return {
      value: tf.gather(t, ids),
      gradFunc: (dy: Tensor, [saved]: Tensor[]) => [tf.scatterND(tf.reshape(saved, [-1, 1]), tf.reshape(dy, [-1, dim]), [rows, dim])],
    };
  }) as unknown as GradFunc);
  return (f as unknown as (t: Tensor) => Tensor)(table);
}

function memberIds(tf: TF, x: Tensor, members: number, vocab: number, axis: number): Tensor {
  const shape = x.shape.map((_, a) => (a === axis ? members : 1));
  return tf.add(tf.cast(x, 'int32'), tf.reshape(tf.range(0, members * vocab, vocab, 'int32'), shape));
}

export const gatherRows = kernel('gatherRows', gatherRowsKernel);
