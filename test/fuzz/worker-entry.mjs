// Worker threads start without vitest's TypeScript transform: register tsx, then load the worker.
import { register } from 'tsx/esm/api';

register();
await import('./fuzz-worker.ts');
