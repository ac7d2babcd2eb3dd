// csv("file.csv", label: ...): a header row naming the columns, then one example per row. The label
// column(s) (default: the first) become `values` labels in the order `label` names them; every other
// column, in file order, is a numeric feature. Every mistake names the file, line and column.
import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { Messages } from '../diagnostics/messages.js';
import { dataError, DataError, type Dataset } from './dataset.js';
import { notARegularFile } from '../util/regular-file.js';
import type { LabelColumn } from './class-labels.js';

// a plain decimal number; Number() alone would also take '', '0x1f' and 'Infinity'
const numeric = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** `file` is the path to open and to name in errors; `shown` is how the .net file wrote it. */
export function loadCsv(file: string, shown: string, label: string[] | undefined): Dataset {
  const rows = readCsvRows(file, shown);
  const header = rows[0];
  if (!header) throw dataError(Messages.DataBadFile, [`the csv file "${shown}" is empty; it needs a header row`], file);
  const columns = header.record.map((c) => c.trim());
  const labelNames = label ?? [columns[0]];
  const labelAt = labelNames.map((name) => {
    const at = columns.indexOf(name);
    if (at < 0) throw dataError(Messages.DataBadFile, [`the csv file "${shown}" has no column "${name}"; its columns are: ${columns.join(', ')}`], file, header.line);
    return at;
  });
  const featureAt = columns.map((_, i) => i).filter((i) => !labelAt.includes(i));
  if (featureAt.length === 0) throw dataError(Messages.DataBadFile, [`the csv file "${shown}" has no feature columns left after the label column(s)`], file, header.line);

  const count = rows.length - 1;
  if (count === 0) throw dataError(Messages.DataNoRows, [shown], file, header.line);
  const x = new Float32Array(count * featureAt.length);
  const y = new Float32Array(count * labelAt.length);
  for (let r = 0; r < count; r++) {
    const { record, line } = rows[r + 1];
    if (record.length !== columns.length) throw dataError(Messages.DataFieldCount, [record.length, columns.length], file, line, Math.min(record.length, columns.length) + 1);
    const value = (at: number) => csvNumber(record, at, columns, file, line);
    featureAt.forEach((at, j) => (x[r * featureAt.length + j] = value(at)));
    labelAt.forEach((at, j) => (y[r * labelAt.length + j] = value(at)));
  }
  return { name: `csv("${shown}")`, count, x, featureShape: [featureAt.length], y, labels: { kind: 'values', columns: labelAt.length } };
}

/** Field `at` of a record as a number: a DataError at its line and column when it is missing or no finite float32. */
export function csvNumber(record: string[], at: number, columns: string[], file: string, line: number): number {
  const text = record[at].trim();
  if (text === '') throw dataError(Messages.DataMissingValue, [columns[at]], file, line, at + 1);
  if (!numeric.test(text)) throw dataError(Messages.DataNotANumber, [columns[at], text], file, line, at + 1);
  // 3.5e38 and 1e400 are decimal numbers, but float32 holds them as Infinity
  const v = Number(text);
  if (!Number.isFinite(Math.fround(v))) throw dataError(Messages.DataNotFloat32, [`column "${columns[at]}"`, text], file, line, at + 1);
  return v;
}

/** The records of csv text with the (1-based) line each ends on; blank lines are skipped. Throws csv-parse's errors. */
export function parseCsvRows(text: Uint8Array): { record: string[]; line: number }[] {
  const rows = parse(Buffer.from(text.buffer, text.byteOffset, text.byteLength), { bom: true, info: true, relax_column_count: true, skip_empty_lines: true }) as unknown as { record: string[]; info: { lines: number } }[];
  return rows.map((r) => ({ record: r.record, line: r.info.lines }));
}

/**
 * What `column` of parsed csv rows (header first) holds as class labels: its first number that is not a
 * whole number from 0, and its largest. Fields that are no number are left to the loader, which names them.
 */
export function summarizeLabels(rows: { record: string[]; line: number }[], file: string, column: string): LabelColumn | undefined {
  const at = rows[0]?.record.map((c) => c.trim()).indexOf(column) ?? -1;
  if (at < 0) return undefined;
  const summary: LabelColumn = { file, column };
  for (const { record, line } of rows.slice(1)) {
    const text = record[at]?.trim() ?? '';
    if (!numeric.test(text)) continue;
    const value = Number(text);
    if (!(Number.isInteger(value) && value >= 0)) {
      summary.notIndex ??= { text, line };
      continue;
    }
    if (!summary.largest || value > summary.largest.value) summary.largest = { text, line, value };
  }
  return summary;
}

/** The records of the csv file `file` (named `shown`) with the (1-based) line each ends on; blank lines are skipped. */
export function readCsvRows(file: string, shown: string): { record: string[]; line: number }[] {
  let text: Buffer;
  const kind = notARegularFile(file);
  if (kind) throw dataError(Messages.DataFileUnreadable, [shown, `it is ${kind}, not a file`], file);
  try {
    text = readFileSync(file);
  } catch (e) {
    throw dataError(Messages.DataFileUnreadable, [shown, (e as Error).message], file);
  }
  try {
    return parseCsvRows(text);
  } catch (e) {
    if (e instanceof DataError) throw e;
    const line = (e as { lines?: unknown }).lines;
    throw dataError(Messages.DataBadFile, [(e as Error).message], file, typeof line === 'number' ? line : undefined);
  }
}
