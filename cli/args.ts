/**
 * Command-line parsing on node:util's parseArgs (no dependency, no startup
 * cost), with errors that say what was meant.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseArgsProblem } from '../runtime/parse-args-problem.ts';
import { parseTimeoutOption, TIMEOUT_OPTION_FORMS } from '../runtime/duration.ts';
import { UsageError } from './usage-error.ts';

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/** Options every command accepts. */
export const COMMON_OPTIONS = {
  json: { type: 'boolean', default: false },
  verbose: { type: 'boolean', short: 'v', default: false },
  config: { type: 'string', short: 'c' },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies OptionSpec;

/**
 * The command's options and its arguments, of which it takes at most
 * `maxArguments`: one more is a usage error, never silently dropped (an
 * unquoted value with a space, `--param text=two words`, would otherwise
 * run with half of it).
 */
export function parseCommand<T extends OptionSpec>(argv: string[], options: T, maxArguments = 0) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...options }, allowPositionals: true, strict: true });
  } catch (err) {
    const problem = parseArgsProblem(err, Object.keys({ ...COMMON_OPTIONS, ...options }));
    throw new UsageError(problem.message, problem.hint);
  }
  if (parsed.positionals.length > maxArguments) {
    const takes = maxArguments === 0 ? 'no arguments besides its options' : `at most ${maxArguments} argument${maxArguments === 1 ? '' : 's'}`;
    throw new UsageError(`unexpected argument "${parsed.positionals[maxArguments]}"`, `the command takes ${takes}; quote a value that has spaces`);
  }
  return parsed;
}

/** A --timeout in milliseconds: a bare number of them, or a duration (30s, 2m, 500ms). */
export function parseTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseTimeoutOption(value);
  if (ms === undefined) throw new UsageError(`--timeout takes ${TIMEOUT_OPTION_FORMS}, got "${value}"`);
  return ms;
}

export function parseInteger(name: string, value: string | undefined, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number, got "${value}"`);
  if (Number(value) < min) throw new UsageError(`--${name} must be at least ${min}, got ${value}`);
  if (Number(value) > max) throw new UsageError(`--${name} must be at most ${max}, got ${value}`);
  return Number(value);
}
