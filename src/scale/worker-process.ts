// A local worker (`netc train --workers K`): a child process that loads its own TF.js backend, keeps the
// run's context, and runs the shard jobs its parent sends over IPC, one at a time.
import { selectBackend, type BackendName } from '../runtime/backend.js';
import type { TF } from '../kernels/tf.js';
import { runShardJob, type RunContext } from './shard-job.js';
import type { ToWorker, FromWorker } from './local-workers.js';

let tf: TF | undefined;
let ctx: RunContext | undefined;
const send = (m: FromWorker) => process.send!(m);

process.on('message', (m: ToWorker) => {
  void handle(m).catch((e: Error) => send({ type: 'error', id: 'id' in m ? m.id : undefined, message: e.stack ?? e.message }));
});
// the parent went away: nothing is left to do
process.on('disconnect', () => process.exit(0));

async function handle(m: ToWorker): Promise<void> {
  if (m.type === 'init') {
    if (m.device !== undefined) process.env.CUDA_VISIBLE_DEVICES = String(m.device);
    const selected = await selectBackend(m.backend as BackendName, { log: () => {} });
    tf = selected.tf as unknown as TF;
    send({ type: 'ready', backend: selected.name });
  } else if (m.type === 'context') {
    ctx = m.ctx;
  } else {
    const result = await runShardJob(tf!, ctx!, m.job);
    send({ type: 'result', id: m.id, result });
  }
}
