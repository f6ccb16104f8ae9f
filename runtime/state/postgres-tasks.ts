/**
 * A2A tasks in Postgres, through the SDK's TaskStore interface (any replica
 * loads a task another one started), and leases: a replica running a task
 * holds a lease it renews; every replica reaps leases whose holder stopped
 * renewing (it died) and fails their tasks, so none stays "working".
 */
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { ListTasksRequest, ListTasksResponse, Task as TaskType } from '@a2a-js/sdk';
import type { Pool } from 'pg';
import { Task, TaskState } from '../vendor/protocol.ts';
import { failTask } from './fail-task.ts';
import { isConnectionLoss, retryOnConnectionLoss } from './pool-client.ts';
import type { Logger } from '../tools/model.ts';
import type { TaskLease, TaskRecords } from './store.ts';

const DEFAULT_PAGE_SIZE = 50;
/**
 * A finished task's state stays as the fleet saw it finish: a save kept while the store was away (another
 * replica's reaper may have failed the task meanwhile) lands only on an unfinished task, or one that
 * finished the same way. The A2A SDK applies the same rule to a task's events.
 */
const FINISHED_STATES = [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED];
const SAVE_TASK = `INSERT INTO forge_tasks (id, context_id, state, status_time, data, updated_at) VALUES ($1, $2, $3, $4, $5::jsonb, now())
  ON CONFLICT (id) DO UPDATE SET context_id = EXCLUDED.context_id, state = EXCLUDED.state, status_time = EXCLUDED.status_time, data = EXCLUDED.data, updated_at = now()`;
const SAVE_TASK_UNLESS_FINISHED_OTHERWISE = `${SAVE_TASK} WHERE forge_tasks.state NOT IN (${FINISHED_STATES.join(', ')}) OR forge_tasks.state = EXCLUDED.state`;

type TaskRow = [id: string, contextId: string, state: number, statusTime: string, data: string];
interface UnsavedTask {
  values: TaskRow;
  /** Settles when the state is saved, or given up. */
  settled: Promise<void>;
}

function rowTask(row: TaskRow): TaskType {
  return Task.fromJSON(JSON.parse(row[4]));
}

function taskRow(task: TaskType): TaskRow {
  return [task.id, task.contextId, task.status?.state ?? 0, task.status?.timestamp ?? '', JSON.stringify(Task.toJSON(task))];
}

/** Postgres's SQLSTATE for an insert whose key names no row. */
const FOREIGN_KEY_VIOLATION = '23503';

export class PostgresTasks implements TaskRecords {
  private reaper: NodeJS.Timeout | undefined;
  /** The tasks whose lease this process holds, with the state it last saved of each. */
  private readonly held = new Map<string, TaskRow | undefined>();
  /** Tasks whose latest state waits for the store to come back, by id. */
  private readonly unsaved = new Map<string, UnsavedTask>();
  private closed = false;

  constructor(
    private readonly pool: Pool,
    private readonly replicaId: string,
    private readonly leaseMs: number,
    private readonly log?: Logger,
    /** Told of a cancel request found for a task this process holds: its notification may have been lost. */
    private readonly onCancelFound?: (taskId: string) => void,
  ) {}

  /**
   * A task's save while the store is away does not fail: the A2A SDK stops saving a task's events
   * after one failed save, which would leave the task at its last saved state (working) after its
   * turn ended. Its latest state is kept here instead, written as soon as the store is back, and
   * read by this process's loads meanwhile.
   */
  async save(task: TaskType, _context?: ServerCallContext): Promise<void> {
    const values = taskRow(task);
    if (this.held.has(task.id)) this.held.set(task.id, values);
    const waiting = this.unsaved.get(task.id);
    if (waiting) {
      waiting.values = values; // its writer saves the latest: an earlier state must not land after it
      return;
    }
    try {
      await this.pool.query(SAVE_TASK, values);
    } catch (err) {
      if (!isConnectionLoss(err)) throw err;
      this.saveWhenBack(task.id, values);
    }
  }

  /**
   * The SDK loads a task before applying each of its events. While the store is away, a task whose turn
   * runs here loads as this process last saved it (no other process writes it while the lease is held);
   * any other load is tried again for a few seconds.
   */
  async load(taskId: string, _context?: ServerCallContext): Promise<TaskType | undefined> {
    const waiting = this.unsaved.get(taskId);
    if (waiting) return rowTask(waiting.values);
    const select = () => this.pool.query<{ data: unknown }>('SELECT data FROM forge_tasks WHERE id = $1', [taskId]);
    let rows;
    try {
      ({ rows } = await select());
    } catch (err) {
      if (!isConnectionLoss(err)) throw err;
      const saved = this.held.get(taskId);
      if (saved) return rowTask(saved);
      ({ rows } = await retryOnConnectionLoss(select));
    }
    return rows.length ? Task.fromJSON(rows[0].data) : undefined;
  }

  /** Writes a task's latest unsaved state once the store answers, unless the task finished otherwise meanwhile. */
  private saveWhenBack(taskId: string, values: TaskRow): void {
    const entry: UnsavedTask = { values, settled: Promise.resolve() };
    this.unsaved.set(taskId, entry);
    this.log?.warn(`state store: cannot save task ${taskId} now (the store is away); its latest state is kept here and saved when the store is back`);
    entry.settled = (async () => {
      try {
        for (;;) {
          const written = entry.values;
          // Another process may have finished the task otherwise meanwhile (its reaper failed it).
          const { rowCount } = await retryOnConnectionLoss(() => this.pool.query(SAVE_TASK_UNLESS_FINISHED_OTHERWISE, written), () => this.closed);
          if (entry.values !== written) continue; // a newer state came while this one was written: write it too
          if (!rowCount) this.log?.warn(`state store: task ${taskId} was finished otherwise while this replica could not reach the store (another replica gave it up); its own last state was not saved`);
          else this.log?.info(`state store: saved task ${taskId}, kept while the store was away`);
          return;
        }
      } catch (err) {
        if (!this.closed) this.log?.warn(`state store: cannot save task ${taskId}: ${(err as Error).message}`);
      } finally {
        this.unsaved.delete(taskId);
      }
    })();
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
    // The task as saved comes back with the lease, for loads while the store is away (a save made
    // meanwhile is newer, and stands).
    this.held.set(taskId, this.held.get(taskId));
    let leased;
    try {
      leased = await this.pool.query<{ data: unknown }>(
        `WITH cleared AS (DELETE FROM forge_task_cancels WHERE task_id = $1),
         leased AS (INSERT INTO forge_task_leases (task_id, owner, expires_at) VALUES ($1, $2, ${lease}) ON CONFLICT (task_id) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at)
         SELECT data FROM forge_tasks WHERE id = $1`,
        [taskId, this.replicaId],
      );
    } catch (err) {
      this.held.delete(taskId);
      throw err;
    }
    const saved = leased.rows[0]?.data;
    if (saved && !this.held.get(taskId)) this.held.set(taskId, taskRow(Task.fromJSON(saved)));
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
    // Its cancel request, if any, goes with it (the table's key cascades).
    const letGo = () => this.pool.query('DELETE FROM forge_task_leases WHERE task_id = $1 AND owner = $2', [taskId, this.replicaId]);
    return {
      release: async () => {
        const done = () => {
          clearInterval(renew);
          this.held.delete(taskId);
        };
        if (!this.unsaved.has(taskId)) {
          try {
            await retryOnConnectionLoss(letGo);
            return done();
          } catch (err) {
            if (!isConnectionLoss(err)) {
              done();
              throw err;
            }
          }
        }
        // The store is away, or the task's last state waits for it: the lease stays, renewed, until the
        // state is saved and the lease let go; a reaper must not fail a task whose answer is on its way.
        void (async () => {
          await this.unsaved.get(taskId)?.settled;
          await retryOnConnectionLoss(letGo, () => this.closed).catch(() => {});
          done();
        })();
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

  /** Stops the reaper and the writers of unsaved states (said in the log: their tasks' last states are lost). */
  close(): void {
    this.stopReaper();
    this.closed = true;
    if (this.unsaved.size) this.log?.warn(`state store: closing with the latest state of ${[...this.unsaved.keys()].join(', ')} unsaved (the store was away)`);
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
