/**
 * The protocol SDKs (the A2A SDK above all) log with console.error and
 * console.warn: an unprefixed line and an error's whole stack, whatever the
 * log format (`Event processing loop failed for task …` and a dozen lines of
 * minified frames). In a serving process their lines go through Forge's
 * logger instead: one warning line (a JSON object with --log-format json),
 * and an error's stack as a debug line, shown only with --verbose.
 */
import { format } from 'node:util';
import type { Logger } from '../tools/model.ts';

export function routeConsoleToLog(log: Logger): void {
  const write = (args: unknown[]) => {
    log.warn(format(...args.map((arg) => (arg instanceof Error ? arg.message : arg))));
    for (const arg of args) if (arg instanceof Error && arg.stack) log.debug(arg.stack);
  };
  console.error = (...args: unknown[]) => write(args);
  console.warn = (...args: unknown[]) => write(args);
}
