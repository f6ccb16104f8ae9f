/**
 * The `file:` state store, the default: one process, everything under
 * .forge/ in the work dir — conversations in sessions/ (lock file + version
 * check, so even two processes on one directory lose nothing), schedules in
 * schedules.json and schedule-history.jsonl, files in state-files/; A2A
 * tasks, their push notification configs and cancel requests live in the
 * process (finished tasks only up to a limit: see memory-tasks.ts).
 * Conversations are kept forever unless FORGE_CONVERSATION_RETENTION says
 * how long (conversation-retention.ts); the session-tier tools forged in one
 * (.forge/forged/) go with it.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { ScheduleStore } from '../scheduler/schedule-store.ts';
import { ForgedStore, forgedRoot } from '../tools/emergent/forged-store.ts';
import type { Logger } from '../tools/model.ts';
import { sweepIdleFileConversations } from './conversation-retention.ts';
import { FileConversations } from './file-conversations.ts';
import { LocalFileRecords } from './file-records.ts';
import { LocalCancels } from './local-cancels.ts';
import { MemoryPushConfigs } from './memory-push-configs.ts';
import { MemoryTasks, type MemoryTaskLimits } from './memory-tasks.ts';
import type { ForgedRemoval, StateStore } from './store.ts';
import { scheduleSweeps } from './sweep-schedule.ts';

export interface FileStoreOptions {
  tasks?: MemoryTaskLimits;
  /** How long a conversation is kept after its last turn (FORGE_CONVERSATION_RETENTION); undefined (the default): forever. */
  conversationRetentionMs?: number;
  /** Whether this process deletes them (the long-running server only: open-store.ts's `sweeps`). */
  sweeps?: boolean;
  /** How often the conversations past it are deleted (default hourly; tests shorten it). */
  sweepEveryMs?: number;
  /** How many tasks' push configs are kept (default 12,000; tests lower it). */
  maxPushConfigTasks?: number;
  log?: Logger;
}

export function createFileStore(workDir: string, options: FileStoreOptions = {}): StateStore {
  // A task dropped takes its push configs with it; a config set for a task takes it only if the task is still held.
  // A running or paused task's configs are never dropped to make room for another's (memory-push-configs.ts).
  const pushConfigs: MemoryPushConfigs = new MemoryPushConfigs(
    options.maxPushConfigTasks,
    undefined,
    (taskId, context) => tasks.has(taskId, context),
    (key) => tasks.stateOf(key),
  );
  const tasks = new MemoryTasks({ ...options.tasks, onDropped: (key) => pushConfigs.forgetTask(key) });
  const conversations = new FileConversations(join(workDir, '.forge', 'sessions'));
  const retentionMs = options.conversationRetentionMs;
  const forgedRemoved = new Set<(removed: ForgedRemoval[]) => void>();
  const forged = new ForgedStore(forgedRoot(workDir));
  const onForgedRemoved = (removed: ForgedRemoval[]) => forgedRemoved.forEach((listener) => listener(removed));
  const sweeping =
    retentionMs === undefined || !options.sweeps
      ? undefined
      : scheduleSweeps(() => {
          void sweepIdleFileConversations(conversations, tasks, { retentionMs, forged, onForgedRemoved }, options.log).catch((err: Error) => options.log?.warn(`state store: cannot delete the conversations past FORGE_CONVERSATION_RETENTION: ${err.message}; tried again in an hour`));
        }, options.sweepEveryMs);
  return {
    kind: 'file',
    shared: false,
    where: join(workDir, '.forge'),
    replicaId: `${process.pid}-${randomUUID().slice(0, 8)}`,
    conversations,
    tasks,
    pushConfigs,
    cancels: new LocalCancels(),
    schedules: new ScheduleStore(workDir),
    files: new LocalFileRecords(join(workDir, '.forge', 'state-files')),
    onForgedRemoved(listener) {
      forgedRemoved.add(listener);
      return () => forgedRemoved.delete(listener);
    },
    ping: async () => {},
    close: async () => sweeping?.stop(),
  };
}
