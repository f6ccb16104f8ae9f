/** A tool worker process starting: an event on the call's span, and a restart counted, by its reason, when it is not the first start. */
import { workerRestarts } from './forge-metrics.ts';
import { currentScope } from './tracer.ts';

/** Why the process before stopped: it exited (crashed, or was killed for a cancelled or overdue call), or the sandbox's mounts changed. */
export type WorkerRestartReason = 'exited' | 'mounts';

export function noteWorkerStart(restart: WorkerRestartReason | undefined): void {
  const scope = currentScope();
  if (restart) workerRestarts.inc({ reason: restart });
  scope?.span?.addEvent('forge.worker.start', { 'forge.worker.restart': restart !== undefined });
}
