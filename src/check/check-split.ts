// Checks `split:` against the rest of the file: each member validates on examples of its own, so the
// train block holds none out for validation; PBT would copy weights across members' data; kfold needs
// every setting's k folds, and no shared layer that trains on every fold at once.
import { Messages } from '../diagnostics/messages.js';
import type { DiagnosticSink } from '../diagnostics/sink.js';
import type { EntriesBlock } from '../syntax/ast.js';
import { splitText } from '../vocabulary/splits.js';
import type { CheckedModel, EnsembleConfig, ScheduleConfig, TrainConfig } from './program.js';

export interface SplitScope {
  ensemble: EnsembleConfig;
  train?: TrainConfig;
  trainBlock?: EntriesBlock;
  schedules: readonly ScheduleConfig[];
  model?: CheckedModel;
}

export function checkSplit({ ensemble, train, trainBlock, schedules, model }: SplitScope, sink: DiagnosticSink): void {
  const split = ensemble.split!;
  const span = ensemble.splitSpan!;
  const text = splitText(split);
  const held = split.kind === 'kfold' ? `its fold, i mod ${split.k}` : 'the examples it did not draw';
  const validation = trainBlock?.entries.find((e) => !e.vary && e.path[0].name === 'validation');
  if (train && train.validation > 0 && validation) sink.report(Messages.SplitWithValidation, validation.value.span, text, held, train.validation);
  for (const s of schedules) if (s.name === 'pbt') sink.report(Messages.SplitWithPbt, s.span, text);
  if (split.kind !== 'kfold') return;
  if (ensemble.members % split.k !== 0) sink.report(Messages.SplitMembers, ensemble.membersSpan ?? span, split.k, ensemble.members);
  const shared = model?.layers.find((l) => l.shared);
  if (shared) sink.report(Messages.SplitWithShared, span, split.k);
}
