/**
 * How `forge tool add/get/remove/check` report a failure that is not a
 * usage mistake: one JSON object on stdout with --json, otherwise ✘ and the
 * message on stderr. Returns the exit code.
 */
import type { DiagnosticCode } from '../runtime/diagnostic-codes.ts';
import { errColor } from './terminal.ts';

export function reportFailure(json: boolean, code: DiagnosticCode, message: string, hint?: string, extra: Record<string, unknown> = {}): 1 {
  if (json) process.stdout.write(JSON.stringify({ ok: false, code, error: message, ...(hint ? { hint } : {}), ...extra }, null, 2) + '\n');
  else process.stderr.write(`${errColor.red('✘')} ${errColor.dim(code)} ${message}\n${hint ? `  ${errColor.cyan('hint:')} ${hint}\n` : ''}`);
  return 1;
}
