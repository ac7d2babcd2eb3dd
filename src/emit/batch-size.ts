// Traces of one section at several member counts N and batch sizes B -> one text in which the numbers
// that follow them are written as expressions of N and B. Numbers are marked ⟦n⟧ by the trace
// (src/emit/trace.ts); all else must be the same in every trace. A number that changes must be
// a + b*N + c*B + d*N*B with whole coefficients: fitted on four traces, checked on a fifth. So the
// module runs a population of any size (halving compacts it) on batches of any size.

const MARK = /⟦([^⟧]*)⟧/g;

/** A member count and a batch size a section is traced at. */
export type TracePoint = readonly [members: number, batch: number];

/**
 * Where sections are traced: small (the trace runs real ops), and unlike any size a model has. The first
 * four fit the coefficients, the fifth checks them.
 */
export const TRACE_POINTS: readonly TracePoint[] = [
  [2, 3],
  [2, 5],
  [3, 3],
  [3, 5],
  [4, 7],
];

/** For code whose length grows with N (the loop lowering): N as it is, B varied. */
export const batchPoints = (members: number): TracePoint[] => [3, 5, 7].map((b) => [members, b] as const);

/** Lines traced at each point -> lines with numbers (and N and B expressions) written out. */
export function generalise(traces: string[][], points: readonly TracePoint[]): string[] {
  const [first, ...rest] = traces;
  for (const t of rest) {
    if (t.length !== first.length) throw new Error(`internal error: traces at (N, B) = ${points.map((p) => `(${p.join(', ')})`).join(' ')} differ in length:\n${first.join('\n')}\n--\n${t.join('\n')}`);
  }
  return first.map((_, i) => mergeLine(traces.map((t) => t[i]), points));
}

/** Lines of one trace with their markers removed. */
export function literal(lines: string[]): string[] {
  return lines.map((line) => line.replace(MARK, (_, n: string) => n));
}

function mergeLine(lines: string[], points: readonly TracePoint[]): string {
  const text = (l: string) => l.replace(MARK, '⟦⟧');
  if (lines.some((l) => text(l) !== text(lines[0]))) throw new Error(`internal error: the traces differ beyond their numbers:\n${lines.join('\n')}`);
  const numbers = lines.map((l) => [...l.matchAll(MARK)].map((m) => Number(m[1])));
  let k = 0;
  return lines[0].replace(MARK, (_, n: string) => {
    const values = numbers.map((ns) => ns[k]);
    k++;
    return values.every((v) => Object.is(v, values[0])) ? n : sizeExpression(values, points);
  });
}

/** a + b*N + c*B + d*N*B through the values at the points (or a + c*B where N does not change). */
function sizeExpression(values: number[], points: readonly TracePoint[]): string {
  const coefficients = points.every(([n]) => n === points[0][0]) ? fitB(values, points) : fitNB(values, points);
  const [a, b, c, d] = coefficients;
  const fits = [a, b, c, d].every(Number.isInteger) && values.every((v, i) => v === a + b * points[i][0] + c * points[i][1] + d * points[i][0] * points[i][1]);
  if (!fits) throw new Error(`internal error: a number of the traced step (${values.join(', ')}) does not follow the member count and batch size`);
  const terms: string[] = [];
  const term = (coefficient: number, name: string) => {
    if (coefficient === 0) return;
    const magnitude = Math.abs(coefficient) === 1 ? name : `${Math.abs(coefficient)} * ${name}`;
    terms.push(terms.length === 0 ? (coefficient < 0 ? `-${magnitude}` : magnitude) : `${coefficient < 0 ? '-' : '+'} ${magnitude}`);
  };
  term(d, 'N * B');
  term(b, 'N');
  term(c, 'B');
  if (a !== 0) terms.push(terms.length === 0 ? String(a) : `${a < 0 ? '-' : '+'} ${Math.abs(a)}`);
  return terms.join(' ') || '0';
}

function fitB(values: number[], points: readonly TracePoint[]): [number, number, number, number] {
  const c = (values[1] - values[0]) / (points[1][1] - points[0][1]);
  return [values[0] - c * points[0][1], 0, c, 0];
}

function fitNB(v: number[], p: readonly TracePoint[]): [number, number, number, number] {
  // p[0..3] = (n0, b0), (n0, b1), (n1, b0), (n1, b1)
  const [n0, b0] = p[0];
  const [n1, b1] = p[3];
  const d = (v[3] - v[2] - (v[1] - v[0])) / ((n1 - n0) * (b1 - b0));
  const c = (v[1] - v[0]) / (b1 - b0) - d * n0;
  const b = (v[2] - v[0]) / (n1 - n0) - d * b0;
  const a = v[0] - b * n0 - c * b0 - d * n0 * b0;
  return [a, b, c, d];
}

/**
 * Lines without the values nothing reads: `const name = ...;` lines (ops and kernels, which compute and
 * change nothing) whose name no later line uses. A traced rule may make a value it then does not need
 * (Adam's shared scalars where the members' values differ).
 */
export function withoutUnread(lines: string[]): string[] {
  const out = [...lines];
  for (let changed = true; changed; ) {
    changed = false;
    for (let i = out.length - 1; i >= 0; i--) {
      const m = /^const (\w+) = /.exec(out[i]);
      if (!m) continue;
      const used = new RegExp(`\\b${m[1]}\\b`);
      if (out.slice(i + 1).some((l) => used.test(l))) continue;
      out.splice(i, 1);
      changed = true;
    }
  }
  return out;
}
