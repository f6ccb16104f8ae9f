/**
 * What the four schedule tools share: the tasks from forge.yaml (read-only)
 * and those set at run time, and how store problems become results.
 */
import { PathRefusedError } from '../../guard/path-guard.ts';
import { ScheduleStore, ScheduleStoreError } from '../../scheduler/schedule-store.ts';
import { SCHEDULE_ID_PATTERN, type ScheduledTask } from '../../scheduler/scheduled-task.ts';
import { fail, type ToolResult } from '../model.ts';
import type { BuiltinHost } from './define.ts';

export const ID_SCHEMA = { type: 'string', pattern: SCHEDULE_ID_PATTERN, description: 'The task id: lowercase letters, digits, "-" and "_".' } as const;

export interface ScheduleAccess {
  store: ScheduleStore;
  configTasks: readonly ScheduledTask[];
  allTasks(): Promise<ScheduledTask[]>;
}

export function scheduleAccess(host: BuiltinHost<unknown>): ScheduleAccess {
  const store = new ScheduleStore(host.workDir);
  const configTasks = host.schedules ?? [];
  return {
    store,
    configTasks,
    allTasks: async () => [...configTasks, ...(await store.runtimeTasks())],
  };
}

/** A store error (unreadable file, the schedule limit, .forge outside the work dir) as a result; anything else is rethrown. */
export function storeFailure(err: unknown): ToolResult {
  if (err instanceof ScheduleStoreError) return fail(err.code, err.message, err.hint);
  if (err instanceof PathRefusedError) return fail(err.code, `the schedule store cannot be used: ${err.message}`, err.hint);
  throw err;
}

export function readOnlyFailure(id: string, verb: string): ToolResult {
  return fail('FORGE_SCHEDULE_READ_ONLY', `schedule "${id}" is defined in forge.yaml and cannot be ${verb} at run time`, 'change it in forge.yaml, or use another id for a run-time schedule');
}
