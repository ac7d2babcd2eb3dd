// The held-out splits of a classification run against the classes training has: the last examples of data
// sorted by class may hold one class alone, and nothing else would say so (NET4034, a warning).
import type { Span } from '../diagnostics/diagnostic.js';
import { formatDiagnostics } from '../diagnostics/format.js';
import { Messages } from '../diagnostics/messages.js';
import { DiagnosticSink } from '../diagnostics/sink.js';
import type { Dataset } from '../data/dataset.js';
import { classesLacking } from '../data/split.js';
import type { CompileState } from '../pipeline.js';
import { losses } from '../vocabulary/losses.js';
import type { Io } from './io.js';
import { andList } from '../util/plural.js';

const listed = (cs: number[]) => (cs.length === 1 ? `class ${cs[0]}` : `classes ${andList(cs)}`);

/** Prints NET4034 for each held-out split (validation, test) that lacks a class of the training split. */
export function warnHeldOutClasses(state: CompileState, all: Dataset, splits: { train: Dataset; validation?: Dataset; test?: Dataset }, io: Io): void {
  const train = state.program!.train!;
  if (losses.find((l) => l.name === train.loss.name)?.expects === 'regression') return;
  const sink = new DiagnosticSink(state.path);
  for (const key of ['validation', 'test'] as const) {
    const held = splits[key];
    const lacking = held ? classesLacking(splits.train, held) : [];
    if (!held || !lacking.length) continue;
    const which = train.holdout === 'shuffled' ? `${held.count} examples of ${all.name} drawn from the seed` : `the last ${held.count} examples of ${all.name}`;
    const fix = train.holdout === 'shuffled' ? '' : "; held-out examples are the data's last, in its order, and the data may be sorted by class: add holdout: shuffled to the train block to hold out a sample drawn from the seed";
    sink.report(Messages.HeldOutLacksClasses, keySpan(state.source, key), key, which, listed(lacking), lacking.length === 1 ? 'it' : 'them', fix);
  }
  if (sink.diagnostics.length) io.err(formatDiagnostics(sink.diagnostics, state.source) + '\n');
}

/** Where the train block writes `key:` (its last occurrence), else the file's start. */
function keySpan(source: string, key: string): Span {
  const at = [...source.matchAll(new RegExp(`\\b${key}\\s*:`, 'g'))].pop();
  return at?.index === undefined ? { start: 0, length: 0 } : { start: at.index, length: key.length };
}
