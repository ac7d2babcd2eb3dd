// Gathers along the member axis of a fused tensor, whatever its layout: the one operation that PBT
// (a member takes another's weights) and compaction (stopped members leave) are made of. It runs on the
// device, with no files and no copies through the host.
import type { Shape } from '../core/arg-spec.js';
import type { ParamLayout } from '../core/layout.js';
import type { TF, Tensor } from './tf.js';

/** The fused tensor of `positions.length` members, member i being member positions[i] of `t`. */
export function gatherMembers(tf: TF, t: Tensor, layout: ParamLayout, shape: Shape, n: number, positions: number[]): Tensor {
  const idx = tf.tensor1d(positions, 'int32');
  const k = positions.length;
  const lead = shape.slice(0, -2);
  const out = (() => {
    switch (layout) {
      case 'stacked':
        return tf.gather(t, idx, 0);
      case 'columns': {
        const w = shape[shape.length - 1];
        const split = tf.reshape(t, [...shape.slice(0, -1), n, w]);
        return tf.reshape(tf.gather(split, idx, shape.length - 1), [...shape.slice(0, -1), k * w]);
      }
      case 'blockdiag': {
        const [fin, fout] = shape.slice(-2);
        const blocks = tf.reshape(t, [...lead, n, fin, n, fout]);
        const rows = tf.gather(blocks, idx, lead.length);
        return tf.reshape(tf.gather(rows, idx, lead.length + 2), [...lead, k * fin, k * fout]);
      }
      case 'separate':
        throw new Error('separate parameters are gathered member by member');
      case 'shared':
        throw new Error('shared parameters have no member axis to gather along');
    }
  })();
  idx.dispose();
  return out;
}
