// How numbers and text are written in the report and the leaderboard.
import type { MemberRow } from './rank.js';

export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export const formatMetric = (v: number | undefined): string =>
  v === undefined ? '' : Number.isFinite(v) ? (Math.abs(v) >= 1e-3 || v === 0 ? v.toFixed(4) : v.toExponential(2)) : String(v);

export const formatHyper = (v: number | undefined): string => (v === undefined ? '' : Number.isInteger(v) ? String(v) : Number.isFinite(v) ? String(Number(v.toPrecision(3))) : String(v));

/** A hyperparameter as the row's metrics were measured under it, and where PBT changed it since, its value now. */
export function hyperCell(r: MemberRow, h: string, format: (v: number | undefined) => string): string {
  const measured = format(r.hyperparameters[h]);
  const now = r.copied ? format(r.copied.hyperparameters[h]) : measured;
  return now === measured ? measured : `${measured} → ${now}`;
}
