// What netc loads at start: chevrotain from its single-file build, and none of the packages that only one
// command needs (bullmq and ioredis for --queue, protobufjs for ONNX): each is tens of MB of resident memory
// in every run (src/syntax/chevrotain.ts, src/scale/queue-error.ts). Of TF.js, a training run on the fused
// step loads the core and its backends, the rest only when used (src/runtime/tf-core-first.ts).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chevrotainBundle, VERSION } from '../src/syntax/chevrotain.js';
import { CHAINED_OPS } from '../src/runtime/tf-core-first.js';

const root = join(dirname(new URL(import.meta.url).pathname), '..');

describe('start-up', () => {
  it('takes chevrotain from its own single-file build, of the installed version', () => {
    const bundle = chevrotainBundle();
    expect(bundle).toMatch(/chevrotain[/\\]lib[/\\]chevrotain\.mjs$/);
    const entry = createRequire(import.meta.url).resolve('chevrotain');
    const pkg = JSON.parse(readFileSync(join(dirname(entry), '..', '..', 'package.json'), 'utf8')) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });

  // dist/bundle/main.js is what bin/netc.js runs (scripts/bundle-cli.mjs): its dynamic imports stay chunks of their own
  it.each(['./dist/cli/main.js', './dist/bundle/main.js'])('loads neither bullmq, ioredis nor protobufjs with the CLI (%s)', (entry) => {
    const script = [
      "import { createRequire } from 'node:module';",
      `await import('${entry}');`,
      'const loaded = Object.keys(createRequire(import.meta.url).cache);',
      'console.log(JSON.stringify(loaded.filter((k) => /node_modules[\\\\/](bullmq|ioredis|protobufjs)[\\\\/]/.test(k))));',
      "console.log(loaded.some((k) => /node_modules[\\\\/]commander[\\\\/]/.test(k)));",
    ].join('\n');
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const [heavy, commander] = r.stdout.trim().split('\n');
    expect(JSON.parse(heavy)).toEqual([]);
    // the check sees CommonJS packages at all: commander is one the CLI does load
    expect(commander).toBe('true');
  });

  it('lists the methods @tensorflow/tfjs chains onto tensors, as the installed one adds them', () => {
    const script = [
      "const core = require('@tensorflow/tfjs-core');",
      'const before = new Set(Object.getOwnPropertyNames(core.Tensor.prototype));',
      "require('@tensorflow/tfjs');",
      'console.log(JSON.stringify(Object.getOwnPropertyNames(core.Tensor.prototype).filter((k) => !before.has(k)).sort()));',
    ].join('\n');
    const r = spawnSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toEqual([...CHAINED_OPS].sort());
  });

  it("trains on the fused step with TF.js's core and backends only; a chained op loads the rest, and works", () => {
    const dir = mkdtempSync(join(tmpdir(), 'netc-startup-'));
    const script = [
      "import { createRequire } from 'node:module';",
      "const { main } = await import('./dist/bundle/main.js');",
      `const code = await main(['train', 'bench/seed000.net', '--steps', '20', '--out', ${JSON.stringify(join(dir, 'run'))}], { out: () => {}, err: () => {} });`,
      'const tf = () => Object.keys(createRequire(import.meta.url).cache).filter((k) => /@tensorflow[\\\\/]tfjs/.test(k)).map((k) => /(tfjs[^\\\\/]*)/.exec(k)[1]).sort();',
      'const trained = tf();',
      "const { loadTF } = await import('./dist/runtime/backend.js');",
      'const square = Array.from((await loadTF()).tensor([3]).square().dataSync());',
      'console.log(JSON.stringify({ code, trained, square, after: tf() }));',
    ].join('\n');
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const { code, trained, square, after } = JSON.parse(r.stdout.trim().split('\n').pop()!) as { code: number; trained: string[]; square: number[]; after: string[] };
    expect(code).toBe(0);
    expect(trained).toEqual(['tfjs-backend-cpu', 'tfjs-backend-wasm', 'tfjs-core']);
    expect(square).toEqual([9]);
    expect(after).toContain('tfjs-layers');
  });

  it("starts node with small young-generation halves, by bin/netc.js's #! line", () => {
    expect(readFileSync(join(root, 'bin', 'netc.js'), 'utf8').split('\n')[0]).toBe('#!/usr/bin/env -S node --max-semi-space-size=2');
  });
});
