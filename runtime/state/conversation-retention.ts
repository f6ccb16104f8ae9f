/**
 * The `file:` store's retention of conversations (FORGE_CONVERSATION_RETENTION,
 * opt-in), hourly in its one process: a file in .forge/sessions/ no turn saved
 * for the retention is deleted, unless a turn holds it now (its lock file),
 * it waits for an approval (`pending`), or a task of its context is running or
 * paused in this process — the conversations the Postgres store's sweep
 * (postgres-retention.ts) keeps too. A client that comes back with its context
 * id starts an empty conversation.
 */
import type { Logger } from '../tools/model.ts';
import type { FileConversations } from './file-conversations.ts';
import type { MemoryTasks } from './memory-tasks.ts';
import { retentionText } from './retention-settings.ts';

export interface FileConversationSweep {
  retentionMs: number;
  /** The time the retention counts back from (tests); the clock otherwise. */
  now?: Date;
}

/** One sweep: deletes the conversations past the retention, and says how many when there were any (never which). */
export async function sweepIdleFileConversations(conversations: FileConversations, tasks: MemoryTasks, sweep: FileConversationSweep, log?: Logger): Promise<number> {
  const unfinished = tasks.unfinishedContexts();
  const before = (sweep.now?.getTime() ?? Date.now()) - sweep.retentionMs;
  const deleted = await conversations.deleteIdle(before, (session) => Boolean(session.pending) || unfinished.has(session.id));
  if (deleted) log?.info(conversationsDeletedLine(deleted, sweep.retentionMs));
  return deleted;
}

/** What either store logs after a sweep that deleted some. */
export function conversationsDeletedLine(deleted: number, retentionMs: number): string {
  return `state store: deleted ${deleted} conversation${deleted === 1 ? '' : 's'} without a turn for ${retentionText(retentionMs)} (FORGE_CONVERSATION_RETENTION)`;
}
