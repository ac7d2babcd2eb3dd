// Writes grammar/netc.ebnf and grammar/diagrams.html from the parser. Run after changing the grammar
// (`npm run grammar`), read the diff, commit both.
import { writeFileSync } from 'node:fs';
import { grammarDiagramsHtml, grammarEbnf } from '../src/syntax/grammar-doc.js';

writeFileSync(new URL('../grammar/netc.ebnf', import.meta.url), grammarEbnf());
writeFileSync(new URL('../grammar/diagrams.html', import.meta.url), grammarDiagramsHtml());
console.log('wrote grammar/netc.ebnf and grammar/diagrams.html');
