/**
 * The `file:` store's retention of conversations (FORGE_CONVERSATION_RETENTION,
 * opt-in), hourly in its one process: a file in .forge/sessions/ no turn saved
 * for the retention is deleted, unless a turn holds it now (its lock file),
 * it waits for an approval (`pending`), or a task of its context is running or
 * paused in this process — the conversations the Postgres store's sweep
 * (postgres-retention.ts) keeps too. A client that comes back with its context
 * id starts an empty conversation. The session-tier tools forged in a deleted
 * conversation (.forge/forged/, owned by its context) go with it, in the same
 * sweep: no one else could see them, and its client, back, would otherwise
 * find its tools without the conversation that made them. A process stopped
 * between the two leaves the tools; a later sweep takes them out
 * (sweepOrphanedSessionTools).
 */
import { conversationSession, sessionConversation } from './session-owners.ts';
import type { ForgedFiles } from './file-store.ts';
import type { Logger } from '../tools/model.ts';
import type { FileConversations } from './file-conversations.ts';
import type { MemoryTasks } from './memory-tasks.ts';
import { retentionText } from './retention-settings.ts';
import type { ForgedRemoval } from './store.ts';

export interface FileConversationSweep {
  retentionMs: number;
  /** The time the retention counts back from (tests); the clock otherwise. */
  now?: Date;
  /** The work dir's forged tools: a deleted conversation's session-tier tools are taken out. */
  forged?: ForgedFiles;
  /** Told of the forged tools taken out, so the process serving them stops. */
  onForgedRemoved?: (removed: ForgedRemoval[]) => void;
}

/** One sweep: deletes the conversations past the retention with their session tools, and says how many when there were any (never which). */
export async function sweepIdleFileConversations(conversations: FileConversations, tasks: MemoryTasks, sweep: FileConversationSweep, log?: Logger): Promise<number> {
  const unfinished = tasks.unfinishedContexts();
  const before = (sweep.now?.getTime() ?? Date.now()) - sweep.retentionMs;
  const deleted = await conversations.deleteIdle(before, (session) => Boolean(session.pending) || unfinished.has(session.id));
  const tools = deleted.length && sweep.forged ? sweep.forged.removeSessionTools(new Set(deleted.map(conversationSession))) : [];
  if (tools.length) sweep.onForgedRemoved?.(tools);
  if (deleted.length) log?.info(conversationsDeletedLine(deleted.length, sweep.retentionMs, tools.length));
  if (sweep.forged) await sweepOrphanedSessionTools(conversations, sweep.forged, before, unfinished, sweep, log);
  return deleted.length;
}

/**
 * Takes out the session tools of conversations that are gone for good: a tool owned by `context:X` with no file
 * for X, forged before the retention's cut-off. The conversation that forged it saved its turn at or after
 * forgedAt, so it was past the retention itself, and deleted: by an earlier sweep stopped before its tools went.
 * A conversation without a file yet, whose first turn forged the tool and has not saved, is passed over: the
 * turn holds its lock from before it forges until after it saves (whileAbsent waits for no lock, it skips).
 * The age bound keeps the rule to tools whose conversation, had it saved, would be past the retention too: a
 * first turn that never saved (its process killed) loses its tools no sooner than a saved one would, and a
 * turn whose lock went unseen (taken over as stale, its holder stalled for 30 s) keeps them for the retention.
 */
async function sweepOrphanedSessionTools(conversations: FileConversations, forged: ForgedFiles, before: number, unfinished: ReadonlySet<string>, sweep: FileConversationSweep, log?: Logger): Promise<void> {
  const owners = new Map<string, string>();
  for (const record of forged.list()) {
    const owner = record.tier === 'session' ? record.owner : undefined;
    const contextId = owner ? sessionConversation(owner) : undefined;
    if (owner && contextId !== undefined && Date.parse(record.forgedAt) < before && !unfinished.has(contextId)) owners.set(owner, contextId);
  }
  const removed: ForgedRemoval[] = [];
  for (const [owner, contextId] of owners) {
    await conversations.whileAbsent(contextId, () => removed.push(...forged.removeSessionTools(new Set([owner]))));
  }
  if (!removed.length) return;
  sweep.onForgedRemoved?.(removed);
  log?.info(`state store: removed ${removed.length} session tool${removed.length === 1 ? '' : 's'} of conversations deleted earlier (FORGE_CONVERSATION_RETENTION)`);
}

/** What either store logs after a sweep that deleted some. */
export function conversationsDeletedLine(deleted: number, retentionMs: number, tools = 0): string {
  const withTools = tools ? `, with the ${tools} session tool${tools === 1 ? '' : 's'} forged in ${deleted === 1 ? 'it' : 'them'}` : '';
  return `state store: deleted ${deleted} conversation${deleted === 1 ? '' : 's'} without a turn for ${retentionText(retentionMs)}${withTools} (FORGE_CONVERSATION_RETENTION)`;
}
