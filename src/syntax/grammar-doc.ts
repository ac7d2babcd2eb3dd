// Renders the parser's own grammar as documentation: EBNF text and chevrotain's syntax diagrams.
// grammar/ holds the rendered files; a test regenerates them and fails if they drift from the parser.
import type { ISerializedGast } from 'chevrotain';
import { createSyntaxDiagramsCode } from './chevrotain.js';
import { netParser } from './parser.js';
import { allTokens } from './tokens.js';

type Gast = ISerializedGast & { name?: string; label?: string; nonTerminalName?: string; definition?: Gast[]; pattern?: RegExp | string };

const terminalNames: Record<string, string> = {
  Identifier: 'NAME',
  NumberLiteral: 'NUMBER',
  StringLiteral: 'STRING',
};

function terminal(g: Gast): string {
  const name = g.name ?? '?';
  if (terminalNames[name]) return terminalNames[name];
  return g.label?.startsWith("'") ? g.label : `'${String(g.pattern)}'`;
}

function seq(defs: Gast[] | undefined): string {
  return (defs ?? []).map(item).join(' ');
}

function item(g: Gast): string {
  switch (g.type) {
    case 'NonTerminal':
      return g.name!;
    case 'Terminal':
      return terminal(g);
    case 'Option':
      return `[ ${seq(g.definition)} ]`;
    case 'Repetition':
      return `{ ${seq(g.definition)} }`;
    case 'RepetitionMandatory':
      return `${seq(g.definition)} { ${seq(g.definition)} }`;
    case 'Alternation':
      return `( ${(g.definition ?? []).map((alt) => seq(alt.definition)).join(' | ')} )`;
    default:
      return seq(g.definition);
  }
}

const preamble = `(* The .net grammar, generated from netc's parser (src/syntax/parser.ts) by \`npm run grammar\`.
   Do not edit by hand: a test fails when this file and the parser drift apart.
   Notation: ISO EBNF. [ x ] is optional, { x } repeats zero or more times, ( a | b ) is a choice.
   Whitespace, newlines and commas separate statements and entries; '#' starts a comment to the end of the line.
   In numberOrQuantity, a NAME after a NUMBER is its unit ("2 epochs") unless a ':' follows that NAME,
   in which case it starts the next entry ("members: 3 seed: 1").
   'shared' is a keyword only in a statement, before a layer's NAME; anywhere else it is a NAME. *)`;

export function grammarEbnf(): string {
  const rules = netParser.getSerializedGastProductions() as Gast[];
  const width = Math.max(...rules.map((r) => r.name!.length));
  const lines = rules.map((r) => `${r.name!.padEnd(width)} = ${seq(r.definition)} ;`);
  const tokens = allTokens
    .filter((t) => terminalNames[t.name])
    .map((t) => `${terminalNames[t.name].padEnd(width)} = ? ${String(t.PATTERN)} ? ;`);
  return `${preamble}\n\n${lines.join('\n')}\n\n(* tokens, as regular expressions *)\n${tokens.join('\n')}\n`;
}

/** Syntax diagrams as one HTML page; its scripts come from the installed chevrotain package. */
export function grammarDiagramsHtml(): string {
  const base = '../node_modules/chevrotain/diagrams/';
  return createSyntaxDiagramsCode(netParser.getSerializedGastProductions(), { resourceBase: base, css: `${base}diagrams.css` });
}
