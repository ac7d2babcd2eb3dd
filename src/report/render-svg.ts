// A vega-lite spec to a static SVG string, in Node: compiled by vega-lite, run by a headless vega View
// (renderer 'none': no canvas package; text widths are estimated). Several charts share one HTML page,
// so the ids vega numbers from 1 in each SVG (clip paths, gradients) are prefixed to stay unique.
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/** The best member's colour; every other member is drawn thin and grey. */
export const BEST_COLOR = '#d9480f';
export const OTHER_COLOR = '#9ca3af';
export const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif';

type Config = NonNullable<NonNullable<Parameters<typeof compile>[1]>['config']>;

const config: Config = {
  font: FONT,
  background: 'white',
  padding: 8,
  view: { stroke: '#e5e7eb' },
  axis: { labelFontSize: 11, titleFontSize: 12, titleFontWeight: 'normal', titleColor: '#374151', labelColor: '#4b5563', gridColor: '#f0f0f0', domainColor: '#9ca3af', tickColor: '#9ca3af' },
  legend: { labelFontSize: 12, titleFontSize: 12, symbolStrokeWidth: 3 },
  header: { labelFontSize: 13, labelColor: '#111827', titleFontSize: 12 },
  title: { fontSize: 13, fontWeight: 'normal', anchor: 'start', color: '#111827' },
};

// Text widths are always estimated from the font size, even where the optional `canvas` package is
// installed (vega would measure with it): the same run gives the same report on every machine.
(vega as unknown as { textMetrics?: { canvas?(use: boolean): void } }).textMetrics?.canvas?.(false);

export class ChartError extends Error {
  override name = 'ChartError';
}

/** Renders a vega-lite spec to an SVG string whose ids start with `idPrefix`. Warnings from vega are errors. */
export async function renderSvg(spec: TopLevelSpec, idPrefix: string): Promise<string> {
  const problems: string[] = [];
  const vgSpec = compile(spec, { config, logger: collect(problems) }).spec;
  const view = new vega.View(vega.parse(vgSpec), { renderer: 'none', logger: collect(problems), logLevel: vega.Warn });
  try {
    const svg = await view.toSVG();
    if (problems.length) throw new ChartError(`chart '${idPrefix}': ${problems.join('; ')}`);
    return prefixIds(svg, idPrefix);
  } finally {
    view.finalize();
  }
}

function collect(into: string[]): vega.LoggerInterface {
  let level = vega.Warn;
  const logger = {
    level(l?: number) {
      if (l === undefined) return level;
      level = l;
      return logger;
    },
    error: (...args: readonly unknown[]) => (into.push(args.map(String).join(' ')), logger),
    warn: (...args: readonly unknown[]) => (into.push(args.map(String).join(' ')), logger),
    info: () => logger,
    debug: () => logger,
  };
  return logger as unknown as vega.LoggerInterface;
}

export function prefixIds(svg: string, prefix: string): string {
  return svg
    .replace(/\bid="([^"]+)"/g, (_, id: string) => `id="${prefix}-${id}"`)
    .replace(/url\(#([^)]+)\)/g, (_, id: string) => `url(#${prefix}-${id})`)
    .replace(/href="#([^"]+)"/g, (_, id: string) => `href="#${prefix}-${id}"`);
}
