/**
 * A2A tasks in Postgres, through the SDK's TaskStore interface (any replica
 * loads a task another one started), and leases: a replica running a task
 * holds a lease it renews; every replica reaps leases whose holder stopped
 * renewing (it died) and fails their tasks, so none stays "working".
 */
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { ListTasksRequest, ListTasksResponse, Task as TaskType } from '@a2a-js/sdk';
import type { Pool } from 'pg';
import { Task } from '../vendor/protocol.ts';
import { failTask } from './fail-task.ts';
import { retryOnConnectionLoss } from './pool-client.ts';
import type { Logger } from '../tools/model.ts';
import type { TaskLease, TaskRecords } from './store.ts';

const DEFAULT_PAGE_SIZE = 50;
/** Postgres's SQLSTATE for an insert whose key names no row. */
const FOREIGN_KEY_VIOLATION = '23503';

export class PostgresTasks implements TaskRecords {
  private reaper: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly replicaId: string,
    private readonly leaseMs: number,
    private readonly log?: Logger,
    /** Told of a cancel request found for a task this process holds: its notification may have been lost. */
    private readonly onCancelFound?: (taskId: string) => void,
  ) {}

  // save and load are tried again on a lost connection: the SDK calls them for every event of a task,
  // and stops saving that task's events after one fails, which would leave it at its last saved state.
  async save(task: TaskType, _context?: ServerCallContext): Promise<void> {
    const values = [task.id, task.contextId, task.status?.state ?? 0, task.status?.timestamp ?? '', JSON.stringify(Task.toJSON(task))];
    await retryOnConnectionLoss(() =>
      this.pool.query(
        `INSERT INTO forge_tasks (id, context_id, state, status_time, data, updated_at) VALUES ($1, $2, $3, $4, $5::jsonb, now())
         ON CONFLICT (id) DO UPDATE SET context_id = EXCLUDED.context_id, state = EXCLUDED.state, status_time = EXCLUDED.status_time, data = EXCLUDED.data, updated_at = now()`,
        values,
      ),
    );
  }

  async load(taskId: string, _context?: ServerCallContext): Promise<TaskType | undefined> {
    const { rows } = await retryOnConnectionLoss(() => this.pool.query<{ data: unknown }>('SELECT data FROM forge_tasks WHERE id = $1', [taskId]));
    return rows.length ? Task.fromJSON(rows[0].data) : undefined;
  }

  async list(params: ListTasksRequest, _context?: ServerCallContext): Promise<ListTasksResponse> {
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    const offset = params.pageToken ? Math.max(0, Number.parseInt(Buffer.from(params.pageToken, 'base64url').toString(), 10) || 0) : 0;
    const where: string[] = [];
    const values: unknown[] = [];
    if (params.contextId) where.push(`context_id = $${values.push(params.contextId)}`);
    if (params.status) where.push(`state = $${values.push(params.status)}`);
    if (params.statusTimestampAfter) where.push(`status_time > $${values.push(new Date(params.statusTimestampAfter).toISOString())}`);
    const filter = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const total = await this.pool.query<{ n: string }>(`SELECT count(*) AS n FROM forge_tasks ${filter}`, values);
    const page = await this.pool.query<{ data: unknown }>(`SELECT data FROM forge_tasks ${filter} ORDER BY status_time DESC, id DESC LIMIT ${pageSize} OFFSET ${offset}`, values);
    const tasks = page.rows.map((r) => {
      const task = Task.fromJSON(r.data);
      if (!params.includeArtifacts) task.artifacts = [];
      return task;
    });
    const totalSize = Number(total.rows[0].n);
    const nextPageToken = offset + tasks.length < totalSize ? Buffer.from(String(offset + tasks.length)).toString('base64url') : '';
    return { tasks, nextPageToken, pageSize, totalSize };
  }

  async hold(taskId: string, onLost?: () => void): Promise<TaskLease> {
    const lease = `now() + ${Number(this.leaseMs)} * interval '1 millisecond'`;
    // A new turn of the task starts with no cancel request: one left for an earlier turn whose lease was
    // taken over (its holder died before the reaper came) is not this turn's.
    await this.pool.query(
      `WITH cleared AS (DELETE FROM forge_task_cancels WHERE task_id = $1)
       INSERT INTO forge_task_leases (task_id, owner, expires_at) VALUES ($1, $2, ${lease}) ON CONFLICT (task_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at`,
      [taskId, this.replicaId],
    );
    // Each renewal also asks whether the task was cancelled: a cancel reaches this replica within a third of
    // a lease even when its notification did not.
    const renewal = `UPDATE forge_task_leases SET expires_at = ${lease} WHERE task_id = $1 AND owner = $2 RETURNING EXISTS (SELECT 1 FROM forge_task_cancels WHERE task_id = $1) AS cancelled`;
    const renew = setInterval(
      () =>
        void this.pool
          .query<{ cancelled: boolean }>(renewal, [taskId, this.replicaId])
          .then(({ rows }) => {
            if (rows.length === 0) {
              // Reaped (or taken over) while this process could not renew it: the task is no longer its own.
              clearInterval(renew);
              onLost?.();
            } else if (rows[0].cancelled) this.onCancelFound?.(taskId);
          })
          .catch(() => {}),
      Math.max(100, this.leaseMs / 3),
    );
    renew.unref();
    return {
      release: async () => {
        clearInterval(renew);
        // Its cancel request, if any, goes with it (the table's key cascades).
        await this.pool.query('DELETE FROM forge_task_leases WHERE task_id = $1 AND owner = $2', [taskId, this.replicaId]);
      },
    };
  }

  /**
   * Keeps a cancel request for the task while a turn holds its lease. None is kept for a task no turn
   * runs: there is nothing to stop, and nothing would remove it.
   */
  async keepCancel(taskId: string): Promise<void> {
    try {
      await this.pool.query('INSERT INTO forge_task_cancels (task_id) VALUES ($1) ON CONFLICT (task_id) DO NOTHING', [taskId]);
    } catch (err) {
      if ((err as { code?: string }).code !== FOREIGN_KEY_VIOLATION) throw err; // no lease: no turn runs it
    }
  }

  /** Checks for expired leases every half lease. */
  startReaper(): void {
    this.reaper = setInterval(() => void this.reapExpired().catch((err: unknown) => this.log?.warn(`state store: reaping task leases failed: ${(err as Error).message}`)), Math.max(200, this.leaseMs / 2));
    this.reaper.unref();
  }

  stopReaper(): void {
    if (this.reaper) clearInterval(this.reaper);
  }

  /** Fails the unfinished tasks whose lease expired; returns their ids. */
  async reapExpired(): Promise<string[]> {
    const { rows } = await this.pool.query<{ task_id: string }>(
      `DELETE FROM forge_task_leases WHERE task_id IN (SELECT task_id FROM forge_task_leases WHERE expires_at < now() FOR UPDATE SKIP LOCKED) RETURNING task_id`,
    );
    const failed: string[] = [];
    for (const { task_id } of rows) {
      if (await this.fail(task_id, 'the replica running this task stopped before it finished')) failed.push(task_id);
    }
    return failed;
  }

  /** Marks an unfinished task failed (a finished or paused one is left as it is). */
  async fail(taskId: string, reason: string): Promise<boolean> {
    const task = await this.load(taskId);
    const failed = task && failTask(task, reason);
    if (failed) await this.save(failed);
    return Boolean(failed);
  }
}
