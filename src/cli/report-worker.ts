// Who draws report.html at the end of `netc train`. vega and vega-lite take about a third of a second to
// load, which the run's summary line waited for after training; a worker thread started with the run loads
// them on another core while this thread loads TF.js and trains, and draws the report once it is sent the
// summary. From the sources (vitest, tsx) a worker could not load TypeScript: the report is drawn here then.
import { Worker } from 'node:worker_threads';
import type { RunSummary } from '../report/report.js';
import type { ReportAnswer, ReportJob } from './report-thread.js';

export interface ReportWriter {
  /** Writes runDir/report.html from the summary just written to summary.json; its path, or throws. */
  write(runDir: string, summary: RunSummary): Promise<string>;
  /** Ends the thread of a run that ends without a report (an error, nothing to train); idempotent. */
  close(): void;
}

/** A writer whose thread starts loading the report's modules now (where netc runs from dist/). */
export function startReportWriter(): ReportWriter {
  const url = new URL('./report-thread.js', import.meta.url);
  if (import.meta.url.endsWith('.ts')) return inProcess;
  const worker = new Worker(url);
  // a thread still loading vega does not keep a run that ends early from exiting
  worker.unref();
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    void worker.terminate();
  };
  return {
    write: (runDir, summary) =>
      new Promise<string>((resolve, reject) => {
        worker.ref();
        worker.once('message', (answer: ReportAnswer) => ('path' in answer ? resolve(answer.path) : reject(new Error(answer.error))));
        worker.once('error', reject);
        worker.once('exit', (code) => reject(new Error(`the report's thread ended (exit code ${code})`)));
        worker.postMessage({ runDir, summary } satisfies ReportJob);
      }).finally(close),
    close,
  };
}

/** The report drawn on this thread, loading its modules when it is asked for. */
export const inProcess: ReportWriter = {
  write: async (runDir, summary) => {
    const { writeReport } = await import('../report/report.js');
    return writeReport(runDir, summary);
  },
  close: () => undefined,
};
