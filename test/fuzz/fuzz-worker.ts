// Runs the fuzz cases in a worker thread, so that the test can stop it if a case hangs.
import { parentPort, workerData } from 'node:worker_threads';
import { compile } from '../../src/pipeline.js';
import { formatDiagnostics } from '../../src/diagnostics/format.js';
import { hasErrors } from '../../src/diagnostics/diagnostic.js';
import { Messages } from '../../src/diagnostics/messages.js';
import { verifyModelIR } from '../../src/ir/verify.js';
import { mutate, rng, vocabularyOf } from './mutate.js';

const { sources, cases, seed } = workerData as { sources: { path: string; text: string }[]; cases: number; seed: number };
const codes = new Set<number>(Object.values(Messages).map((m) => m.code));
const random = rng(seed);
const vocabulary = vocabularyOf(sources.map((s) => s.text));
const outcomes = { clean: 0, diagnosed: 0 };

for (let i = 0; i < cases; i++) {
  const base = sources[i % sources.length];
  const text = mutate(base.text, random, vocabulary);
  parentPort!.postMessage({ type: 'case', index: i, text });
  try {
    const state = compile(text, base.path);
    formatDiagnostics(state.diagnostics, text);
    for (const d of state.diagnostics) {
      if (!codes.has(d.code)) throw new Error(`diagnostic with unknown code NET${d.code}`);
      if (!(d.start >= 0 && d.start <= text.length && d.length >= 0)) throw new Error(`diagnostic span out of range: ${d.start}+${d.length}`);
    }
    if (hasErrors(state.diagnostics)) outcomes.diagnosed++;
    else {
      if (!state.ir) throw new Error('no errors, but no IR either');
      const problems = verifyModelIR(state.ir);
      if (problems.length) throw new Error(`invalid IR: ${problems.join('; ')}`);
      outcomes.clean++;
    }
  } catch (e) {
    parentPort!.postMessage({ type: 'fail', index: i, text, error: (e as Error).stack ?? String(e) });
    process.exit(0);
  }
}
parentPort!.postMessage({ type: 'done', outcomes });
