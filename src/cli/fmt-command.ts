// `netc fmt [--check] FILE...`: rewrites each file in its canonical form (syntax/format.ts), in place (the
// file keeps its inode, mode, owner and links; a symbolic link's target is rewritten), or with
// `--check` lists those that would change. `-` reads standard input and prints to standard output. A file
// that does not parse gets its syntax errors, as netc check prints them, and is left as it is.
import { readFileSync, statSync } from 'node:fs';
import { Messages } from '../diagnostics/messages.js';
import { DiagnosticSink } from '../diagnostics/sink.js';
import { formatHeader } from '../diagnostics/format.js';
import { notARegularFile } from '../util/regular-file.js';
import { formatDiagnostics } from '../diagnostics/format.js';
import { formatSource } from '../syntax/format.js';
import { findBinaryData } from '../syntax/source-bytes.js';
import { InPlaceError, notWritable, writeInPlace } from '../util/write-in-place.js';
import { binaryFile } from './compile-file.js';
import { ExitCode, type Io } from './io.js';

/**
 * The largest file fmt reads (1 MiB; a model file is a few KB): formatting a 50 MB file ran V8 out of
 * memory, an end no code can catch. Larger files are refused before they are read.
 */
export const MAX_SOURCE_BYTES = 2 ** 20;

export interface FmtOptions {
  check?: boolean;
}

/** What became of one file. */
type Outcome = 'same' | 'changed' | 'failed';

export function fmtCommand(files: string[], opts: FmtOptions, io: Io, stdin: () => Buffer = () => readFileSync(0)): number {
  const outcomes = files.map((file) => fmtFile(file, opts, io, stdin));
  if (outcomes.includes('failed')) return ExitCode.errors;
  return opts.check && outcomes.includes('changed') ? ExitCode.errors : ExitCode.ok;
}

function fmtFile(file: string, opts: FmtOptions, io: Io, stdin: () => Buffer): Outcome {
  const fromStdin = file === '-';
  const name = fromStdin ? '<stdin>' : file;
  const source = readSource(file, name, io, stdin);
  if (source === undefined) return 'failed';
  const result = formatSource(source, name);
  if (!result.ok) {
    io.err(formatDiagnostics(result.diagnostics, source) + '\n\n');
    return 'failed';
  }
  const changed = result.text !== source;
  if (opts.check) {
    if (changed) io.out(`${name}\n`);
  } else if (fromStdin) io.out(result.text);
  else if (changed && !rewrite(file, result.text, io)) return 'failed';
  return changed ? 'changed' : 'same';
}

/**
 * Writes the formatted text into the file itself (writeInPlace: its links, mode and owner kept); a
 * read-only file is refused and left as it is, as gofmt and prettier leave it. False after a message.
 */
function rewrite(file: string, text: string, io: Io): boolean {
  const why = notWritable(file);
  if (why) {
    io.err(`netc: cannot write '${file}': ${why}; netc fmt leaves it as it is (netc fmt - < ${file} prints its formatted text)\n`);
    return false;
  }
  try {
    writeInPlace(file, text);
    return true;
  } catch (e) {
    if (!(e instanceof InPlaceError)) throw e;
    io.err(`netc: ${e.message}\n`);
    return false;
  }
}

/** The file's text, or undefined (and a message) when it cannot be read or is not text. */
function readSource(file: string, name: string, io: Io, stdin: () => Buffer): string | undefined {
  let bytes: Buffer;
  const kind = file === '-' ? undefined : notARegularFile(file);
  if (kind) {
    io.err(`netc: cannot read '${name}': it is ${kind}, not a .net file\n`);
    return undefined;
  }
  try {
    if (file !== '-' && statSync(file).size > MAX_SOURCE_BYTES) return tooLarge(name, statSync(file).size, io);
    bytes = file === '-' ? stdin() : readFileSync(file);
  } catch (e) {
    io.err(`netc: cannot read '${name}': ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}\n`);
    return undefined;
  }
  if (bytes.length > MAX_SOURCE_BYTES) return tooLarge(name, bytes.length, io);
  const binary = findBinaryData(bytes);
  if (binary) {
    binaryFile(name, bytes, binary, io);
    return undefined;
  }
  return bytes.toString('utf8');
}

/** NET1013 at the file's start; undefined, as readSource returns for a file it refuses. */
function tooLarge(name: string, size: number, io: Io): undefined {
  const sink = new DiagnosticSink(name);
  sink.report(Messages.SourceTooLarge, { start: 0, length: 0 }, name, (size / 2 ** 20).toFixed(1), MAX_SOURCE_BYTES / 2 ** 20);
  io.err(formatHeader(sink.diagnostics[0], 1, 1) + '\n');
  return undefined;
}
