// Writes the VS Code extension's TextMate grammar from the lexer's tokens. Run after changing
// src/syntax/tokens.ts (`npm run tmgrammar`), read the diff, commit it.
import { writeFileSync } from 'node:fs';
import { textmateGrammarText } from '../src/syntax/textmate.js';

writeFileSync(new URL('../editors/vscode/syntaxes/netc.tmLanguage.json', import.meta.url), textmateGrammarText());
console.log('wrote editors/vscode/syntaxes/netc.tmLanguage.json');
