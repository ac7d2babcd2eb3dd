// Where the CLI writes. Tests pass their own to capture output; the binary uses the process streams.
export interface Io {
  out(text: string): void;
  err(text: string): void;
}

// stderr closed early (`netc train ... 2>&1 | head`): what goes there is only talk, so netc goes on, and a
// training run still writes all its files, rather than dying mid-run of an unhandled EPIPE
let stderrClosed = false;
process.stderr.on?.('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') stderrClosed = true;
  else throw e;
});

export const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => void (stderrClosed || process.stderr.write(text)),
};

// `netc ... | head` closes stdout early: end quietly, as Unix tools do, instead of failing with EPIPE
process.stdout.on?.('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

/** Exit codes: 0 clean, 1 errors in the input, 2 bad command-line usage, 70 a bug in netc. */
export const ExitCode = { ok: 0, errors: 1, usage: 2, internal: 70 } as const;

/** A mistake in how netc was called: printed without a stack trace, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
