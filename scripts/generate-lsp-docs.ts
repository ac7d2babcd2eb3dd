// Writes src/lsp/language-docs.generated.ts from docs/language.md: the lines `netc lsp` shows on hover (an
// installed netc has no docs/ folder). Run after changing docs/language.md (`npm run lsp-docs`), commit the
// result; test/lsp.test.ts fails while the two differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { extractDocs } from '../src/lsp/language-docs.js';

const table = extractDocs(readFileSync(new URL('../docs/language.md', import.meta.url), 'utf8'));
const text = `// Generated from docs/language.md by scripts/generate-lsp-docs.ts (npm run lsp-docs): do not edit.
import type { DocLine } from './language-docs.js';

export const languageDocs: readonly DocLine[] = ${JSON.stringify(table, null, 2)};
`;
writeFileSync(new URL('../src/lsp/language-docs.generated.ts', import.meta.url), text);
console.log(`wrote src/lsp/language-docs.generated.ts (${table.length} lines)`);
