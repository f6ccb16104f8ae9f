/**
 * What the four schedule tools share: the tasks from forge.yaml (read-only)
 * and those set at run time, and how store problems become results.
 */
import { PathRefusedError } from '../../guard/path-guard.ts';
import { ScheduleStoreError } from '../../scheduler/schedule-store.ts';
import { activeState } from '../../state/active-state.ts';
import type { ScheduleRecords } from '../../state/store.ts';
import { SCHEDULE_ID_PATTERN, type ScheduledTask } from '../../scheduler/scheduled-task.ts';
import { fail, type ToolResult } from '../model.ts';
import type { BuiltinHost } from './define.ts';

export const ID_SCHEMA = { type: 'string', pattern: SCHEDULE_ID_PATTERN, description: 'The task id: lowercase letters, digits, "-" and "_".' } as const;

export interface ScheduleAccess {
  store: Pick<ScheduleRecords, 'runtimeTasks' | 'saveTask' | 'deleteTask' | 'history'>;
  configTasks: readonly ScheduledTask[];
  allTasks(): Promise<ScheduledTask[]>;
}

export function scheduleAccess(host: BuiltinHost<unknown>): ScheduleAccess {
  // The process's state store, found at call time: files in the work dir, or the store replicas share.
  const records = async () => (await activeState(host.workDir, host.env)).schedules;
  const store: ScheduleAccess['store'] = {
    runtimeTasks: async () => (await records()).runtimeTasks(),
    saveTask: async (task, limit, now) => (await records()).saveTask(task, limit, now),
    deleteTask: async (id) => (await records()).deleteTask(id),
    history: async (options) => (await records()).history(options),
  };
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
