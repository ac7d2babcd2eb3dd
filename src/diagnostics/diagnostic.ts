// A diagnostic points at a span of one source file; line and column are computed only when printing
// (the TypeScript compiler's habit), so the checker works on plain offsets.
export type Category = 'error' | 'warning';

export interface Span {
  start: number;
  length: number;
}

export interface Diagnostic {
  code: number;
  category: Category;
  file: string;
  start: number;
  length: number;
  message: string;
}

export function spanUnion(a: Span, b: Span): Span {
  const start = Math.min(a.start, b.start);
  const end = Math.max(a.start + a.length, b.start + b.length);
  return { start, length: end - start };
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.category === 'error');
}
