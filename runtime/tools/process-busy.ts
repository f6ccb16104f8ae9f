/**
 * The answer of a call whose process was not started because every tool
 * process slot was taken and too many calls waited already
 * (exec/process-slots.ts): the same FORGE_TOOL_BUSY a worker's full queue
 * gives, whatever kind of tool the call was for.
 */
import { toolProcessSlots } from '../exec/process-slots.ts';
import type { ToolError } from './model.ts';

export function processesBusy(what: string): ToolError {
  const { running, waiting } = toolProcessSlots();
  return {
    code: 'FORGE_TOOL_BUSY',
    message: `${what} was not started: ${running} tool processes are running and ${waiting} calls are waiting for one`,
    hint: 'try again shortly; FORGE_TOOL_PROCESSES raises how many tool processes run at once',
    retryAfterSeconds: 1,
  };
}
