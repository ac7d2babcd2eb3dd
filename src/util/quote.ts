// A user's text quoted into a message, cut short: a .npy header may be megabytes long, and an error that
// echoes all of it buries the one line that matters.

/** At most `max` characters of `text`, then `…(N more characters)` where it is longer. */
export function clip(text: string, max = 80): string {
  return text.length <= max ? text : `${text.slice(0, max)}…(${text.length - max} more characters)`;
}

/** `text` as a JSON string of at most `max` of its characters, with how many more it has. */
export function quoteShort(text: string, max = 80): string {
  return text.length <= max ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, max))}…(${text.length - max} more characters)`;
}
