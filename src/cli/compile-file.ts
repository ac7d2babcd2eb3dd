// Reads and compiles one .net file for a command, printing its diagnostics. Shared by every command
// that starts from a .net file.
import { readFileSync } from 'node:fs';
import { hasErrors } from '../diagnostics/diagnostic.js';
import { formatDiagnostics } from '../diagnostics/format.js';
import { compile, type CompileOptions, type CompileState } from '../pipeline.js';
import { fileHost } from './host.js';
import { ExitCode, type Io } from './io.js';
import { DiagnosticSink } from '../diagnostics/sink.js';
import type { MessageDef } from '../diagnostics/messages.js';

export function compileFile(path: string, io: Io, after?: string, options: CompileOptions = {}): CompileState | undefined {
  let source: string;
  try {
    source = readFileSync(path, 'utf8');
  } catch (e) {
    io.err(`netc: cannot read '${path}': ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}\n`);
    return undefined;
  }
  const state = compile(source, path, { ...options, host: fileHost(path), after });
  if (state.diagnostics.length) io.err(formatDiagnostics(state.diagnostics, source) + '\n\n');
  return state;
}

export const compiledCleanly = (state: CompileState | undefined): boolean => !!state && !hasErrors(state.diagnostics);

/**
 * An error about a .net file as a whole (no train block; a checkpoint it cannot resume), printed as a
 * diagnostic at the file's start. Returns the exit code for errors.
 */
export function fileError(io: Io, file: string, def: MessageDef, length: number, ...args: (string | number)[]): number {
  const sink = new DiagnosticSink(file);
  sink.report(def, { start: 0, length }, ...args);
  io.err(formatDiagnostics(sink.diagnostics, readFileSync(file, 'utf8')) + '\n');
  return ExitCode.errors;
}
