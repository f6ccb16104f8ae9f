/**
 * What a tool process prints (Python's print() and stderr inside execute(),
 * a TS tool's console.log) goes to the server log, a line at a time, tagged
 * with the tool: stdout is the worker protocol, so without this a tool's
 * own prints would vanish.
 */
import type { Logger } from './model.ts';

/** A line longer than this is logged in pieces rather than held. */
const MAX_PENDING = 8 * 1024;

export function toolOutputToLog(log: Logger): (tool: string, text: string) => void {
  const pending = new Map<string, string>();
  return (tool, text) => {
    const lines = ((pending.get(tool) ?? '') + text).split('\n');
    let rest = lines.pop() ?? '';
    if (rest.length > MAX_PENDING) {
      lines.push(rest);
      rest = '';
    }
    pending.set(tool, rest);
    for (const line of lines) if (line.trim()) log.info(`${tool} │ ${line.replace(/\r$/, '')}`);
  };
}
