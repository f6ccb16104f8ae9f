/**
 * The `file:` state store, the default: one process, everything under
 * .forge/ in the work dir — conversations in sessions/ (lock file + version
 * check, so even two processes on one directory lose nothing), schedules in
 * schedules.json and schedule-history.jsonl, files in state-files/; A2A
 * tasks, their push notification configs and cancel requests live in the
 * process (finished tasks only up to a limit: see memory-tasks.ts).
 * Conversations are kept forever unless FORGE_CONVERSATION_RETENTION says
 * how long (conversation-retention.ts); the session-tier tools forged in one
 * (.forge/forged/) go with it. Those of an MCP session go when it ends
 * (removeSessionTools), and the serving process's first sweep takes out those
 * an earlier process's sessions left. The sweeps start once serve makes the
 * store the process's (setActiveState): it holds the lock then (no other
 * process serves these files) and forge_tool follows the store's removals.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { ScheduleStore } from '../scheduler/schedule-store.ts';
import { watchActiveState } from './active-state.ts';
import { isMcpSession } from './session-owners.ts';
import type { ForgedStore } from '../tools/emergent/forged-store.ts';
import type { Logger } from '../tools/model.ts';
import { sweepIdleFileConversations } from './conversation-retention.ts';
import { FileConversations } from './file-conversations.ts';
import { LocalFileRecords } from './file-records.ts';
import { LocalCancels } from './local-cancels.ts';
import { MemoryPushConfigs } from './memory-push-configs.ts';
import { MemoryTasks, type MemoryTaskLimits } from './memory-tasks.ts';
import type { ForgedRemoval, StateStore } from './store.ts';
import { scheduleSweeps, type SweepSchedule } from './sweep-schedule.ts';

export interface FileStoreOptions {
  tasks?: MemoryTaskLimits;
  /** How long a conversation is kept after its last turn (FORGE_CONVERSATION_RETENTION); undefined (the default): forever. */
  conversationRetentionMs?: number;
  /** Whether this process deletes them (the long-running server only: open-store.ts's `sweeps`), once it is the process's store. */
  sweeps?: boolean;
  /** How often the conversations past it are deleted (default hourly; tests shorten it). */
  sweepEveryMs?: number;
  /** How many tasks' push configs are kept (default 12,000; tests lower it). */
  maxPushConfigTasks?: number;
  /** The work dir's forged tools (.forge/forged/), whose session-tier ones go as their session ends; absent: none are taken out. */
  forgedFiles?: ForgedFiles;
  log?: Logger;
}

/**
 * What the store takes a session's forged tools out of: the work dir's ForgedStore, given by the server that
 * opens the store (forge_tool's records are a tool's concern; the store only says when their session ended).
 */
export type ForgedFiles = Pick<ForgedStore, 'list' | 'removeSessionTools'>;

/** The MCP sessions that own session tools in .forge/forged/. */
function mcpOwners(forged: ForgedFiles): Set<string> {
  return new Set(forged.list().flatMap((record) => (record.tier === 'session' && record.owner && isMcpSession(record.owner) ? [record.owner] : [])));
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
  const forged = options.forgedFiles;
  const onForgedRemoved = (removed: ForgedRemoval[]) => forgedRemoved.forEach((listener) => listener(removed));
  const removeSessionTools = (owners: ReadonlySet<string>): number => {
    const removed = forged?.removeSessionTools(owners) ?? [];
    if (removed.length) onForgedRemoved(removed);
    return removed.length;
  };
  // The MCP sessions whose tools are on disk as the server makes the store its own: each of an earlier process (a
  // session lives in its process, under an owner made there, and ends with it), so none can call them again.
  let endedMcpSessions = new Set<string>();
  const sweep = () => {
    // Only where forge_tool follows the store: a server without it serves no forged tool, and leaves them.
    if (endedMcpSessions.size && forgedRemoved.size) {
      try {
        const removed = removeSessionTools(endedMcpSessions);
        endedMcpSessions.clear();
        if (removed) options.log?.info(`state store: removed ${removed} session tool${removed === 1 ? '' : 's'} forged in MCP sessions of an earlier process`);
      } catch (err) {
        options.log?.warn(`state store: cannot remove the session tools of MCP sessions of an earlier process: ${(err as Error).message}; tried again in an hour`);
      }
    }
    if (retentionMs === undefined) return;
    void sweepIdleFileConversations(conversations, tasks, { retentionMs, forged, onForgedRemoved }, options.log).catch((err: Error) => options.log?.warn(`state store: cannot delete the conversations past FORGE_CONVERSATION_RETENTION: ${err.message}; tried again in an hour`));
  };
  // Not from the opening: serve may wait there for the lock of a process still serving these files (another container's
  // lease), and forge_tool follows the store only once it is the process's; a tool taken out before would stay served
  // here without its files.
  let sweeping: SweepSchedule | undefined;
  let leftoversRead = false;
  const startSweeps = () => {
    // At the first time only: made the process's again later, it may serve MCP sessions of its own by then.
    if (!leftoversRead && forged) endedMcpSessions = mcpOwners(forged);
    leftoversRead = true;
    if (retentionMs !== undefined || endedMcpSessions.size) sweeping ??= scheduleSweeps(sweep, options.sweepEveryMs);
  };
  const stopSweeps = () => {
    sweeping?.stop();
    sweeping = undefined;
  };
  const store: StateStore = {
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
    removeSessionTools: async (owners) => removeSessionTools(new Set(owners)),
    ping: async () => {},
    close: async () => {
      unwatch?.();
      stopSweeps();
    },
  };
  const unwatch = options.sweeps
    ? watchActiveState((active) => {
        if (active !== store) stopSweeps();
        else if (!sweeping) startSweeps();
      })
    : undefined;
  return store;
}
