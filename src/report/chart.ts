// What a report chart is, for src/report/render-svg.ts to draw: one or more panels side by side sharing an
// x and a y scale, each holding lines, symbols and rules in data coordinates, and a legend on top. The
// *-spec.ts files build these from a run's data; nothing here knows about runs.

/** The best member's colour; every other member is drawn thin and grey. */
export const BEST_COLOR = '#d9480f';
export const OTHER_COLOR = '#9ca3af';
export const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif';

/**
 * A numeric scale. Without a domain it spans the data (and 0 with `zero`), widened to round numbers with
 * `nice`. A log scale always has its domain.
 */
export interface QuantScale {
  type: 'linear' | 'log';
  domain?: [number, number];
  nice?: boolean;
  zero?: boolean;
}

/** Evenly spaced positions for a list of values (members), the first at the top, `padding` steps from each end. */
export interface PointScale {
  type: 'point';
  domain: number[];
  padding: number;
}

export interface AxisSpec {
  title: string;
  /** the ticks; otherwise round numbers, about one per 40 pixels or `tickCount` */
  values?: number[];
  tickCount?: number;
  /** no two ticks closer than this (epochs are whole numbers) */
  tickMinStep?: number;
  /** 'd': whole numbers; '~g': significant digits; otherwise fixed decimals enough for the ticks' step */
  format?: 'd' | '~g';
  /** the first and last labels of an x axis kept inside the chart, as vega-lite does unless told otherwise */
  labelFlush?: boolean;
}

/** Where a mark is and what it is, for screen readers (the `aria-label` vega gave each mark). */
interface Described {
  color: string;
  label: string;
}

export interface LinePoint {
  x: number;
  /** null: no value (a diverged epoch), a gap in the line */
  y: number | null;
}

export interface LineMark extends Described {
  kind: 'line';
  points: LinePoint[];
  width: number;
  opacity?: number;
  /** 'step-before': each point's value is drawn back to the previous point's x */
  interpolate?: 'linear' | 'step-before';
  /** a dot at each point (a filled circle of this area in square pixels) */
  dots?: number;
}

export type Shape = 'circle' | 'triangle-up' | 'triangle-down' | 'cross';

export interface SymbolMark extends Described {
  kind: 'symbol';
  x: number;
  y: number;
  shape: Shape;
  /** area in square pixels, as vega's `size` */
  size: number;
  opacity?: number;
  /** an outline (the best member's point in a scatter) */
  stroke?: { color: string; width: number };
}

export interface RuleMark extends Described {
  kind: 'rule';
  x: number;
  y: number;
  x2: number;
  y2: number;
  width: number;
  round?: boolean;
}

export type Mark = LineMark | SymbolMark | RuleMark;

export interface Panel {
  /** the facet's header above the panel (`train`, `validation`) */
  header?: string;
  /** drawn in order: later marks on top */
  marks: Mark[];
}

export interface LegendEntry {
  label: string;
  color: string;
}

export interface Chart {
  /** each panel's size in pixels; a point scale's height may be given per value */
  width: number;
  height: number | { step: number };
  x: { scale: QuantScale; axis: AxisSpec };
  y: { scale: QuantScale | PointScale; axis: AxisSpec };
  panels: Panel[];
  legend: { entries: LegendEntry[]; symbol: 'stroke' | 'circle' };
}
