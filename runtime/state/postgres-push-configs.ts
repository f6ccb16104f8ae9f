/**
 * Push notification configs in Postgres, beside forge_tasks: a config set
 * through one replica is found by whichever replica runs the task next (a
 * paused task resumed elsewhere notifies its webhooks from there). Like the
 * tasks, a config is the agent's, not a caller's: every caller presents the
 * one bearer token. Kept with the protocol version it was set over, and
 * for as long as its task's row: deleting the row deletes them.
 */
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { ServerCallContext, StoredPushNotificationConfig } from '@a2a-js/sdk/server';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { storedJson } from './postgres-text.ts';
import type { FinalDeliveries, PushConfigRecords, PushConfigSave, UnsettledFinal } from './store.ts';
import { Task } from '../vendor/a2a.ts';

const SAVE = `INSERT INTO forge_push_configs (task_id, id, wire_version, config, before_task) VALUES ($1, $2, $3, $4::jsonb, NOT EXISTS (SELECT 1 FROM forge_tasks WHERE id = $1))
  ON CONFLICT (task_id, id) DO UPDATE SET wire_version = EXCLUDED.wire_version, config = EXCLUDED.config, before_task = EXCLUDED.before_task, updated_at = now()`;

/**
 * How long a config kept before its task's first save waits for that save before it counts as the config
 * of a task that never came to be. The save comes within the request, unless the store went away in between
 * (then it comes when the store is back, from the replica that kept the task): a day is past both.
 */
export const BEFORE_TASK_GRACE_MS = 24 * 60 * 60 * 1000;

/**
 * The configs of finished tasks (A2A's TaskState: completed 3, failed 4, canceled 5, rejected 7) not
 * settled, claimed: skipped by a replica while another holds them (SKIP LOCKED), and out of every
 * replica's reach until their next try is due.
 */
const CLAIM_UNSETTLED = `WITH due AS (
    SELECT c.task_id, c.id FROM forge_push_configs c JOIN forge_tasks t ON t.id = c.task_id
    WHERE NOT c.final_settled AND t.state IN (3, 4, 5, 7) AND t.updated_at < now() - $2 * interval '1 millisecond'
      AND (c.final_retry_at IS NULL OR c.final_retry_at < now()) AND c.final_tries < $4
    ORDER BY t.updated_at LIMIT $1 FOR UPDATE OF c SKIP LOCKED
  )
  UPDATE forge_push_configs c SET final_tries = c.final_tries + 1,
    final_retry_at = now() + least(3600000, $3 * power(2, c.final_tries)) * interval '1 millisecond'
  FROM due, forge_tasks t WHERE c.task_id = due.task_id AND c.id = due.id AND t.id = c.task_id
  RETURNING c.task_id, c.wire_version, c.config, c.final_tries, t.data`;

export class PostgresPushConfigs implements PushConfigRecords {
  readonly finals: FinalDeliveries;

  constructor(private readonly pool: Pool) {
    this.finals = {
      settle: async (taskId, configId) => {
        await pool.query('UPDATE forge_push_configs SET final_settled = true WHERE task_id = $1 AND id = $2', [taskId, configId]);
      },
      claimUnsettled: async (limit, graceMs, retryMs, maxTries): Promise<UnsettledFinal[]> => {
        const { rows } = await pool.query<{ task_id: string; wire_version: string; config: TaskPushNotificationConfig; final_tries: number; data: unknown }>(CLAIM_UNSETTLED, [limit, graceMs, retryMs, maxTries]);
        return rows.map((row) => ({ taskId: row.task_id, config: row.config, wireVersion: row.wire_version, task: Task.fromJSON(row.data), tries: row.final_tries }));
      },
      finished: async (taskId) => (await pool.query('SELECT 1 FROM forge_tasks WHERE id = $1 AND state IN (3, 4, 5, 7)', [taskId])).rowCount === 1,
    };
  }

  async save(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig): Promise<void> {
    // The SDK reads the id the store gave off the config it passed in.
    if (!config.id) config.id = randomUUID();
    await this.pool.query(SAVE, [taskId, config.id, context.requestedVersion || '0.3', storedJson(config)]);
  }

  async saveWithin(taskId: string, context: ServerCallContext, config: TaskPushNotificationConfig, max: number, existingTask = false): Promise<PushConfigSave> {
    if (!config.id) config.id = randomUUID();
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // One set of a task at a time, on every replica; the count below is a later statement, so it sees the sets committed before.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('forge_push_configs'), hashtext($1))", [taskId]);
      // The task's row, locked until this commits: a delete of it waits, then takes this config with it (migration 7's
      // trigger); a delete that went first leaves no row here.
      if (existingTask && !(await client.query('SELECT 1 FROM forge_tasks WHERE id = $1 FOR KEY SHARE', [taskId])).rowCount) {
        await client.query('ROLLBACK');
        return 'no task';
      }
      const { rows } = await client.query<{ others: number }>('SELECT count(*)::int AS others FROM forge_push_configs WHERE task_id = $1 AND id <> $2', [taskId, config.id]);
      if (rows[0].others >= max) {
        await client.query('ROLLBACK');
        return 'full';
      }
      await client.query(SAVE, [taskId, config.id, context.requestedVersion || '0.3', storedJson(config)]);
      await client.query('COMMIT');
      return 'saved';
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async load(taskId: string, context: ServerCallContext): Promise<TaskPushNotificationConfig[]> {
    return (await this.loadWithMetadata(taskId, context)).map((entry) => entry.config);
  }

  async loadWithMetadata(taskId: string, _context?: ServerCallContext): Promise<StoredPushNotificationConfig[]> {
    const { rows } = await this.pool.query<{ wire_version: string; config: TaskPushNotificationConfig }>('SELECT wire_version, config FROM forge_push_configs WHERE task_id = $1 ORDER BY updated_at, id', [taskId]);
    return rows.map((row) => ({ config: row.config, wireVersion: row.wire_version }));
  }

  /**
   * Of the configs kept before their task's first save: those whose task was saved since are marked no
   * longer so; those whose task still has no row after `graceMs` are deleted (its replica stopped before
   * saving it: nothing will run it). Returns how many were deleted.
   */
  async sweep(graceMs = BEFORE_TASK_GRACE_MS): Promise<number> {
    await this.pool.query('UPDATE forge_push_configs c SET before_task = false WHERE before_task AND EXISTS (SELECT 1 FROM forge_tasks t WHERE t.id = c.task_id)');
    const { rowCount } = await this.pool.query(
      `DELETE FROM forge_push_configs c WHERE before_task AND updated_at < now() - $1 * interval '1 millisecond' AND NOT EXISTS (SELECT 1 FROM forge_tasks t WHERE t.id = c.task_id)`,
      [graceMs],
    );
    return rowCount ?? 0;
  }

  async delete(taskId: string, _context: ServerCallContext, configId?: string): Promise<void> {
    // As the SDK's store: no id means the config whose id is the task's.
    await this.pool.query('DELETE FROM forge_push_configs WHERE task_id = $1 AND id = $2', [taskId, configId ?? taskId]);
  }
}
