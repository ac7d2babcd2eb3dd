// Parsing of numeric command-line values: a bad value is a usage error (exit code 2), never a crash.
import { InvalidArgumentError } from 'commander';

export function intOption(min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`expected an integer >= ${min}, got '${value}'`);
    // above 2^53 a double no longer counts in ones: --steps 9007199254740993 would be another number
    if (!Number.isSafeInteger(n)) throw new InvalidArgumentError(`expected an integer up to ${Number.MAX_SAFE_INTEGER} (2^53 - 1), got '${value}'`);
    return n;
  };
}

export function choiceOption<T extends string>(choices: readonly T[]) {
  return (value: string): T => {
    if (!(choices as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${choices.join(', ')}, got '${value}'`);
    return value as T;
  };
}

/** A number above 0, fractions allowed (--checkpoint-minutes 0.5). */
export function positiveNumberOption(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`expected a number > 0, got '${value}'`);
  return n;
}

/** --workers: a count, or 'auto' (one per core). */
export function workersOption(value: string): number | 'auto' {
  return value === 'auto' ? 'auto' : intOption(1)(value);
}
