// Text as token ids, for the sequence models: text("file.csv", text: "body", label: "y", vocab: V, length:
// T) and the built-in spam_assassin() share these rules.
//
// The tokenizer lowercases the text and takes every run of the characters [a-z0-9'] as a word: "Don't
// STOP-now!" is don't, stop, now. The vocabulary is learnt from the training rows alone (the rows that
// splitData gives the train split, under the train block's validation:, test: and holdout:), so that no
// validation or test example shapes it: id 0 is padding, 1 a word out of the vocabulary, and 2 to V - 1
// the V - 2 most frequent training words, the most frequent first, a tie going to the word seen first (in
// the rows' order). Each text becomes exactly T ids: a longer one keeps its first T words (its start,
// where a subject or an opening sentence is), a shorter one is padded with 0 at the front, so that a
// recurrent layer reads the words last, right before its final state.
import { Messages } from '../diagnostics/messages.js';
import { dataError, type Dataset, type Labels } from './dataset.js';
import { csvNumber, readCsvRows } from './csv.js';
import { trainingRows, type Holdout } from './split.js';

/** The data sources that give text as token ids, learning their vocabulary from the training rows. */
export const textSources: readonly string[] = ['text', 'spam_assassin'];

export const PAD_ID = 0;
export const OUT_OF_VOCABULARY_ID = 1;

const WORD = /[a-z0-9']+/g;

/** The words of a text: runs of [a-z0-9'] after lowercasing. */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

/**
 * The vocabulary of `size` ids learnt from the texts at `rows`: index i is the word of id i (ids 0 and 1,
 * padding and out-of-vocabulary, are '' and '<oov>'); fewer when the rows hold fewer distinct words.
 */
export function learnVocabulary(texts: readonly string[][], rows: ArrayLike<number>, size: number): string[] {
  // a Map keeps its keys in the order they were first set: the order of first appearance, for ties
  const counts = new Map<string, number>();
  for (let r = 0; r < rows.length; r++) for (const word of texts[rows[r]]) counts.set(word, (counts.get(word) ?? 0) + 1);
  // Array.prototype.sort is stable: equal counts keep their order of first appearance
  const words = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, Math.max(0, size - 2));
  return ['', '<oov>', ...words.map(([word]) => word)];
}

/** Each text as `length` ids of `vocabulary` (learnVocabulary's), row after row: its first words, padded at the front. */
export function encodeTexts(texts: readonly string[][], vocabulary: readonly string[], length: number): Float32Array {
  const ids = new Map(vocabulary.map((word, id) => [word, id]));
  ids.delete('');
  ids.delete('<oov>');
  const x = new Float32Array(texts.length * length);
  texts.forEach((words, r) => {
    const kept = Math.min(words.length, length);
    const start = r * length + (length - kept);
    for (let i = 0; i < kept; i++) x[start + i] = ids.get(words[i]) ?? OUT_OF_VOCABULARY_ID;
  });
  return x;
}

/** How a source's texts become token ids: the vocabulary's size, each text's length, and the split to learn from. */
export interface TextOptions {
  vocab: number;
  length: number;
  /** the train block's held-out fractions: the vocabulary is learnt from the rest */
  holdout?: Holdout;
  /** a vocabulary learnt before (a run's, for `netc predict --data`), used instead of learning one */
  vocabulary?: readonly string[];
}

/** A dataset of tokenized texts with their labels, the vocabulary learnt from its training rows. */
export function textDataset(name: string, texts: string[][], y: Float32Array, labels: Labels, options: TextOptions): Dataset {
  const vocabulary = options.vocabulary ?? learnVocabulary(texts, trainingRows(texts.length, options.holdout), options.vocab);
  const x = encodeTexts(texts, vocabulary, options.length);
  return { name, count: texts.length, x, featureShape: [options.length], y, labels, vocabulary: [...vocabulary] };
}

/** text("file.csv", text: "body", label: "y"): `file` is the path to open, `shown` how the .net file wrote it. */
export function loadTextCsv(file: string, shown: string, column: { text: string; label: string }, options: TextOptions): Dataset {
  const rows = readCsvRows(file, shown);
  const header = rows[0];
  if (!header) throw dataError(Messages.DataBadFile, [`the csv file "${shown}" is empty; it needs a header row`], file);
  const columns = header.record.map((c) => c.trim());
  const at = (name: string) => {
    const i = columns.indexOf(name);
    if (i < 0) throw dataError(Messages.DataBadFile, [`the csv file "${shown}" has no column "${name}"; its columns are: ${columns.join(', ')}`], file, header.line);
    return i;
  };
  const [textAt, labelAt] = [at(column.text), at(column.label)];
  const count = rows.length - 1;
  if (count === 0) throw dataError(Messages.DataNoRows, [shown], file, header.line);
  const texts: string[][] = [];
  const y = new Float32Array(count);
  for (let r = 0; r < count; r++) {
    const { record, line } = rows[r + 1];
    if (record.length !== columns.length) throw dataError(Messages.DataFieldCount, [record.length, columns.length], file, line, Math.min(record.length, columns.length) + 1);
    texts.push(tokenize(record[textAt]));
    y[r] = csvNumber(record, labelAt, columns, file, line);
  }
  return textDataset(`text("${shown}")`, texts, y, { kind: 'values', columns: 1 }, options);
}
