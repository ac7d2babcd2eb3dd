// chevrotain, from the single-file build it publishes beside its sources (lib/chevrotain.mjs, the same
// code as lib/src/ with lodash-es inlined). The package's entry loads lodash-es as about 2,300 modules:
// 1.5 s and 30 MB of resident memory at every start of netc, where the bundle takes 50 ms and 5 MB. The
// bundle is found next to the entry that Node resolves; where it is not there (a chevrotain laid out
// otherwise, or netc bundled by esbuild), the package's entry is loaded as before.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

type Chevrotain = typeof import('chevrotain');

/** lib/chevrotain.mjs beside the entry lib/src/api.js, or undefined (also where netc is bundled, with no node_modules: bench/gpu.sh) */
export function chevrotainBundle(): string | undefined {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve('chevrotain');
  } catch {
    return undefined;
  }
  const bundle = join(dirname(entry), '..', 'chevrotain.mjs');
  return existsSync(bundle) ? bundle : undefined;
}

const bundle = chevrotainBundle();
const api: Chevrotain = bundle ? await import(pathToFileURL(bundle).href) : await import('chevrotain');

export const { createToken, CstParser, Lexer, tokenMatcher, createSyntaxDiagramsCode, VERSION } = api;
