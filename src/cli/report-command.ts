// `netc report RUN`: (re)writes a run's report.html. A run killed before it finished is drawn from the
// metrics it wrote, and the command says so and how to finish it.
import { ExitCode, type Io } from './io.js';
import { withRunLock } from './run-lock.js';
import { existsSync } from 'node:fs';

export async function reportCommand(run: string, io: Io): Promise<number> {
  const { writeRunReport } = await import('../report/report.js');
  try {
    // a directory that is not there gets the report's own message; one that is is locked while it is written
    const write = () => writeRunReport(run);
    const { path, input } = await (existsSync(run) ? withRunLock(run, 'report', write) : write());
    io.out(`report: ${path}\n`);
    const unfinished = input.summary.unfinished;
    if (unfinished) io.err(`netc: ${run} has not finished (no summary.json): the report shows its metrics up to step ${unfinished.step}; finish the run with: ${unfinished.resume}\n`);
    return ExitCode.ok;
  } catch (e) {
    io.err(`netc: cannot write the report of ${run}: ${(e as Error).message}\n`);
    return ExitCode.errors;
  }
}
