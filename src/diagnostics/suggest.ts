// "Did you mean ...?" — the nearest valid name by edit distance, when it is near enough to help.

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps cost 1. */
export function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
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
