/** A tool worker process starting: an event on the call's span, and a restart counted when it is not the first start. */
import { workerRestarts } from './forge-metrics.ts';
import { currentScope } from './tracer.ts';

export function noteWorkerStart(restart: boolean): void {
  const scope = currentScope();
  if (restart) workerRestarts.inc();
  scope?.span?.addEvent('forge.worker.start', { 'forge.worker.restart': restart });
}
