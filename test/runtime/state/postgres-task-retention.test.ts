/**
 * The Postgres store's retention of finished A2A tasks (FORGE_TASK_RETENTION):
 * a sweep deletes the tasks in a final state not updated for the retention,
 * with their push configs, in batches, and never a task still running or
 * waiting for its client. Against a real PostgreSQL on loopback; the rows'
 * times are written in the past instead of waiting for them to age.
 */
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { openPostgresStore, type PostgresStateStore } from '../../../runtime/state/postgres-store.ts';
import { sweepExpiredTasks } from '../../../runtime/state/postgres-retention.ts';
import { DEFAULT_TASK_RETENTION_MS } from '../../../runtime/state/retention-settings.ts';
import type { Logger } from '../../../runtime/tools/model.ts';
import { defaultServerCallContextBuilder, Task, TaskState, UnauthenticatedUser } from '../../../runtime/vendor/protocol.ts';
import { waitUntil } from '../../helpers/fleet.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';

let postgres: TestPostgres;
let store: PostgresStateStore;
let pool: pg.Pool;
let url: string;

beforeAll(async () => {
  postgres = await startPostgres();
  url = await postgres.createDatabase(`task_retention_${process.pid}`);
  store = await openPostgresStore({ url, leaseMs: 3000 });
  pool = new pg.Pool({ connectionString: url, max: 4 });
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await store?.close();
  await postgres?.stop();
});

beforeEach(async () => {
  await pool.query('DELETE FROM forge_tasks');
});

const DAY = 24 * 60 * 60 * 1000;
const context = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '1.0' });
const config = (taskId: string): TaskPushNotificationConfig => ({ tenant: '', id: 'hook', taskId, url: 'https://hooks.example/hook', token: 't', authentication: undefined });

/** A task saved in `state`, its last update `daysAgo` days back. */
async function saveTask(id: string, state: TaskState, daysAgo: number): Promise<void> {
  await store.tasks.save(Task.fromJSON({ id, contextId: 'ctx', status: { state: TaskState[state], timestamp: new Date().toISOString() } }));
  await pool.query(`UPDATE forge_tasks SET updated_at = now() - $2 * interval '1 day' WHERE id = $1`, [id, daysAgo]);
}
const taskIds = async () => (await pool.query<{ id: string }>('SELECT id FROM forge_tasks ORDER BY id')).rows.map((row) => row.id);
const configTasks = async () => (await pool.query<{ task_id: string }>('SELECT task_id FROM forge_push_configs ORDER BY task_id')).rows.map((row) => row.task_id);

function capturingLog(): Logger & { infos: string[] } {
  const infos: string[] = [];
  return { infos, info: (message) => void infos.push(message), warn: () => {}, debug: () => {} };
}

describe('the retention of finished tasks on Postgres', () => {
  it('deletes the finished tasks past the retention with their push configs, and keeps the recent and the unfinished ones', async () => {
    const finished = [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED];
    for (const state of finished) {
      await saveTask(`old-${state}`, state, 31);
      await saveTask(`recent-${state}`, state, 29);
    }
    const unfinished = [TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED];
    for (const state of unfinished) await saveTask(`unfinished-${state}`, state, 400);
    for (const id of [`old-${TaskState.TASK_STATE_COMPLETED}`, `recent-${TaskState.TASK_STATE_COMPLETED}`, `unfinished-${TaskState.TASK_STATE_INPUT_REQUIRED}`]) {
      expect(await store.pushConfigs.saveWithin(id, context, config(id), 10, true)).toBe('saved');
    }
    const log = capturingLog();

    expect(await sweepExpiredTasks(pool, { retentionMs: DEFAULT_TASK_RETENTION_MS }, log)).toBe(4);

    expect(await taskIds()).toEqual([...finished.map((state) => `recent-${state}`), ...unfinished.map((state) => `unfinished-${state}`)].sort());
    expect(await configTasks()).toEqual([`recent-${TaskState.TASK_STATE_COMPLETED}`, `unfinished-${TaskState.TASK_STATE_INPUT_REQUIRED}`]);
    // What GetTask reads: a deleted task is not found.
    expect(await store.tasks.load(`old-${TaskState.TASK_STATE_COMPLETED}`, context)).toBeUndefined();
    expect(await store.tasks.load(`recent-${TaskState.TASK_STATE_COMPLETED}`, context)).toBeDefined();
    expect(log.infos).toEqual(['state store: deleted 4 finished tasks not updated for 30d (FORGE_TASK_RETENTION)']);
  });

  it('counts the retention back from the time it is given', async () => {
    await saveTask('a-week-old', TaskState.TASK_STATE_COMPLETED, 7);
    expect(await sweepExpiredTasks(pool, { retentionMs: 30 * DAY, now: new Date(Date.now() + 22 * DAY) })).toBe(0);
    expect(await sweepExpiredTasks(pool, { retentionMs: 30 * DAY, now: new Date(Date.now() + 24 * DAY) })).toBe(1);
    expect(await taskIds()).toEqual([]);
  });

  it('deletes more tasks than one batch holds, batch after batch, in one sweep', async () => {
    await pool.query(`INSERT INTO forge_tasks (id, context_id, state, data, updated_at) SELECT 'bulk-' || i, 'ctx', 3, '{}'::jsonb, now() - interval '40 days' FROM generate_series(1, 25) AS i`);
    await saveTask('kept', TaskState.TASK_STATE_WORKING, 40);
    const batches: number[] = [];
    const counting = { query: (text: string, values: unknown[]) => pool.query(text, values).then((result) => (batches.push(result.rowCount ?? 0), result)) } as unknown as pg.Pool;
    expect(await sweepExpiredTasks(counting, { retentionMs: 30 * DAY, batch: 10 })).toBe(25);
    expect(batches).toEqual([10, 10, 5]);
    expect(await taskIds()).toEqual(['kept']);
  });

  it('passes over a task whose row another session holds, instead of waiting for it, and takes it at the next sweep', async () => {
    await saveTask('held', TaskState.TASK_STATE_COMPLETED, 40);
    await saveTask('free', TaskState.TASK_STATE_COMPLETED, 40);
    // What a push config's set on the task holds while it saves (saveWithin), or another replica's sweep.
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM forge_tasks WHERE id = 'held' FOR KEY SHARE");
      expect(await sweepExpiredTasks(pool, { retentionMs: 30 * DAY })).toBe(1);
      expect(await taskIds()).toEqual(['held']);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect(await sweepExpiredTasks(pool, { retentionMs: 30 * DAY })).toBe(1);
    expect(await taskIds()).toEqual([]);
  });

  it('is swept by the store on its schedule, with the retention it was opened with', async () => {
    await saveTask('old', TaskState.TASK_STATE_FAILED, 40);
    await saveTask('recent', TaskState.TASK_STATE_FAILED, 20);
    const log = capturingLog();
    const replica = await openPostgresStore({ url, leaseMs: 3000, taskRetentionMs: 30 * DAY, sweepEveryMs: 20, log });
    try {
      await waitUntil(async () => ((await taskIds()).includes('old') ? undefined : true), 20_000, 'the old task deleted by the sweep');
      expect(await taskIds()).toEqual(['recent']);
      expect(log.infos).toContain('state store: deleted 1 finished task not updated for 30d (FORGE_TASK_RETENTION)');
    } finally {
      await replica.close();
    }
  });
});
