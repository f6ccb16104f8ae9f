import { error, type Diagnostic, type DiagnosticCode } from '../runtime/diagnostics.ts';
import { writeFailureJson } from '../runtime/failure-json.ts';
import { errColor } from './terminal.ts';

/**
 * A mistake in how a command was invoked: printed with the command's synopsis, exit code 2. `code`: what
 * --json names it, FORGE_USAGE unless the refusal has a code of its own (the sandbox forge.yaml requires).
 */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
    readonly code: DiagnosticCode = 'FORGE_USAGE',
    /** What the command warned of before it refused (--json's `warnings`). */
    readonly warnings: readonly Diagnostic[] = [],
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** forge.yaml's `sandbox: required` where it cannot be met (the sandbox's own hint, or how to meet it): a usage error. */
export function sandboxRequiredUsage(err: { message: string; hint?: string }, warnings: readonly Diagnostic[] = []): UsageError {
  return new UsageError(`${err.message}; ${err.hint ?? 'install bubblewrap and allow namespaces here, or set sandbox: auto in forge.yaml'}`, undefined, 'FORGE_SANDBOX_REQUIRED', warnings);
}

/**
 * A usage error as the CLI prints it: the error and its hint, the command's synopsis (its usage up to the
 * first blank line), and where the rest is. The whole usage (options, examples) would push the error off
 * a small screen; `--help` prints it.
 */
function renderUsageError(err: UsageError, usage: string, command: string): string {
  const synopsis = usage.split('\n\n')[0].trimEnd();
  // A refusal with a code of its own (FORGE_SERVE_CONFIG, FORGE_SANDBOX_REQUIRED) names it, as --json does and the bundle's refusal does.
  const code = err.code === 'FORGE_USAGE' ? '' : `${errColor.dim(err.code)} `;
  return `${errColor.red('error:')} ${code}${err.message}${err.hint ? ` (${err.hint})` : ''}\n\n${synopsis}\n\nfor more, run: forge ${command} --help\n`;
}

/**
 * Reports a usage error, exit code 2: with --json (read from the raw arguments, which parseArgs may
 * have refused) also as the failure every command prints on stdout; the synopsis stays on stderr,
 * for the person reading a CI log.
 */
export function reportUsageError(err: UsageError, usage: string, command: string, argv: readonly string[]): 2 {
  writeFailureJson(argv.includes('--json'), [error(err.code, err.message, {}, err.hint), ...err.warnings]);
  process.stderr.write(renderUsageError(err, usage, command));
  return 2;
}
