// Class labels against the loss and the output. A sparse categorical loss takes each label as the index of
// one of the last layer's units, so a label must be a whole number in [0, units): TF.js would train on
// label 2 of a 2-unit softmax without a word (PyTorch says "Target 2 is out of bounds"). Labels of kind
// 'classes' are checked by their loaders against the class count, which the checker fits to the output;
// value labels (a csv column) are checked here, once they are loaded, and at check time from the file.
import { Messages } from '../diagnostics/messages.js';
import type { LossSpec } from '../vocabulary/losses.js';
import { dataError, type Dataset } from './dataset.js';

/** Throws a DataError (NET4017) for the first label that is not a class index below `units` under a sparse loss. */
export function checkClassLabels(ds: Dataset, loss: Pick<LossSpec, 'name' | 'expects'>, units: number): void {
  if (loss.expects !== 'sparse' || ds.labels.kind !== 'values' || ds.labels.columns !== 1) return;
  for (let i = 0; i < ds.count; i++) {
    const v = ds.y[i];
    if (!Number.isInteger(v) || v < 0) throw dataError(Messages.DataLabelOutOfRange, [v, i, ': class indices are whole numbers from 0'], ds.name);
    if (v >= units) throw dataError(Messages.DataLabelOutOfRange, [v, i, ` in 0..${units - 1}: ${loss.name} needs one class per unit of the last layer, which has ${units}`], ds.name);
  }
}

/** The first label of a column read at check time that is not a class index below `units`, with its line. */
export interface LabelValue {
  text: string;
  line: number;
}

/** What the checker learnt of a csv label column: its first value that is not a whole number from 0, and its largest. */
export interface LabelColumn {
  /** the file as the .net file names it */
  file: string;
  column: string;
  notIndex?: LabelValue;
  largest?: LabelValue & { value: number };
}

/** The first label in `column` that is not a class index below `units`, or undefined when all are. */
export function notAClass(column: LabelColumn, units: number): LabelValue | undefined {
  if (column.notIndex) return column.notIndex;
  return column.largest && column.largest.value >= units ? column.largest : undefined;
}
