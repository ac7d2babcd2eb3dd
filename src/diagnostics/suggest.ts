// "Did you mean ...?" — the nearest valid name by edit distance, when it is near enough to help.
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length];
}

export function nearest(name: string, choices: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const choice of choices) {
    const d = editDistance(name.toLowerCase(), choice.toLowerCase());
    if (d < bestDistance) {
      best = choice;
      bestDistance = d;
    }
  }
  const limit = Math.max(1, Math.floor(Math.max(name.length, 3) / 3));
  return bestDistance <= limit ? best : undefined;
}

/** The `; did you mean 'x'?` fragment, or '' when nothing is close. */
export function didYouMean(name: string, choices: readonly string[]): string {
  const n = nearest(name, choices);
  return n ? ` (did you mean '${n}'?)` : '';
}
