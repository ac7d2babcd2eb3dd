// One metrics.jsonl line as the report reads it back (src/report/run-data.ts), made from the epoch's report
// in memory: netc train hands the report its lines instead of the report reading the file it has just
// written (seed000's 15,000 lines were a tenth of the command's time, read and parsed again).
import type { EpochReport } from '../train/trainer.js';
import type { MetricsLine } from '../report/run-data.js';

/**
 * Member `m`'s line of epoch report `r`, shown with `hyperparameters`: the members of metrics.jsonl's line in
 * its order, a metric left out where it is undefined (JSON drops it), and a non-finite metric NaN (JSON
 * writes null, which the report reads as NaN).
 */
export function readBackLine(r: EpochReport, m: number, hyperparameters: Record<string, number>): MetricsLine {
  const line: Record<string, unknown> = { epoch: r.epoch, step: r.step, member: r.members[m], hyperparameters };
  // lr is not a metric: the report reads its null back as null
  if (r.lr[m] !== undefined) line.lr = Number.isFinite(r.lr[m]) ? r.lr[m] : null;
  const metrics = r.metrics[m] as unknown as Record<string, number | undefined>;
  for (const name in metrics) if (metrics[name] !== undefined) line[name] = asRead(metrics[name]);
  return line as unknown as MetricsLine;
}

const asRead = (v: number) => (Number.isFinite(v) ? v : NaN);
