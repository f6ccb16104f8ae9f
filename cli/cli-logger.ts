/** Log lines for long-running commands (forge run, forge chat): stderr, dimmed, debug only with --verbose. */
import type { Logger } from '../runtime/tools/model.ts';
import { errColor as c } from './terminal.ts';
import { logText } from '../runtime/telemetry/log-text.ts';

export function cliLogger(verbose: boolean): Logger {
  return {
    debug: (m) => verbose && process.stderr.write(`${c.dim(`· ${logText(m)}`)}\n`),
    info: (m) => process.stderr.write(`${c.dim(`· ${logText(m)}`)}\n`),
    warn: (m) => process.stderr.write(`${c.yellow(`▲ ${logText(m)}`)}\n`),
  };
}
