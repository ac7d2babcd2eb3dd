// grammar/ documents the parser; these fail when the two drift apart (`npm run grammar` regenerates).
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { grammarDiagramsHtml, grammarEbnf } from '../src/syntax/grammar-doc.js';
import { netParser } from '../src/syntax/parser.js';

const read = (rel: string) => readFileSync(new URL(`../grammar/${rel}`, import.meta.url), 'utf8');

it('grammar/netc.ebnf matches the parser', () => expect(read('netc.ebnf')).toBe(grammarEbnf()));
it('grammar/diagrams.html matches the parser', () => expect(read('diagrams.html')).toBe(grammarDiagramsHtml()));
it('the EBNF names every parser rule', () => {
  const ebnf = read('netc.ebnf');
  for (const { name: rule } of netParser.getSerializedGastProductions() as unknown as { name: string }[]) expect(ebnf).toMatch(new RegExp(`^${rule}\\s+=`, 'm'));
});
