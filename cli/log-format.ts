/** `--log-format text|json` for long-running commands: readable lines for people, JSON lines for machines. */
import type { Logger } from '../runtime/tools/model.ts';
import { jsonLogger, parseLogFormat, type JsonLogger } from '../runtime/telemetry/json-logger.ts';
import { cliLogger } from './cli-logger.ts';
import { UsageError } from './usage-error.ts';

/** The logger, and `json` when every line the command writes must be one JSON object (its banner and failures too). */
export function runLogger(flag: string | undefined, verbose: boolean): Logger & { json?: JsonLogger } {
  const given = flag ?? process.env.FORGE_LOG_FORMAT;
  const format = given === undefined ? 'text' : parseLogFormat(given);
  if (!format) throw new UsageError(`--log-format must be text or json, not "${given}"`);
  if (format === 'text') return cliLogger(verbose);
  const json = jsonLogger((line) => process.stderr.write(line), { verbose });
  return { ...json, json };
}
