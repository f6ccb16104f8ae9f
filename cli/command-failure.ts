/**
 * How a command reports a failure that is not a usage mistake: with --json, one JSON document on
 * stdout in the shape every command fails with (runtime/failure-json.ts); otherwise ✘ and the
 * message on stderr. Returns the exit code.
 */
import { error, type Diagnostic, type DiagnosticCode } from '../runtime/diagnostics.ts';
import { failureJson, jsonDocument } from '../runtime/failure-json.ts';
import { errColor } from './terminal.ts';

/** `related`: the diagnostics behind the failure (what a refused install found), listed after it with --json. */
export function reportFailure(json: boolean, code: DiagnosticCode, message: string, hint?: string, related: readonly Diagnostic[] = []): 1 {
  if (json) process.stdout.write(jsonDocument(failureJson([error(code, message, {}, hint), ...related])));
  else process.stderr.write(`${errColor.red('✘')} ${errColor.dim(code)} ${message}\n${hint ? `  ${errColor.cyan('hint:')} ${hint}\n` : ''}`);
  return 1;
}

export { writeFailureJson } from '../runtime/failure-json.ts';
