// A report chart (src/report/chart.ts) to a static SVG string. The report's charts were drawn by vega-lite
// and vega, which took a third of a second to load and as long again to draw at the end of every `netc train`;
// these few chart kinds are drawn here directly, in milliseconds, in vega-lite's layout and colours. Text
// widths are estimated from the font size (as vega did without a canvas), so a run gives the same report on
// every machine.
import type { Chart, LineMark, Mark, RuleMark, Shape, SymbolMark } from './chart.js';
import { FONT } from './chart.js';
import { pointHeight, resolveScales, type Resolved } from './chart-scales.js';

export { BEST_COLOR, OTHER_COLOR, FONT } from './chart.js';

const PADDING = 8;
const PANEL_GAP = 20;
const LEGEND_HEIGHT = 26;
const HEADER_HEIGHT = 22;
const X_AXIS_HEIGHT = 38;
const LABEL_COLOR = '#4b5563';
const TITLE_COLOR = '#374151';
const AXIS_COLOR = '#9ca3af';

/** A panel's geometry: where values go, and its size. */
interface Frame {
  x: Resolved;
  y: Resolved;
  width: number;
  height: number;
}

/** vega's estimate of a text's width in pixels, without a canvas to measure it. */
const textWidth = (text: string, fontSize: number) => Math.floor(0.8 * text.length * fontSize);

/** Text for an attribute or an element: quotes left as they are where they need no escaping, as vega wrote them. */
const escapeXml = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** A coordinate, to two decimals: enough for a screen, and short. */
const n = (v: number) => String(Math.round(v * 100) / 100);

const text = (x: number, y: number, body: string, opts: { size: number; fill: string; anchor?: string; weight?: string; rotate?: boolean }) =>
  `<text text-anchor="${opts.anchor ?? 'middle'}" transform="translate(${n(x)},${n(y)})${opts.rotate ? ' rotate(-90)' : ''}" font-family="${escapeXml(FONT)}" font-size="${opts.size}px"${opts.weight ? ` font-weight="${opts.weight}"` : ''} fill="${opts.fill}">${escapeXml(body)}</text>`;

/** Draws the chart as an SVG element. */
export function renderSvg(chart: Chart): string {
  const height = typeof chart.height === 'number' ? chart.height : chart.y.scale.type === 'point' ? pointHeight(chart.y.scale, chart.height.step) : 240;
  const { x, y } = resolveScales(chart, height);
  const frame: Frame = { x, y, width: chart.width, height };
  const labelsWidth = Math.max(0, ...visibleTicks(y, height, 11).map((t) => textWidth(y.label(t), 11)));
  const left = labelsWidth + 30;
  const top = (chart.legend.entries.length ? LEGEND_HEIGHT : 0) + (chart.panels.some((p) => p.header) ? HEADER_HEIGHT : 0);
  const panelsWidth = chart.panels.length * chart.width + (chart.panels.length - 1) * PANEL_GAP;
  const width = Math.ceil(PADDING * 2 + left + panelsWidth);
  const total = Math.ceil(PADDING * 2 + top + height + X_AXIS_HEIGHT);
  const panels = chart.panels.map((p, i) => {
    const body = [p.header ? text(chart.width / 2, -10, p.header, { size: 13, fill: '#111827', weight: 'bold' }) : '', panelBody(chart, frame, p.marks, i === 0)];
    return `<g transform="translate(${i * (chart.width + PANEL_GAP)},0)">${body.join('')}</g>`;
  });
  const legend = chart.legend.entries.length ? `<g transform="translate(0,${-top + 4})">${legendBody(chart)}</g>` : '';
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" class="marks" width="${width}" height="${total}" viewBox="0 0 ${width} ${total}">`,
    `<rect width="${width}" height="${total}" fill="white"/>`,
    `<g fill="none" transform="translate(${PADDING + left},${PADDING + top})">${legend}${panels.join('')}</g>`,
    '</svg>',
  ].join('');
}

/** One panel: grid, frame, marks, the x axis, and the y axis on the first panel. */
function panelBody(chart: Chart, f: Frame, marks: Mark[], first: boolean): string {
  const grid = [
    ...(f.x.grid ? f.x.ticks.map((t) => `<line x1="${n(f.x.at(t))}" y1="0" x2="${n(f.x.at(t))}" y2="${n(f.height)}" stroke="#f0f0f0"/>`) : []),
    ...(f.y.grid ? f.y.ticks.map((t) => `<line x1="0" y1="${n(f.y.at(t))}" x2="${n(f.width)}" y2="${n(f.y.at(t))}" stroke="#f0f0f0"/>`) : []),
  ];
  const border = `<rect width="${n(f.width)}" height="${n(f.height)}" stroke="#e5e7eb"/>`;
  return `<g class="grid">${grid.join('')}</g>${border}<g class="marks">${marks.map((m) => mark(m, f)).join('')}</g>${xAxis(chart, f)}${first ? yAxis(chart, f) : ''}`;
}

/** Where a label's text starts on its axis, for its anchor. */
const labelStart = (at: number, extent: number, anchor: string) => (anchor === 'start' ? at : anchor === 'end' ? at - extent : at - extent / 2);

/** An x label's anchor: flush with the chart's edges at its ends, else centred on its tick. */
const xAnchor = (at: number, width: number, flush: boolean) => (flush && at < 1 ? 'start' : flush && at > width - 1 ? 'end' : 'middle');

/**
 * The ticks whose labels do not overlap: every other one dropped until none do (vega's parity strategy).
 * `anchor` places an x label's text; a y label's extent is its font's height, centred.
 */
function visibleTicks(s: Resolved, length: number, fontSize: number, anchor?: (at: number) => string): number[] {
  let kept = s.ticks.filter((t) => s.at(t) >= -0.5 && s.at(t) <= length + 0.5);
  const span = (t: number): [number, number] => {
    const at = s.at(t);
    const extent = anchor ? textWidth(s.label(t), fontSize) : fontSize;
    const start = labelStart(at, extent, anchor ? anchor(at) : 'middle');
    return [start, start + extent];
  };
  const overlaps = (ts: number[]) =>
    ts.some((t, i) => {
      if (i === 0) return false;
      const [a, b] = [span(ts[i - 1]), span(t)];
      return Math.max(a[0], b[0]) < Math.min(a[1], b[1]) + 1;
    });
  while (kept.length > 2 && overlaps(kept)) kept = kept.filter((_, i) => i % 2 === 0);
  return kept;
}

function xAxis(chart: Chart, f: Frame): string {
  const flush = chart.x.axis.labelFlush ?? true;
  const ticks = f.x.ticks.map((t) => `<line x1="${n(f.x.at(t))}" y1="${n(f.height)}" x2="${n(f.x.at(t))}" y2="${n(f.height + 5)}" stroke="${AXIS_COLOR}"/>`);
  const anchor = (at: number) => xAnchor(at, f.width, flush);
  const labels = visibleTicks(f.x, f.width, 11, anchor).map((t) => text(f.x.at(t), f.height + 18, f.x.label(t), { size: 11, fill: LABEL_COLOR, anchor: anchor(f.x.at(t)) }));
  const domain = `<line x1="0" y1="${n(f.height)}" x2="${n(f.width)}" y2="${n(f.height)}" stroke="${AXIS_COLOR}"/>`;
  const title = text(f.width / 2, f.height + 34, chart.x.axis.title, { size: 12, fill: TITLE_COLOR });
  return axisGroup(`X-axis titled '${chart.x.axis.title}' for a ${f.x.caption}`, ticks.join('') + labels.join('') + domain + title);
}

function yAxis(chart: Chart, f: Frame): string {
  const shown = visibleTicks(f.y, f.height, 11);
  const ticks = f.y.ticks.map((t) => `<line x1="-5" y1="${n(f.y.at(t))}" x2="0" y2="${n(f.y.at(t))}" stroke="${AXIS_COLOR}"/>`);
  const labels = shown.map((t) => text(-7, f.y.at(t) + 3, f.y.label(t), { size: 11, fill: LABEL_COLOR, anchor: 'end' }));
  const domain = `<line x1="0" y1="0" x2="0" y2="${n(f.height)}" stroke="${AXIS_COLOR}"/>`;
  const width = Math.max(0, ...shown.map((t) => textWidth(f.y.label(t), 11)));
  const title = text(-(width + 16), f.height / 2, chart.y.axis.title, { size: 12, fill: TITLE_COLOR, rotate: true });
  return axisGroup(`Y-axis titled '${chart.y.axis.title}' for a ${f.y.caption}`, ticks.join('') + labels.join('') + domain + title);
}

const axisGroup = (label: string, body: string) => `<g class="axis" role="graphics-symbol" aria-roledescription="axis" aria-label="${escapeXml(label)}">${body}</g>`;

function legendBody(chart: Chart): string {
  let x = 0;
  const out: string[] = [];
  for (const e of chart.legend.entries) {
    const symbol =
      chart.legend.symbol === 'stroke'
        ? `<line x1="${x}" y1="6" x2="${x + 16}" y2="6" stroke="${e.color}" stroke-width="3"/>`
        : `<path transform="translate(${x + 6},6)" d="${symbolPath('circle', 64)}" fill="${e.color}"/>`;
    out.push(symbol, text(x + 20, 10, e.label, { size: 12, fill: '#000000', anchor: 'start' }));
    x += 20 + textWidth(e.label, 12) * 0.75 + 16;
  }
  return `<g class="legend" role="graphics-symbol" aria-roledescription="legend">${out.join('')}</g>`;
}

function mark(m: Mark, f: Frame): string {
  if (m.kind === 'line') return line(m, f);
  if (m.kind === 'rule') return rule(m, f);
  return symbol(m, f.x.at(m.x), f.y.at(m.y));
}

/**
 * A line's path: broken where a value is missing; step-before draws each value back to the previous x. Each
 * coordinate is written once (a curve chart of seed000 has 30,000 points).
 */
export function linePath(m: LineMark, ax: (v: number) => number, ay: (v: number) => number): string {
  let d = '';
  let prevX: string | undefined;
  for (const p of m.points) {
    if (p.y === null) {
      prevX = undefined;
      continue;
    }
    const x = n(ax(p.x));
    const y = n(ay(p.y));
    if (prevX === undefined) d += `M${x},${y}`;
    else d += m.interpolate === 'step-before' ? `L${prevX},${y}L${x},${y}` : `L${x},${y}`;
    prevX = x;
  }
  return d;
}

function line(m: LineMark, f: Frame): string {
  const d = linePath(m, f.x.at, f.y.at);
  const opacity = m.opacity === undefined ? '' : ` opacity="${m.opacity}"`;
  const path = `<path aria-label="${escapeXml(m.label)}" role="graphics-symbol" aria-roledescription="line mark" d="${d}" stroke="${m.color}" stroke-width="${m.width}"${opacity}/>`;
  const dots = m.dots ? m.points.flatMap((p) => (p.y === null ? [] : [symbol({ kind: 'symbol', x: p.x, y: p.y, shape: 'circle', size: m.dots!, color: m.color, label: m.label }, f.x.at(p.x), f.y.at(p.y))])) : [];
  return path + dots.join('');
}

function rule(m: RuleMark, f: Frame): string {
  const [x1, x2, y1, y2] = [f.x.at(m.x), f.x.at(m.x2), f.y.at(m.y), f.y.at(m.y2)];
  const cap = m.round ? ' stroke-linecap="round"' : '';
  return `<line aria-label="${escapeXml(m.label)}" role="graphics-symbol" aria-roledescription="rule mark" x1="${n(x1)}" y1="${n(y1)}" x2="${n(x2)}" y2="${n(y2)}" stroke="${m.color}" stroke-width="${m.width}"${cap}/>`;
}

function symbol(m: SymbolMark, x: number, y: number): string {
  const opacity = m.opacity === undefined ? '' : ` opacity="${m.opacity}"`;
  const stroke = m.stroke ? ` stroke="${m.stroke.color}" stroke-width="${m.stroke.width}"` : '';
  return `<path aria-label="${escapeXml(m.label)}" role="graphics-symbol" aria-roledescription="point" transform="translate(${n(x)},${n(y)})" d="${symbolPath(m.shape, m.size)}" fill="${m.color}"${opacity}${stroke}/>`;
}

/** A symbol of `size` square pixels centred on 0,0, in vega's shapes. */
export function symbolPath(shape: Shape, size: number): string {
  if (shape === 'circle') {
    const r = Math.sqrt(size / Math.PI);
    return `M${n(r)},0A${n(r)},${n(r)},0,1,1,${n(-r)},0A${n(r)},${n(r)},0,1,1,${n(r)},0`;
  }
  const r = Math.sqrt(size) / 2;
  if (shape === 'cross') {
    const s = r / 2.5;
    return `M${n(-r)},${n(-s)}H${n(-s)}V${n(-r)}H${n(s)}V${n(-s)}H${n(r)}V${n(s)}H${n(s)}V${n(r)}H${n(-s)}V${n(s)}H${n(-r)}Z`;
  }
  const h = (r * Math.sqrt(3)) / 2;
  return shape === 'triangle-up' ? `M0,${n(-h)}L${n(-r)},${n(h)}L${n(r)},${n(h)}Z` : `M0,${n(h)}L${n(-r)},${n(-h)}L${n(r)},${n(-h)}Z`;
}
