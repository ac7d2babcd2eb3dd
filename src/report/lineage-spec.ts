// The lineage of a population-based run: a lifeline per member (x = step, y = member) from step 0 to
// where it stopped or the run ended, a segment from source to member at each exploit (weights copied
// from `source` into `member`, the arrowhead on the member), and a cross where a member was stopped.
import type { TopLevelSpec } from 'vega-lite';
import { isExploit, isStop, type RunEvent } from './run-data.js';
import { BEST_COLOR } from './render-svg.js';
import { maxOf } from '../util/extrema.js';

export const EXPLOIT_COLOR = '#7048e8';
export const STOP_COLOR = '#c92a2a';
const EXPLOIT_LABEL = 'exploit: source → member';
const STOP_LABEL = 'stopped';
const WIDTH = 760;

export function lineageSpec(events: RunEvent[], members: number[], steps: number, best: number): TopLevelSpec | undefined {
  const exploits = events.filter(isExploit);
  const stops = events.filter(isStop);
  if (!exploits.length && !stops.length) return undefined;
  const all = [...new Set([...members, ...exploits.flatMap((e) => [e.member, e.source]), ...stops.map((e) => e.member)])].sort((a, b) => a - b);
  // at least one step wide: a run of 0 steps (members stopped at step 0) would give a scale of no width
  const end = Math.max(1, steps, maxOf(events.map((e) => e.step)));
  const stoppedAt = new Map<number, number>();
  for (const s of stops) stoppedAt.set(s.member, Math.min(stoppedAt.get(s.member) ?? Infinity, s.step));
  const lifelines = all.map((member) => ({ member, start: 0, end: stoppedAt.get(member) ?? end, best: member === best }));
  // exploits at one step would draw on top of each other: spread them a few pixels apart
  const nudge = (end * 7) / WIDTH;
  const atStep = new Map<number, number>();
  const segments = exploits.map((e) => {
    const k = atStep.get(e.step) ?? 0;
    atStep.set(e.step, k + 1);
    return { x: e.step + k * nudge, step: e.step, member: e.member, source: e.source, kind: EXPLOIT_LABEL, down: e.member > e.source ? 'down' : 'up' };
  });
  const marks = stops.map((s) => ({ x: s.step, member: s.member, kind: STOP_LABEL }));

  const x = { field: 'x', type: 'quantitative' as const, title: 'step', scale: { domain: [0, end], nice: false } };
  const y = { field: 'member', type: 'ordinal' as const, title: 'member', scale: { domain: all, padding: 0.6 }, axis: { labelOverlap: true } };
  const color = {
    field: 'kind',
    type: 'nominal' as const,
    scale: { domain: [EXPLOIT_LABEL, STOP_LABEL], range: [EXPLOIT_COLOR, STOP_COLOR] },
    legend: { orient: 'top' as const, title: null, direction: 'horizontal' as const, labelLimit: 0 },
  };
  return {
    width: WIDTH,
    height: { step: all.length > 40 ? 12 : 24 },
    layer: [
      {
        data: { values: lifelines },
        mark: { type: 'rule', strokeCap: 'round' },
        encoding: {
          x: { ...x, field: 'start' },
          x2: { field: 'end' },
          y,
          stroke: { condition: { test: 'datum.best', value: BEST_COLOR }, value: '#d1d5db' },
          strokeWidth: { condition: { test: 'datum.best', value: 3 }, value: 2 },
        },
      },
      { data: { values: segments }, mark: { type: 'rule', strokeWidth: 2 }, encoding: { x, y: { ...y, field: 'source' }, y2: { field: 'member' }, color } },
      { data: { values: segments }, mark: { type: 'point', filled: true, size: 30, opacity: 1 }, encoding: { x, y: { ...y, field: 'source' }, color } },
      {
        data: { values: segments },
        mark: { type: 'point', filled: true, size: 90, opacity: 1 },
        encoding: { x, y, color, shape: { field: 'down', type: 'nominal', scale: { domain: ['down', 'up'], range: ['triangle-down', 'triangle-up'] }, legend: null } },
      },
      { data: { values: marks }, mark: { type: 'point', shape: 'cross', filled: true, size: 110, opacity: 1 }, encoding: { x, y, color } },
    ],
  };
}
