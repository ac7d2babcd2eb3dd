// Reads and compiles one .net file for a command, printing its diagnostics. Shared by every command
// that starts from a .net file.
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { hasErrors, type Span } from '../diagnostics/diagnostic.js';
import { formatDiagnostics, formatHeader, lineStarts, offsetToLineCol } from '../diagnostics/format.js';
import { compile, type CompileOptions, type CompileState } from '../pipeline.js';
import { fileHost } from './host.js';
import { ExitCode, type Io } from './io.js';
import { DiagnosticSink } from '../diagnostics/sink.js';
import { Messages, type MessageDef } from '../diagnostics/messages.js';
import { findBinaryData, type BinaryData } from '../syntax/source-bytes.js';
import { notARegularFile } from '../util/regular-file.js';

/**
 * `text`: the file's source when it is not read from disk (a resume from run.json), and its folder for data
 * paths. The data files are read through `options.host` where given, else through a fileHost of the file's folder.
 */
export function compileFile(path: string, io: Io, after?: string, options: CompileOptions = {}, text?: { source: string; baseDir: string }): CompileState | undefined {
  let bytes: Buffer;
  const kind = text ? undefined : notARegularFile(path);
  if (kind) {
    io.err(`netc: cannot read '${path}': it is ${kind}, not a .net file\n`);
    return undefined;
  }
  try {
    bytes = text ? Buffer.from(text.source, 'utf8') : readFileSync(path);
  } catch (e) {
    io.err(`netc: cannot read '${path}': ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}\n`);
    return undefined;
  }
  const binary = findBinaryData(bytes);
  if (binary) return binaryFile(path, bytes, binary, io);
  const source = bytes.toString('utf8');
  const host = options.host ?? fileHost(text ? join(text.baseDir, basename(path)) : path);
  const state = compile(source, path, { ...options, host, after });
  if (state.diagnostics.length) io.err(formatDiagnostics(state.diagnostics, source) + '\n\n');
  return state;
}

/** A file that is not text: one diagnostic where its binary data starts, printed without an excerpt. */
export function binaryFile(path: string, bytes: Uint8Array, binary: BinaryData, io: Io): CompileState {
  const before = Buffer.from(bytes.subarray(0, binary.offset)).toString('utf8');
  const sink = new DiagnosticSink(path);
  sink.report(Messages.BinaryFile, { start: before.length, length: 0 }, path, binary.offset, binary.what);
  const { line, col } = offsetToLineCol(lineStarts(before), before.length);
  io.err(formatHeader(sink.diagnostics[0], line, col) + '\n\n');
  return { path, source: '', diagnostics: sink.diagnostics };
}

export const compiledCleanly = (state: CompileState | undefined): boolean => !!state && !hasErrors(state.diagnostics);

/**
 * An error about a .net file as a whole (no train block; a checkpoint it cannot resume), printed as a
 * diagnostic at the file's start. Returns the exit code for errors.
 */
export function fileError(io: Io, file: string, def: MessageDef, length: number, ...args: (string | number)[]): number {
  return sourceError(io, file, readFileSync(file, 'utf8'), def, length, ...args);
}

/** fileError for a source already in memory. */
export function sourceError(io: Io, file: string, source: string, def: MessageDef, length: number, ...args: (string | number)[]): number {
  return sourceErrorAt(io, file, source, def, { start: 0, length }, ...args);
}

/** As sourceError, at a span of the file (what in it makes a command-line option impossible, say). */
export function sourceErrorAt(io: Io, file: string, source: string, def: MessageDef, span: Span, ...args: (string | number)[]): number {
  const sink = new DiagnosticSink(file);
  sink.report(def, span, ...args);
  io.err(formatDiagnostics(sink.diagnostics, source) + '\n');
  return ExitCode.errors;
}
