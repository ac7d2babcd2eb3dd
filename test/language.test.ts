// docs/language.md is the language reference, and the project's own. Every .net example on it (an untagged
// ``` block) must check without a single diagnostic, completed into a whole file where it is only part of
// one; and every name the checker knows must appear on it, so that the page cannot fall behind netc.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatDiagnostics } from '../src/diagnostics/format.js';
import { compile } from '../src/pipeline.js';
import { ensembleKeys } from '../src/check/check-ensemble.js';
import { trainKeys } from '../src/check/check-train.js';
import { weightedArgs } from '../src/layers/common-args.js';
import { layerKinds } from '../src/layers/registry.js';
import { allTokens } from '../src/syntax/tokens.js';
import { activations } from '../src/vocabulary/activations.js';
import { dataSources } from '../src/data/sources.js';
import { initializers } from '../src/vocabulary/initializers.js';
import { losses, metrics } from '../src/vocabulary/losses.js';
import { optimizers } from '../src/vocabulary/optimizers.js';
import { scheduleMetrics, schedules } from '../src/vocabulary/schedules.js';
import { splits } from '../src/vocabulary/splits.js';

const doc = readFileSync(new URL('../docs/language.md', import.meta.url), 'utf8');
const blocks = [...doc.matchAll(/^```\n([\s\S]*?)^```$/gm)].map((m) => m[1]);

// what completes a fragment into a file: a model with the labels the fragments name, and a train block with
// validation data (schedules rank by val_loss)
const model = 'model m(input: [2]) {\n  h = dense(16, activation: relu)\n  drop = dropout(0.1)\n  dense(1, activation: sigmoid)\n}\n';
const train = 'train { data: xor() validation: 0.2 loss: binary_crossentropy epochs: 4 }\n';
const complete = (block: string) => (/^model\s/m.test(block) ? '' : model) + block + (/^train\s*\{/m.test(block) ? '' : train);

/** Compiles `source`; fails with the diagnostics as netc check prints them, warnings included. */
function checkSilently(source: string) {
  const state = compile(source, 'language.net');
  expect(formatDiagnostics(state.diagnostics, source), source).toBe('');
  return state;
}

describe('the examples in docs/language.md', () => {
  it('open with a whole file: thirty LeNet-5s', () => {
    expect(blocks.length).toBeGreaterThan(5);
    const state = checkSilently(blocks[0]);
    expect(state.program!.ensemble.members).toBe(30);
    expect(state.ir!.params.length).toBe(10);
  });

  it.each(blocks.map((b) => [b.split('\n').find((line) => line.trim() && !line.startsWith('#'))!, b]))('%s ... checks clean', (_, block) => {
    checkSilently(complete(block));
  });
});

/** The lines of the page's tables whose first cell starts with `code`. */
const rows = (code: string) => doc.split('\n').filter((line) => line.startsWith(`| \`${code}`));
const row = (code: string) => {
  const found = rows(code);
  expect(found, `docs/language.md has no table row for ${code}`).toHaveLength(1);
  return found[0];
};
const named = (name: string) => new RegExp(`\`${name}[\`(:]`).test(doc);

describe('docs/language.md names everything netc knows', () => {
  it.each(layerKinds.map((k) => [k.name, k]))('the layer %s and its arguments', (name, kind) => {
    const line = doc.split('\n').find((l) => l.startsWith('| ') && l.split('|')[1].includes(`\`${name}(`));
    expect(line, `docs/language.md's layer table has no ${name}(...)`).toBeDefined();
    for (const arg of kind.args) {
      if (weightedArgs.includes(arg)) expect(row(`${arg.name}:`)).toContain(String(arg.default));
      else expect(line, `${name}'s argument ${arg.name}`).toContain(arg.name);
    }
  });

  it('from: LABEL', () => expect(doc).toContain('`from: LABEL`'));

  // the lexer's keywords (model, ensemble, ..., vary, shared): each in code somewhere on the page
  const keywords = allTokens.filter((t) => t.LONGER_ALT).map((t) => String(t.LABEL).replaceAll("'", ''));
  it.each(keywords)('the keyword %s', (word) => expect(doc).toContain(`\`${word}`));

  it('shared layers, and which layers can be shared', () => {
    const sharable = layerKinds.filter((k) => k.forward.shared).map((k) => k.name);
    const line = doc.split('\n').find((l) => l.startsWith('- `shared` goes before a layer with weights'));
    expect(line, 'the Shared layers section').toBeDefined();
    for (const name of sharable) expect(line).toContain(`\`${name}\``);
  });

  it.each([...new Set([...activations, ...initializers, ...metrics, ...scheduleMetrics, ...losses.map((l) => l.name)])])('%s', (name) => {
    expect(named(name), `\`${name}\``).toBe(true);
  });

  it.each(optimizers.map((o) => [o.name, o]))('the optimizer %s: its positional arguments in order, every argument and default', (name, optimizer) => {
    const positional = optimizer.args.filter((a) => a.positional).map((a) => a.name);
    const line = row(`${name}(${positional.join(', ')})\``);
    for (const arg of optimizer.args) expect(line).toContain(`\`${arg.name}: ${String(arg.default)}\``);
  });

  it.each(dataSources.map((d) => [d.name, d]))('the data source %s and its arguments', (name, source) => {
    const line = row(`${name}(`);
    for (const arg of source.args) expect(line).toContain(arg.name);
  });

  it.each(schedules.map((s) => [s.name, s]))('the schedule %s and its keys', (name, schedule) => {
    const line = row(`${name}\``);
    for (const key of schedule.keys) expect(line).toContain(`\`${key.name}\``);
  });

  it.each(trainKeys)('the train key %s', (key) => {
    row(`${key}\``);
  });

  it.each([...ensembleKeys.map((k) => k.name), 'split', 'vary'])('the ensemble key %s', (key) => expect(named(key)).toBe(true));

  it.each(splits.map((s) => [s.name, s]))('the split %s and its arguments', (name, split) => {
    const line = row(`${name}(`);
    for (const arg of split.args) expect(line).toContain(arg.name);
  });

  it.each(['uniform', 'loguniform', 'choice'])('the space %s', (space) => expect(row(`${space}(`)).toBeTruthy());
});
