/**
 * How a command reports a failure that is not a usage mistake: with --json, one JSON document on
 * stdout in the shape every command fails with (runtime/failure-json.ts); otherwise on stderr, as a
 * person reads it.
 */
import { error, type Diagnostic, type DiagnosticCode } from '../runtime/diagnostics.ts';
import { writeFailureJson } from '../runtime/failure-json.ts';
import { printDiagnostics } from './diagnostics-output.ts';
import { errColor } from './terminal.ts';

/**
 * One refusal (✘, its code and hint). `related`: the diagnostics behind it (what a refused install
 * found), listed after it in --json's `errors` and `warnings`. Returns the exit code.
 */
export function reportFailure(json: boolean, code: DiagnosticCode, message: string, hint?: string, related: readonly Diagnostic[] = []): 1 {
  if (json) writeFailureJson(true, [error(code, message, {}, hint), ...related]);
  else process.stderr.write(`${errColor.red('✘')} ${errColor.dim(code)} ${message}\n${hint ? `  ${errColor.cyan('hint:')} ${hint}\n` : ''}`);
  return 1;
}

/** Diagnostics that end a command: its one JSON document with --json, the compiler-style lines on stderr otherwise. */
export function reportDiagnostics(json: boolean, diagnostics: readonly Diagnostic[]): void {
  if (json) writeFailureJson(true, diagnostics);
  else printDiagnostics(diagnostics);
}
