// The body of the worker thread that draws a training run's report.html (report-worker.ts starts it). It
// loads the report's modules (vega and vega-lite, about a third of a second) as soon as it starts, while the
// main thread loads TF.js and trains, then draws the one report it is sent and answers with its path.
import { parentPort } from 'node:worker_threads';
import type { RunSummary } from '../report/report.js';

export interface ReportJob {
  runDir: string;
  summary: RunSummary;
}

export type ReportAnswer = { path: string } | { error: string };

const loading = import('../report/report.js');
// a failed load is answered when the job comes; until then it is not an unhandled rejection that ends the thread
loading.catch(() => undefined);

parentPort!.once('message', async (job: ReportJob) => {
  let answer: ReportAnswer;
  try {
    const { writeReport } = await loading;
    answer = { path: await writeReport(job.runDir, job.summary) };
  } catch (e) {
    answer = { error: (e as Error).message };
  }
  parentPort!.postMessage(answer);
});
