#!/usr/bin/env -S node --max-semi-space-size=2
// --max-semi-space-size=2 (MB): V8's young generation grows to 16 MB a half by default, and a large run's
// garbage (100,000 members' per-step arrays) fills it: 35 MB of resident memory that holds nothing live.
// With two MB halves, 15 and 1,000 members trained within the runs' spread of the default's steps per second
// (more, shorter scavenges: 166 ms of GC in a forum x1000 run against 107 ms); only a flag at start sets it.
// Entry point: the compiled CLI lives in dist/ (built by `npm ci` through the `prepare` script), bundled into
// dist/bundle/ (scripts/bundle-cli.mjs: one file and a few chunks load faster than dist/'s ~240 modules).
// On the webgpu backend, the command runs in a child whose stderr loses Dawn's harmless notes (dist/cli/dawn-notes.js).
import { fileURLToPath } from 'node:url';
import { runWithoutDawnNotes, wantsDawnFilter } from '../dist/bundle/dawn-notes.js';

const argv = process.argv.slice(2);
if (wantsDawnFilter(argv)) {
  process.exitCode = await runWithoutDawnNotes(fileURLToPath(import.meta.url), argv);
} else {
  const { main } = await import('../dist/bundle/main.js');
  process.exitCode = await main(argv);
}
