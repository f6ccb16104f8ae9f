/**
 * The `file:` state store, the default: one process, everything under
 * .forge/ in the work dir — conversations in sessions/ (lock file + version
 * check, so even two processes on one directory lose nothing), schedules in
 * schedules.json and schedule-history.jsonl, files in state-files/; A2A
 * tasks, their push notification configs and cancel requests live in the
 * process (finished tasks only up to a limit: see memory-tasks.ts).
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { ScheduleStore } from '../scheduler/schedule-store.ts';
import { FileConversations } from './file-conversations.ts';
import { LocalFileRecords } from './file-records.ts';
import { LocalCancels } from './local-cancels.ts';
import { MemoryPushConfigs } from './memory-push-configs.ts';
import { MemoryTasks, type MemoryTaskLimits } from './memory-tasks.ts';
import type { StateStore } from './store.ts';

export function createFileStore(workDir: string, options: { tasks?: MemoryTaskLimits } = {}): StateStore {
  // A task dropped takes its push configs with it; a config set for a task takes it only if the task is still held.
  const pushConfigs: MemoryPushConfigs = new MemoryPushConfigs(undefined, undefined, (taskId, context) => tasks.has(taskId, context));
  const tasks = new MemoryTasks({ ...options.tasks, onDropped: (key) => pushConfigs.forgetTask(key) });
  return {
    kind: 'file',
    shared: false,
    where: join(workDir, '.forge'),
    replicaId: `${process.pid}-${randomUUID().slice(0, 8)}`,
    conversations: new FileConversations(join(workDir, '.forge', 'sessions')),
    tasks,
    pushConfigs,
    cancels: new LocalCancels(),
    schedules: new ScheduleStore(workDir),
    files: new LocalFileRecords(join(workDir, '.forge', 'state-files')),
    ping: async () => {},
    close: async () => {},
  };
}
