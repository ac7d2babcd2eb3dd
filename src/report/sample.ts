// How many members a report draws: a million members would be a million lines in a chart and rows in a
// table (report.html grew 3.3 KB and the process ~130 KB of memory per member: 100,000 members did not
// finish). Above these counts the report draws an even sample by rank, the best always among it, and
// says so; summary.json, metrics.jsonl and events.jsonl keep every member.

/** members whose learning curves (and learning rates) are drawn */
export const CURVE_MEMBERS = 200;
/** members in each hyperparameter's scatter */
export const SCATTER_MEMBERS = 2000;
/** rows of the leaderboard table */
export const TABLE_ROWS = 200;
/** members on the lineage chart */
export const LINEAGE_MEMBERS = 200;
/** rows of the events table */
export const EVENT_ROWS = 500;

/** At most `most` of `ranked` (best first), evenly by rank: every (n / most)-th, starting with the best. */
export function sampleRanked<T>(ranked: readonly T[], most: number): T[] {
  if (ranked.length <= most) return [...ranked];
  const step = ranked.length / most;
  return Array.from({ length: most }, (_, i) => ranked[Math.floor(i * step)]);
}

/** The caption's note on a sample: empty when every member is drawn. */
export function sampleNote(drawn: number, of: number): string {
  return drawn >= of ? '' : ` ${drawn} of the ${of} members are drawn, evenly by rank (the best among them); every member is in summary.json.`;
}
