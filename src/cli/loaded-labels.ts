// The class labels of loaded data against the run's loss and output (data/class-labels.ts): checked on
// every load, since `netc check` reads only files small enough to read whole.
import { checkClassLabels } from '../data/class-labels.js';
import type { Dataset } from '../data/dataset.js';
import type { ModelIR } from '../ir/model-ir.js';
import { losses } from '../vocabulary/losses.js';
import { checkTokenIds } from '../data/token-ids.js';
import { tokenReader } from '../ir/token-reader.js';

/** Throws a DataError for a label that is no class index of the model's output under the sparse loss `lossName`. */
export function checkLoadedLabels(ds: Dataset, lossName: string | undefined, ir: ModelIR): void {
  const loss = losses.find((l) => l.name === lossName);
  const out = ir.ops[ir.output].shape;
  if (loss && out.length === 1) checkClassLabels(ds, loss, out[0]);
}

/** Throws a DataError for a token id, in any example of any split, that the layer reading the model's input cannot look up. */
export function checkLoadedTokens(ds: Dataset, ir: ModelIR): void {
  const reader = tokenReader(ir);
  if (reader) checkTokenIds(ds, reader);
}
