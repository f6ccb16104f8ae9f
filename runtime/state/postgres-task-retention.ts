/**
 * The Postgres store's retention of finished A2A tasks: a task in a final
 * state (completed, failed, canceled, rejected — a final state never changes
 * again, migration 5's trigger) not updated for the retention is deleted,
 * and its push configs with it (migration 7's trigger). A task still running
 * or waiting for its client (submitted, working, input-required,
 * auth-required) is never touched, however old.
 *
 * In batches, each its own statement: a sweep after months of tasks never
 * holds many row locks or one huge transaction. Every replica sweeps; SKIP
 * LOCKED lets sweeps running at once take different rows, and passes over a
 * row a push config's set holds (saveWithin) until a later sweep.
 */
import type { Pool } from 'pg';
import type { Logger } from '../tools/model.ts';

/** A2A's TaskState numbers for completed, failed, canceled, rejected (as memory-tasks.ts and migration 5). */
const FINISHED_STATES = [3, 4, 5, 7];
export const TASK_SWEEP_BATCH = 500;

// No ORDER BY: the scan stops at the batch's last match instead of sorting every finished task.
const DELETE_BATCH = `DELETE FROM forge_tasks WHERE id IN (
  SELECT id FROM forge_tasks WHERE state = ANY($1::int[]) AND updated_at < COALESCE($2::timestamptz, now()) - $3 * interval '1 millisecond'
  LIMIT $4 FOR UPDATE SKIP LOCKED)`;

export interface TaskSweep {
  retentionMs: number;
  batch?: number;
  /** The time the retention counts back from (tests); the database's clock otherwise, the same for every replica. */
  now?: Date;
}

/** Deletes the finished tasks past the retention, batch after batch; returns how many. */
export async function deleteExpiredTasks(pool: Pool, sweep: TaskSweep): Promise<number> {
  const batch = sweep.batch ?? TASK_SWEEP_BATCH;
  let deleted = 0;
  for (;;) {
    const { rowCount } = await pool.query(DELETE_BATCH, [FINISHED_STATES, sweep.now ?? null, sweep.retentionMs, batch]);
    deleted += rowCount ?? 0;
    if ((rowCount ?? 0) < batch) return deleted;
  }
}

/** One replica's sweep: deletes what is past the retention, and says how many when there were any (never which). */
export async function sweepExpiredTasks(pool: Pool, sweep: TaskSweep, log?: Logger): Promise<number> {
  const deleted = await deleteExpiredTasks(pool, sweep);
  if (deleted) log?.info(`state store: deleted ${deleted} finished task${deleted === 1 ? '' : 's'} not updated for ${retentionText(sweep.retentionMs)} (FORGE_TASK_RETENTION)`);
  return deleted;
}

function retentionText(ms: number): string {
  const days = ms / (24 * 60 * 60_000);
  return Number.isInteger(days) ? `${days}d` : ms % (60 * 60_000) === 0 ? `${ms / (60 * 60_000)}h` : `${Math.round(ms / 60_000)}m`;
}
