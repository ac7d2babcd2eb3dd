// The lineage of a population-based run: a lifeline per member (x = step, y = member) from step 0 to
// where it stopped or the run ended, a segment from source to member at each exploit (weights copied
// from `source` into `member`, the arrowhead on the member), and a cross where a member was stopped.
import { isExploit, isStop, type RunEvent } from './run-data.js';
import { BEST_COLOR, type Chart, type Mark } from './chart.js';
import { maxOf } from '../util/extrema.js';

export const EXPLOIT_COLOR = '#7048e8';
export const STOP_COLOR = '#c92a2a';
const EXPLOIT_LABEL = 'exploit: source → member';
const STOP_LABEL = 'stopped';
const WIDTH = 760;

export function lineageSpec(events: RunEvent[], members: number[], steps: number, best: number): Chart | undefined {
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

  const stepLabel = (x: number, member: number, kind: string) => `step: ${x}; member: ${member}; kind: ${kind}`;
  const marks: Mark[] = [
    ...lifelines.map((l): Mark => ({ kind: 'rule', x: l.start, x2: l.end, y: l.member, y2: l.member, round: true, color: l.best ? BEST_COLOR : '#d1d5db', width: l.best ? 3 : 2, label: `member ${l.member}: step ${l.start} to ${l.end}` })),
    ...segments.map((s): Mark => ({ kind: 'rule', x: s.x, x2: s.x, y: s.source, y2: s.member, color: EXPLOIT_COLOR, width: 2, label: stepLabel(s.step, s.member, s.kind) })),
    ...segments.map((s): Mark => ({ kind: 'symbol', x: s.x, y: s.source, shape: 'circle', size: 30, opacity: 1, color: EXPLOIT_COLOR, label: `step: ${s.step}; source: ${s.source}; kind: ${s.kind}` })),
    ...segments.map((s): Mark => ({ kind: 'symbol', x: s.x, y: s.member, shape: s.down === 'down' ? 'triangle-down' : 'triangle-up', size: 90, opacity: 1, color: EXPLOIT_COLOR, label: stepLabel(s.step, s.member, s.kind) })),
    ...stops.map((s): Mark => ({ kind: 'symbol', x: s.step, y: s.member, shape: 'cross', size: 110, opacity: 1, color: STOP_COLOR, label: stepLabel(s.step, s.member, STOP_LABEL) })),
  ];
  return {
    width: WIDTH,
    height: { step: all.length > 40 ? 12 : 24 },
    x: { scale: { type: 'linear', domain: [0, end], nice: false }, axis: { title: 'step' } },
    y: { scale: { type: 'point', domain: all, padding: 0.6 }, axis: { title: 'member' } },
    panels: [{ marks }],
    legend: { entries: [{ label: EXPLOIT_LABEL, color: EXPLOIT_COLOR }, { label: STOP_LABEL, color: STOP_COLOR }], symbol: 'circle' },
  };
}
