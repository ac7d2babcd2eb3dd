// Lays out an emitted module with prettier, so the generated code reads like code written by hand and its
// golden files are stable. Prettier is loaded only when a module is formatted: `netc check` never pays for it.
import type { Options } from 'prettier';

/** The layout of every module netc writes. */
export const moduleStyle: Options = { parser: 'typescript', singleQuote: true, printWidth: 120 };

export async function formatModule(text: string): Promise<string> {
  const prettier = await import('prettier');
  return prettier.format(text, moduleStyle);
}
