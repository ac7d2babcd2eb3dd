import { describe, expect, it } from 'vitest';
import { parse } from '../src/syntax/parse.js';
import type { EntriesBlock, ModelBlock } from '../src/syntax/ast.js';
import { maxNesting } from '../src/syntax/nesting.js';
import { compile } from '../src/pipeline.js';
import { formatDiagnostics } from '../src/diagnostics/format.js';
import { parseDataSource } from '../src/check/data-expression.js';

const model = (src: string) => parse(src).file.blocks[0] as ModelBlock;
const entries = (src: string) => parse(src).file.blocks[0] as EntriesBlock;

describe('parser', () => {
  it('parses labelled statements and keyword arguments', () => {
    const m = model('model m(input: [2]) { h = dense(20, activation: relu) dense(1) }');
    expect(m.name.name).toBe('m');
    expect(m.statements.map((s) => [s.label?.name, s.call.callee.name, s.call.args.length])).toEqual([
      ['h', 'dense', 2],
      [undefined, 'dense', 1],
    ]);
  });

  it('keeps source spans on every node', () => {
    const src = 'model m(input: [2]) {\n  dense(20)\n}';
    const call = model(src).statements[0].call;
    expect(src.slice(call.span.start, call.span.start + call.span.length)).toBe('dense(20)');
    expect(src.substr(call.args[0].value.span.start, call.args[0].value.span.length)).toBe('20');
  });

  it('separates entries by newlines, spaces or commas', () => {
    for (const src of ['ensemble { members: 3 seed: 11 }', 'ensemble { members: 3, seed: 11 }', 'ensemble {\n members: 3\n seed: 11\n}']) {
      const b = entries(src);
      expect(parse(src).diagnostics).toEqual([]);
      expect(b.entries.map((e) => e.path[0].name)).toEqual(['members', 'seed']);
    }
  });

  it('reads quantities, but not a number followed by the next key', () => {
    const b = entries('schedule pbt { every: 2 epochs metric: val_loss quantile: 0.25 }');
    expect(b.entries.map((e) => e.value.kind)).toEqual(['quantity', 'name', 'number']);
  });

  it('reads numbers, strings, booleans, lists and calls', () => {
    const b = entries('train { a: -3 b: 1e-4 c: .5 d: "x\\"y" e: true f: [1, 2,] g: adam(lr: 0.1) h: name }');
    const values = b.entries.map((e) => e.value);
    expect(values.map((v) => v.kind)).toEqual(['number', 'number', 'number', 'string', 'bool', 'list', 'call', 'name']);
    expect(values[0]).toMatchObject({ value: -3 });
    expect(values[1]).toMatchObject({ value: 1e-4 });
    expect(values[2]).toMatchObject({ value: 0.5 });
    expect(values[3]).toMatchObject({ value: 'x"y' });
  });

  it('parses dotted vary paths', () => {
    const b = entries('ensemble { vary drop.rate: [0.1, 0.2] }');
    expect(b.entries[0].vary).toBe(true);
    expect(b.entries[0].path.map((p) => p.name)).toEqual(['drop', 'rate']);
  });

  it('ignores comments', () => {
    expect(parse('# a comment\nmodel m(input: [1]) { dense(1) } # another').diagnostics).toEqual([]);
  });

  it('recovers and reports every syntax error in a file', () => {
    const { diagnostics } = parse('model m(input: [2]) {\n  dense(16 activation: relu)\n}\nensemble {\n  members 3\n}\n');
    expect(diagnostics.map((d) => d.code)).toEqual([1003, 1003]);
  });

  it('reports an unterminated string and stray characters', () => {
    const { diagnostics } = parse('train { data: csv("x.csv) }\n@');
    expect(diagnostics.map((d) => d.code)).toEqual(expect.arrayContaining([1001, 1002]));
  });

  it('points an error at the end of the file at its last token', () => {
    const src = 'model m(input: [2]) { dense(1)';
    const [d] = parse(src).diagnostics;
    expect(d.code).toBe(1003);
    expect(d.start).toBe(src.length);
  });
});

// issue 24, item 10: 500 nested brackets in a shape or `init: f(f(...))` 1000 deep overflowed the stack (exit 70)
describe('nesting depth', () => {
  // `model m(` is the first level (column 8), so the first bracket past the cap is the (maxNesting + 1)th
  const deepShape = (n: number) => `model m(input: ${'['.repeat(n)}2${']'.repeat(n)}) {\n  dense(1)\n}\n`;
  const deepInit = (n: number) => `model m(input: [2]) {\n  dense(1, init: ${'f('.repeat(n)}x${')'.repeat(n)})\n}\n`;

  it('is one NET1011 at the first bracket past the cap, and the checker adds no echo of it', () => {
    for (const [src, line, col] of [[deepShape(500), 1, 14 + (maxNesting + 1)], [deepInit(1000), 2, 15 + 2 * (maxNesting + 1)]] as const) {
      const { diagnostics } = compile(src, 'deep.net');
      expect(diagnostics.map((d) => d.code)).toEqual([1011]);
      expect(formatDiagnostics(diagnostics, src).split('\n')[0]).toBe(`deep.net(${line},${col}): error NET1011: brackets nest more than ${maxNesting} deep here; nothing in a .net file needs this many, and what they hold is not read`);
    }
  });

  it('parses nesting up to the cap, and reads on after an unclosed run', () => {
    expect(parse(deepShape(maxNesting - 1)).diagnostics).toEqual([]);
    const unclosed = parse(`model m(input: ${'('.repeat(5000)}\n}\nmodel m2(input: [2]) { dense(1) }\n`);
    expect(unclosed.diagnostics.filter((d) => d.code === 1011)).toHaveLength(1);
    expect(unclosed.file.blocks).toHaveLength(2);
  });

  it('caps a --data expression too', () => {
    expect(parseDataSource(`csv(${'['.repeat(2000)}`).diagnostics.map((d) => d.code)).toContain(1011);
  });
});
