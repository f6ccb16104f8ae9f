/** `forge run --dev` logs every tool call: name, arguments, duration, result size and outcome. */
import { redactSecrets } from '../runtime/known-secrets.ts';
import type { Logger } from '../runtime/tools/model.ts';
import type { CallEvent } from '../runtime/tools/registry.ts';

export function logCall(log: Logger, event: CallEvent): void {
  // Masked before it is cut: a secret cut in two would no longer be recognised.
  const args = redactSecrets(JSON.stringify(event.args ?? {}));
  const shownArgs = args.length > 200 ? `${args.slice(0, 197)}...` : args;
  const size = event.result.ok ? Buffer.byteLength(JSON.stringify(event.result.value) ?? '') : 0;
  const outcome = event.result.ok ? `ok ${size} B` : `error ${event.result.error.code}`;
  const indent = event.depth ? `${'  '.repeat(event.depth)}↳ ` : '';
  log.info(`${indent}tool ${event.name} ${shownArgs} ${Math.round(event.durationMs)} ms ${outcome}`);
}
