// Dawn's harmless notes, kept off a user's screen. On opening an adapter, Dawn (the 'webgpu' package) prints
// notes to stderr from native code, with fprintf on file descriptor 2, e.g. on Mesa's lavapipe:
//   Warning: maxDynamicUniformBuffersPerPipelineLayout artificially reduced from 1000000 to 16 to fit dynamic offset allocation limit.
// No JavaScript in that process can catch them (process.stderr.write never sees them, and Node cannot
// redirect a descriptor), so a command that runs on the webgpu backend runs in a child process whose stderr
// passes through a filter here that drops only these known lines: everything else, Dawn's real warnings
// included ("Warning: Couldn't load Vulkan ..."), reaches the screen unchanged and at once.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

/** Dawn's notes known to be harmless, line by line, exactly as it prints them. */
export const DAWN_NOTES: readonly RegExp[] = [
  /^Warning: maxDynamic(Uniform|Storage)BuffersPerPipelineLayout artificially reduced from \d+ to \d+ to fit dynamic offset allocation limit\.$/,
];

/** The start every note shares: a partial line that could still become a note waits for its end. */
const NOTE_START = 'Warning: maxDynamic';

/** Set in the child, so that it runs the command itself; NETC_STDERR_TTY passes on whether stderr is a terminal. */
const CHILD = 'NETC_DAWN_FILTERED';

/** Whether this command line selects the webgpu backend and is not already the filtered child. */
export function wantsDawnFilter(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  if (env[CHILD] === '1') return false;
  return argv.some((arg, i) => arg === '--backend=webgpu' || (arg === '--backend' && argv[i + 1] === 'webgpu'));
}

/** Whether stderr is a terminal, as the user's shell gave it (the filtered child's own stderr is a pipe). */
export function stderrIsTTY(): boolean {
  return process.stderr.isTTY === true || process.env['NETC_STDERR_TTY'] === '1';
}

/**
 * Runs `node [execArgv] script ...argv` with stdin and stdout inherited and stderr filtered; resolves to its
 * exit code (128 + the signal's number when a signal ended it). Ctrl-C reaches the child from the terminal,
 * so this process waits for it; a SIGTERM sent to this process is passed on.
 */
export function runWithoutDawnNotes(script: string, argv: readonly string[]): Promise<number> {
  const child = spawn(process.execPath, [...process.execArgv, script, ...argv], {
    stdio: ['inherit', 'inherit', 'pipe'],
    env: { ...process.env, [CHILD]: '1', NETC_STDERR_TTY: process.stderr.isTTY ? '1' : '0' },
  });
  const filter = new NoteFilter((text) => process.stderr.write(text));
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => filter.push(chunk));
  const wait = () => {};
  const forward = () => child.kill('SIGTERM');
  process.on('SIGINT', wait);
  process.on('SIGTERM', forward);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      filter.end();
      process.off('SIGINT', wait);
      process.off('SIGTERM', forward);
      resolve(code ?? 128 + (signal ? constants.signals[signal] : 0));
    });
  });
}

/**
 * Drops DAWN_NOTES from a stream of text and passes the rest on as it comes: a partial line is held only
 * while it could still become a note, so a progress line ('\r...') is never delayed.
 */
export class NoteFilter {
  private held = '';
  /** inside a line already passed on, up to its '\n' */
  private passing = false;

  constructor(private readonly write: (text: string) => void) {}

  push(text: string): void {
    let out = '';
    let rest = this.held + text;
    this.held = '';
    for (let end = rest.indexOf('\n'); end >= 0; end = rest.indexOf('\n')) {
      const line = rest.slice(0, end);
      if (this.passing || !isNote(line)) out += line + '\n';
      this.passing = false;
      rest = rest.slice(end + 1);
    }
    if (rest !== '') {
      if (!this.passing && couldBeNote(rest)) this.held = rest;
      else {
        out += rest;
        this.passing = true;
      }
    }
    if (out !== '') this.write(out);
  }

  /** The stream ended: a held partial line was no note after all. */
  end(): void {
    if (this.held !== '') this.write(this.held);
    this.held = '';
  }
}

function isNote(line: string): boolean {
  return DAWN_NOTES.some((note) => note.test(line));
}

function couldBeNote(partial: string): boolean {
  return partial.length <= NOTE_START.length ? NOTE_START.startsWith(partial) : partial.startsWith(NOTE_START);
}
