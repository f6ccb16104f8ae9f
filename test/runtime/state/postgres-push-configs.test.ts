/**
 * Push notification configs in Postgres live as long as their task's row: a
 * row deleted (an operator's clean-up, a later Forge's retention) takes its
 * configs with it, in its own transaction, and a set on the task racing
 * that delete either lands before it (and goes with the row) or finds no
 * task (and is not kept). Against a real PostgreSQL on loopback.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { openPostgresStore, type PostgresStateStore } from '../../../runtime/state/postgres-store.ts';
import { defaultServerCallContextBuilder, Task, TaskState, UnauthenticatedUser } from '../../../runtime/vendor/a2a.ts';
import { waitUntil } from '../../helpers/fleet.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';

let postgres: TestPostgres;
let store: PostgresStateStore;
let sql: pg.Client;
/** Watches the other sessions (pg_stat_activity). */
let watcher: pg.Client;

beforeAll(async () => {
  postgres = await startPostgres();
  const url = await postgres.createDatabase(`push_configs_${process.pid}`);
  store = await openPostgresStore({ url, leaseMs: 3000 });
  sql = new pg.Client({ connectionString: url });
  watcher = new pg.Client({ connectionString: url });
  await Promise.all([sql.connect(), watcher.connect()]);
}, 60_000);

afterAll(async () => {
  await sql?.end();
  await watcher?.end();
  await store?.close();
  await postgres?.stop();
});

const context = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '1.0' });
const config = (taskId: string, id: string): TaskPushNotificationConfig => ({ tenant: '', id, taskId, url: 'https://hooks.example/hook', token: 't', authentication: undefined });
const saveTask = (id: string) => store.tasks.save(Task.fromJSON({ id, contextId: 'ctx', status: { state: TaskState[TaskState.TASK_STATE_COMPLETED], timestamp: new Date().toISOString() } }));
const configRows = async (taskId: string) => (await sql.query('SELECT id FROM forge_push_configs WHERE task_id = $1 ORDER BY id', [taskId])).rows.map((row) => row.id);

describe('Postgres push configs and their task', () => {
  it("are deleted with the task's row, by whoever deletes it", async () => {
    await saveTask('gone');
    await saveTask('kept');
    for (const id of ['a', 'b']) expect(await store.pushConfigs.saveWithin('gone', context, config('gone', id), 10, true)).toBe('saved');
    expect(await store.pushConfigs.saveWithin('kept', context, config('kept', 'a'), 10, true)).toBe('saved');
    await sql.query("DELETE FROM forge_tasks WHERE id = 'gone'");
    expect(await configRows('gone')).toEqual([]);
    expect(await configRows('kept')).toEqual(['a']);
  });

  it('refuses a set on a task whose row is gone, and keeps a message\'s config for a task not saved yet', async () => {
    expect(await store.pushConfigs.saveWithin('never', context, config('never', 'a'), 10, true)).toBe('no task');
    expect(await configRows('never')).toEqual([]);
    // message/send keeps its config before its task is first saved.
    expect(await store.pushConfigs.saveWithin('starting', context, config('starting', 'a'), 10)).toBe('saved');
    expect(await configRows('starting')).toEqual(['a']);
  });

  it('keeps no config of a set that ran while the delete of its task was under way (the set waits, then finds no task)', async () => {
    await saveTask('racing');
    await sql.query('BEGIN');
    try {
      // The delete has run (its trigger found no config yet) but is not committed.
      await sql.query("DELETE FROM forge_tasks WHERE id = 'racing'");
      let settled = false;
      const set = store.pushConfigs.saveWithin('racing', context, config('racing', 'late'), 10, true).finally(() => (settled = true));
      // Until the set either ends or waits for the delete's lock on the row.
      await waitUntil(async () => settled || (await watcher.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%FOR KEY SHARE%'")).rowCount || undefined);
      await sql.query('COMMIT');
      expect(await set).toBe('no task');
    } catch (err) {
      await sql.query('ROLLBACK').catch(() => {});
      throw err;
    }
    expect(await configRows('racing')).toEqual([]);
  });

  it("deletes, past the grace, a message's config whose task was never saved (its replica stopped in between), and no other", async () => {
    for (const taskId of ['abandoned', 'saved-later', 'recent']) expect(await store.pushConfigs.saveWithin(taskId, context, config(taskId, 'a'), 10)).toBe('saved');
    await saveTask('saved-later');
    await saveTask('set-after');
    expect(await store.pushConfigs.saveWithin('set-after', context, config('set-after', 'a'), 10, true)).toBe('saved');
    // All but 'recent' were kept two days ago.
    await sql.query("UPDATE forge_push_configs SET updated_at = now() - interval '2 days' WHERE task_id IN ('abandoned', 'saved-later', 'set-after')");
    expect(await store.pushConfigs.sweep()).toBe(1);
    expect(await configRows('abandoned')).toEqual([]);
    for (const taskId of ['saved-later', 'recent', 'set-after']) expect(await configRows(taskId)).toEqual(['a']);
    // Only configs kept before their task are ever looked at again.
    expect((await sql.query("SELECT task_id FROM forge_push_configs WHERE before_task AND task_id IN ('abandoned', 'saved-later', 'recent', 'set-after')")).rows).toEqual([{ task_id: 'recent' }]);
  });

  it('leaves no config without its task when sets and deletes of the task race, round after round', async () => {
    for (let round = 0; round < 20; round++) {
      const taskId = `round-${round}`;
      await saveTask(taskId);
      const sets = Array.from({ length: 4 }, (_, i) => store.pushConfigs.saveWithin(taskId, context, config(taskId, `h${i}`), 10, true));
      const [deleted, ...results] = await Promise.all([sql.query('DELETE FROM forge_tasks WHERE id = $1', [taskId]), ...sets]);
      expect(deleted.rowCount).toBe(1);
      for (const result of results) expect(['saved', 'no task']).toContain(result);
      expect(await configRows(taskId)).toEqual([]);
    }
    expect((await sql.query('SELECT count(*)::int AS n FROM forge_push_configs c WHERE c.task_id LIKE $1 AND NOT EXISTS (SELECT 1 FROM forge_tasks t WHERE t.id = c.task_id)', ['round-%'])).rows).toEqual([{ n: 0 }]);
  });
});
