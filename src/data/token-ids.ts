// Token ids against the layer that reads them. An embedding looks each id up as a row of its table: TF.js's
// gather takes an id past the table's end without a word (it gives zeros on some backends and garbage on
// others), and a fraction is cut to an integer. So every id of every example, whichever split it falls in,
// is checked once the data is loaded, before anything trains on it or predicts from it.
import { Messages } from '../diagnostics/messages.js';
import { dataError, featureSize, type Dataset } from './dataset.js';

/** The layer that reads the model's input as token ids: how messages name it, and its vocabulary's size. */
export interface TokenReader {
  /** `embedding_1` */
  layer: string;
  vocab: number;
}

/** Throws a DataError (NET4090) naming the data, the row, the step and the value of the first id not in [0, vocab). */
export function checkTokenIds(ds: Dataset, reader: TokenReader): void {
  const width = featureSize(ds);
  for (let i = 0; i < ds.x.length; i++) {
    const v = ds.x[i];
    if (Number.isInteger(v) && v >= 0 && v < reader.vocab) continue;
    const why = Number.isInteger(v)
      ? `is outside the vocabulary [0, ${reader.vocab}) of ${reader.layer}, which reads the model's input`
      : `is not a whole number: ${reader.layer} reads the model's input as token ids in [0, ${reader.vocab})`;
    throw dataError(Messages.DataTokenOutOfRange, [Math.floor(i / width), i % width, v, why], ds.name);
  }
}
