/**
 * The Postgres store's retention sweeps, run hourly by every serving replica (open-store.ts's `sweeps`).
 *
 * Finished A2A tasks (FORGE_TASK_RETENTION): a task in a final state
 * (completed, failed, canceled, rejected — a final state never changes
 * again, migration 5's trigger) not updated for the retention is deleted,
 * and its push configs with it (migration 7's trigger) — once each webhook
 * took its final state or it was given up. A task still running
 * or waiting for its client (submitted, working, input-required,
 * auth-required) is never touched, however old.
 *
 * Conversations (FORGE_CONVERSATION_RETENTION, opt-in): one whose last turn
 * saved it (updated_at) longer ago than the retention is deleted, unless a
 * turn holds it now (a hold not expired), it waits for an approval
 * (`pending`: a paused turn, a schedule's too, which has no task), or an
 * unfinished task of its context (a paused one, whose approval resumes this
 * conversation) is still kept. Its finished tasks stay for GetTask; the
 * session-tier tools forged in it go with it, in the batch's transaction
 * (every replica hears of their removal). (The `file:` store's sweep,
 * conversation-retention.ts, keeps the same ones.)
 *
 * In batches, each its own statement (a batch of conversations its own
 * transaction, with their tools): a sweep after months never holds many
 * row locks or one huge transaction. SKIP LOCKED lets sweeps running at once
 * take different rows, and passes over a row another session holds (a push
 * config's set on a task, a turn taking a conversation) until a later sweep.
 * No ORDER BY: a scan stops at the batch's last match instead of sorting
 * every candidate.
 */
import type { Pool } from 'pg';
import { conversationSession } from './session-owners.ts';
import type { Logger } from '../tools/model.ts';
import { conversationsDeletedLine } from './conversation-retention.ts';
import { inTransaction } from './pool-client.ts';
import { removeSessionTools } from './postgres-forged.ts';
import { retentionText } from './retention-settings.ts';
import { FINAL_STATE_TRIES } from './store.ts';

/** A2A's TaskState numbers for completed, failed, canceled, rejected (as memory-tasks.ts and migration 5). */
const FINISHED_STATES = [3, 4, 5, 7];
export const SWEEP_BATCH = 500;

// $1 the finished states, $2 the time counted back from (null: the database's now), $3 the retention in ms, $4 the batch.
const PAST_RETENTION = `updated_at < COALESCE($2::timestamptz, now()) - $3 * interval '1 millisecond'`;

// Not while a webhook may still get its final state (unsettled, tries left): a retention shorter than the resends'
// seven hours would take the config, and the at-least-once, with the task. ($5: the tries, FINAL_STATE_TRIES.)
const DELETE_TASKS = `DELETE FROM forge_tasks WHERE id IN (
  SELECT t.id FROM forge_tasks t WHERE t.state = ANY($1::int[]) AND t.${PAST_RETENTION}
    AND NOT EXISTS (SELECT 1 FROM forge_push_configs c WHERE c.task_id = t.id AND NOT c.final_settled AND c.final_tries < $5)
  LIMIT $4 FOR UPDATE OF t SKIP LOCKED)`;

// A hold is checked against the database's own now(): whether a turn is alive does not depend on the time counted back from.
const DELETE_CONVERSATIONS = `DELETE FROM forge_conversations WHERE id IN (
  SELECT c.id FROM forge_conversations c WHERE ${PAST_RETENTION}
    AND (c.turn_owner IS NULL OR c.turn_expires < now())
    AND NOT c.data ? 'pending'
    AND NOT EXISTS (SELECT 1 FROM forge_tasks t WHERE t.context_id = c.id AND t.state <> ALL($1::int[]))
  LIMIT $4 FOR UPDATE OF c SKIP LOCKED)
  RETURNING id`;

export interface RetentionSweep {
  retentionMs: number;
  batch?: number;
  /** The time the retention counts back from (tests); the database's clock otherwise, the same for every replica. */
  now?: Date;
}

/** One replica's sweep of the finished tasks: says how many went when there were any (never which). */
export async function sweepExpiredTasks(pool: Pool, sweep: RetentionSweep, log?: Logger): Promise<number> {
  const deleted = await deleteInBatches(pool, DELETE_TASKS, sweep, [FINAL_STATE_TRIES]);
  if (deleted) log?.info(`state store: deleted ${deleted} finished task${deleted === 1 ? '' : 's'} not updated for ${retentionText(sweep.retentionMs)} (FORGE_TASK_RETENTION)`);
  return deleted;
}

/**
 * One replica's sweep of the conversations, with their session tools, a batch per transaction: says how
 * many went when there were any (never which).
 */
export async function sweepExpiredConversations(pool: Pool, sweep: RetentionSweep, log?: Logger): Promise<number> {
  const batch = sweep.batch ?? SWEEP_BATCH;
  let deleted = 0;
  let tools = 0;
  for (;;) {
    const done = await inTransaction(pool, async (client) => {
      const { rows } = await client.query<{ id: string }>(DELETE_CONVERSATIONS, [FINISHED_STATES, sweep.now ?? null, sweep.retentionMs, batch]);
      return { conversations: rows.length, tools: await removeSessionTools(client, rows.map((row) => conversationSession(row.id))) };
    });
    deleted += done.conversations;
    tools += done.tools;
    if (done.conversations < batch) break;
  }
  if (deleted) log?.info(conversationsDeletedLine(deleted, sweep.retentionMs, tools));
  return deleted;
}

/** Runs a batch's delete until one deletes fewer than a batch; returns how many in all. */
async function deleteInBatches(pool: Pool, statement: string, sweep: RetentionSweep, extra: unknown[] = []): Promise<number> {
  const batch = sweep.batch ?? SWEEP_BATCH;
  let deleted = 0;
  for (;;) {
    const { rowCount } = await pool.query(statement, [FINISHED_STATES, sweep.now ?? null, sweep.retentionMs, batch, ...extra]);
    deleted += rowCount ?? 0;
    if ((rowCount ?? 0) < batch) return deleted;
  }
}

