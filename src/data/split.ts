// Held-out data as Keras' validation_split takes it: the last examples, in order, before any shuffling.
// A test share is held out first, from the very end; the validation share comes right before it.
import { sliceDataset, type Dataset } from './dataset.js';

/**
 * The data in its order: train, then floor(count * validation) validation examples, then the last
 * floor(count * test) test examples. A split with no example is left out. All share ds's memory.
 */
export function splitData(ds: Dataset, validation: number, test = 0): { train: Dataset; validation?: Dataset; test?: Dataset } {
  const tested = Math.floor(ds.count * test);
  const validated = Math.floor(ds.count * validation);
  const trainEnd = ds.count - tested - validated;
  const validationEnd = ds.count - tested;
  return {
    train: tested + validated > 0 ? sliceDataset(ds, 0, trainEnd) : ds,
    ...(validated > 0 ? { validation: sliceDataset(ds, trainEnd, validationEnd) } : {}),
    ...(tested > 0 ? { test: sliceDataset(ds, validationEnd, ds.count) } : {}),
  };
}

/** What training sees: the train and validation splits of splitData, never the test split. */
export function splitValidation(ds: Dataset, fraction: number, test = 0): { train: Dataset; validation?: Dataset } {
  const { train, validation } = splitData(ds, fraction, test);
  return validation ? { train, validation } : { train };
}
