// Counts in messages: "1 member", "2 members". Every user-facing count goes through here, so none says "1 steps".

/** `n` and its noun, the noun plural unless `n` is 1: plural(1, 'step') is '1 step', plural(3, 'class', 'classes') '3 classes'. */
export function plural(n: number, noun: string, nouns = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : nouns}`;
}

/** Items as a sentence lists them: 'a', 'a and b', 'a, b and c' (and '' for none). */
export function andList(items: readonly (string | number)[]): string {
  return items.length > 1 ? `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}` : items.join('');
}
