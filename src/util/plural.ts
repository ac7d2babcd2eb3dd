// Counts in messages: "1 member", "2 members". Every user-facing count goes through here, so none says "1 steps".

/** `n` and its noun, the noun plural unless `n` is 1: plural(1, 'step') is '1 step', plural(3, 'class', 'classes') '3 classes'. */
export function plural(n: number, noun: string, nouns = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : nouns}`;
}
