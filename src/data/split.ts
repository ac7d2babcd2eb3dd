// Validation data as Keras' validation_split takes it: the last examples, in order, before any shuffling.
import { sliceDataset, type Dataset } from './dataset.js';

/** The last floor(count * fraction) examples validate; none when that is 0. Both share ds's memory. */
export function splitValidation(ds: Dataset, fraction: number): { train: Dataset; validation?: Dataset } {
  const held = Math.floor(ds.count * fraction);
  if (held <= 0) return { train: ds };
  const cut = ds.count - held;
  return { train: sliceDataset(ds, 0, cut), validation: sliceDataset(ds, cut, ds.count) };
}
