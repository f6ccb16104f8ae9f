/**
 * The Postgres store's retention sweeps. Finished A2A tasks (FORGE_TASK_RETENTION):
 * a sweep deletes the tasks in a final state not updated for the retention,
 * with their push configs, in batches, and never a task still running or
 * waiting for its client. Conversations (FORGE_CONVERSATION_RETENTION, opt-in):
 * a sweep deletes those whose last turn is older than the retention, and never
 * one a turn holds, one waiting for an approval, or one an unfinished task
 * (paused for approval or auth) still uses; the session-tier forged tools of
 * a conversation it deletes go with it, for every replica. Against a real PostgreSQL on
 * loopback; the rows' times are written in the past instead of waiting for
 * them to age.
 */
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TaskPushNotificationConfig } from '@a2a-js/sdk';
import { openPostgresStore, type PostgresStateStore } from '../../../runtime/state/postgres-store.ts';
import { pruneForgedBookkeeping } from '../../../runtime/state/postgres-forged-bookkeeping.ts';
import { sweepExpiredConversations, sweepExpiredTasks } from '../../../runtime/state/postgres-retention.ts';
import { DEFAULT_TASK_RETENTION_MS } from '../../../runtime/state/retention-settings.ts';
import { FINAL_STATE_TRIES } from '../../../runtime/state/store.ts';
import type { ForgedRecord } from '../../../runtime/tools/emergent/forged-store.ts';
import type { Logger } from '../../../runtime/tools/model.ts';
import { defaultServerCallContextBuilder, Task, TaskState, UnauthenticatedUser } from '../../../runtime/vendor/a2a.ts';
import { setActiveState } from '../../../runtime/state/active-state.ts';
import type { ForgeResult } from '../../../runtime/tools/emergent/forge-request.ts';
import { waitUntil } from '../../helpers/fleet.ts';
import { calcJson } from '../../helpers/forge-requests.ts';
import { tempDir } from '../../helpers/project.ts';
import { tools } from '../../helpers/tools.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';

let postgres: TestPostgres;
let store: PostgresStateStore;
let pool: pg.Pool;
let url: string;

beforeAll(async () => {
  postgres = await startPostgres();
  url = await postgres.createDatabase(`retention_${process.pid}`);
  store = await openPostgresStore({ url, leaseMs: 3000 });
  pool = new pg.Pool({ connectionString: url, max: 4 });
}, 60_000);

afterAll(async () => {
  // pool.end() resolves before its connections have closed (pg-pool ends them without waiting): one the server's
  // shutdown below reaches first is an idle client's error, which nothing is left to take.
  pool?.on('error', () => {});
  await pool?.end();
  await store?.close();
  await postgres?.stop();
});

beforeEach(async () => {
  await pool.query('DELETE FROM forge_tasks');
  await pool.query('DELETE FROM forge_conversations');
  await pool.query('DELETE FROM forge_forged_tools');
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

/** A conversation with one turn, saved by the store, its last turn `daysAgo` days back. */
async function saveConversation(id: string, daysAgo: number): Promise<void> {
  await store.conversations.withTurn(id, async (session) => void session.messages.push({ role: 'user', content: `hello from ${id}` }));
  await pool.query(`UPDATE forge_conversations SET updated_at = now() - $2 * interval '1 day' WHERE id = $1`, [id, daysAgo]);
}
const conversationIds = async () => (await pool.query<{ id: string }>('SELECT id FROM forge_conversations ORDER BY id')).rows.map((row) => row.id);

/** A task of the conversation `contextId`, saved in `state` now. */
async function saveTaskIn(id: string, contextId: string, state: TaskState): Promise<void> {
  await store.tasks.save(Task.fromJSON({ id, contextId, status: { state: TaskState[state], timestamp: new Date().toISOString() } }));
}
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
    // Their webhooks took the final states (see the next test for one that did not).
    await pool.query('UPDATE forge_push_configs SET final_settled = true');
    const log = capturingLog();

    expect(await sweepExpiredTasks(pool, { retentionMs: DEFAULT_TASK_RETENTION_MS }, log)).toBe(4);

    expect(await taskIds()).toEqual([...finished.map((state) => `recent-${state}`), ...unfinished.map((state) => `unfinished-${state}`)].sort());
    expect(await configTasks()).toEqual([`recent-${TaskState.TASK_STATE_COMPLETED}`, `unfinished-${TaskState.TASK_STATE_INPUT_REQUIRED}`]);
    // What GetTask reads: a deleted task is not found.
    expect(await store.tasks.load(`old-${TaskState.TASK_STATE_COMPLETED}`, context)).toBeUndefined();
    expect(await store.tasks.load(`recent-${TaskState.TASK_STATE_COMPLETED}`, context)).toBeDefined();
    expect(log.infos).toEqual(['state store: deleted 4 finished tasks not updated for 30d (FORGE_TASK_RETENTION)']);
  });

  // A retention shorter than the resends' seven hours took the config with the task, and the at-least-once with it.
  it("keeps a finished task past the retention while a webhook may still get its final state, and deletes it once each took it or was given up", async () => {
    for (const id of ['unsent', 'given-up', 'taken', 'claimed-last-time']) {
      await saveTask(id, TaskState.TASK_STATE_COMPLETED, 31);
      expect(await store.pushConfigs.saveWithin(id, context, config(id), 10, true)).toBe('saved');
    }
    await pool.query("UPDATE forge_push_configs SET final_tries = 3 WHERE task_id = 'unsent'");
    await store.pushConfigs.finals!.settle('given-up', 'hook');
    await store.pushConfigs.finals!.settle('taken', 'hook');
    // Its last try was claimed by a replica that stopped before settling it: no replica claims it again.
    await pool.query(`UPDATE forge_push_configs SET final_tries = ${FINAL_STATE_TRIES} WHERE task_id = 'claimed-last-time'`);

    expect(await sweepExpiredTasks(pool, { retentionMs: DEFAULT_TASK_RETENTION_MS })).toBe(3);
    expect(await taskIds()).toEqual(['unsent']);
    expect(await configTasks()).toEqual(['unsent']);

    await store.pushConfigs.finals!.settle('unsent', 'hook');
    expect(await sweepExpiredTasks(pool, { retentionMs: DEFAULT_TASK_RETENTION_MS })).toBe(1);
    expect(await taskIds()).toEqual([]);
  });

  it('counts the retention back from the time it is given', async () => {
    await saveTask('a-week-old', TaskState.TASK_STATE_COMPLETED, 7);
    expect(await sweepExpiredTasks(pool, { retentionMs: 30 * DAY, now: new Date(Date.now() + 22 * DAY) })).toBe(0);
    expect(await sweepExpiredTasks(pool, { retentionMs: 30 * DAY, now: new Date(Date.now() + 24 * DAY) })).toBe(1);
    expect(await taskIds()).toEqual([]);
  });
});

describe('the retention of conversations on Postgres', () => {
  it('deletes a conversation without a turn for the retention, keeps a recent one, and says how many went', async () => {
    await saveConversation('old', 91);
    await saveConversation('recent', 89);
    const log = capturingLog();

    expect(await sweepExpiredConversations(pool, { retentionMs: 90 * DAY }, log)).toBe(1);

    expect(await conversationIds()).toEqual(['recent']);
    // What the next turn in that context reads: an empty conversation, not the old one.
    expect((await store.conversations.read('old')).messages).toEqual([]);
    expect((await store.conversations.read('recent')).messages).toEqual([{ role: 'user', content: 'hello from recent' }]);
    expect(log.infos).toEqual(['state store: deleted 1 conversation without a turn for 90d (FORGE_CONVERSATION_RETENTION)']);
  });

  it('keeps a conversation a paused or running task still uses, however old, and deletes one whose tasks all finished', async () => {
    const unfinished = [TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED, TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_SUBMITTED];
    for (const state of unfinished) {
      await saveConversation(`ctx-${state}`, 400);
      await saveTaskIn(`task-${state}`, `ctx-${state}`, state);
    }
    await saveConversation('ctx-finished', 400);
    await saveTaskIn('task-finished', 'ctx-finished', TaskState.TASK_STATE_COMPLETED);

    expect(await sweepExpiredConversations(pool, { retentionMs: 90 * DAY })).toBe(1);

    expect(await conversationIds()).toEqual(unfinished.map((state) => `ctx-${state}`).sort());
    // The finished task stays for GetTask (FORGE_TASK_RETENTION's to delete).
    expect(await store.tasks.load('task-finished', context)).toBeDefined();
  });

  it('keeps a conversation waiting for an approval that no task holds (a schedule paused for approval)', async () => {
    await store.conversations.withTurn('schedule-nightly', async (session) => void (session.pending = { calls: [], decisions: {} }));
    await pool.query(`UPDATE forge_conversations SET updated_at = now() - interval '400 days'`);
    await saveConversation('schedule-done', 400);

    expect(await sweepExpiredConversations(pool, { retentionMs: 90 * DAY })).toBe(1);
    expect(await conversationIds()).toEqual(['schedule-nightly']);
  });

  it('keeps a conversation whose turn runs now, however long ago it was last saved', async () => {
    await saveConversation('in-turn', 400);
    let release!: () => void;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const turn = store.conversations.withTurn('in-turn', () => new Promise<void>((resolve) => ((release = resolve), started())));
    await running;
    try {
      expect(await sweepExpiredConversations(pool, { retentionMs: 90 * DAY })).toBe(0);
      expect(await conversationIds()).toEqual(['in-turn']);
    } finally {
      release();
      await turn;
    }
  });

  // A session tool stayed when its conversation was deleted: counted against max_tools on every replica, served to no
  // one, and back for a client reusing the context id, without the conversation that forged it.
  it('removes the session tools forged in the conversations it deletes, for every replica, and no other forged tool', async () => {
    await saveConversation('old', 91);
    await saveConversation('recent', 89);
    await store.conversations.withTurn('waiting', async (session) => void (session.pending = { calls: [], decisions: {} }));
    await pool.query(`UPDATE forge_conversations SET updated_at = now() - interval '400 days' WHERE id = 'waiting'`);
    const forgedAt = new Date().toISOString();
    for (const [name, owner] of [['of_old', 'context:old'], ['of_recent', 'context:recent'], ['of_waiting', 'context:waiting'], ['of_mcp_old', 'mcp:old'], ['of_agent', undefined]]) {
      const record = { request: { name, scope: owner ? 'session' : 'agent' }, tier: owner ? 'session' : 'agent', ...(owner ? { owner } : {}), forgedAt, verdict: { approved: true }, testResults: [] };
      expect(await store.forged!.add(record as unknown as ForgedRecord, 50)).toBeUndefined();
    }
    const { seq: before } = (await store.forged!.since(0)).at(-1)!;
    let heard = 0;
    const unsubscribe = store.forged!.subscribe(() => heard++);
    const log = capturingLog();

    try {
      expect(await sweepExpiredConversations(pool, { retentionMs: 90 * DAY }, log)).toBe(1);

      const forged = (await pool.query<{ name: string }>('SELECT name FROM forge_forged_tools ORDER BY name')).rows.map((row) => row.name);
      expect(forged).toEqual(['of_agent', 'of_mcp_old', 'of_recent', 'of_waiting']);
      // What every replica follows: the removal, after what it had seen.
      expect(await store.forged!.since(before)).toEqual([{ seq: expect.any(Number), removed: { name: 'of_old', forgedAt } }]);
      await waitUntil(async () => (heard ? true : undefined), 20_000, 'the removal announced to the replicas');
      expect(log.infos).toEqual(['state store: deleted 1 conversation without a turn for 90d, with the 1 session tool forged in it (FORGE_CONVERSATION_RETENTION)']);
    } finally {
      unsubscribe();
    }
  });

  // An MCP session's tools stayed when the session ended: no one could call them again, and they counted against max_tools.
  it('removes the session tools of an MCP session that ended, for every replica, and no other session\'s', async () => {
    const forgedAt = new Date().toISOString();
    for (const [name, owner] of [['of_ended', 'mcp:ended'], ['of_open', 'mcp:open']]) {
      const record = { request: { name, scope: 'session' }, tier: 'session', owner, forgedAt, verdict: { approved: true }, testResults: [] };
      expect(await store.forged!.add(record as unknown as ForgedRecord, 50)).toBeUndefined();
    }
    const { seq: before } = (await store.forged!.since(0)).at(-1)!;
    const replica = await openPostgresStore({ url, leaseMs: 3000 });
    try {
      expect(await replica.removeSessionTools(['mcp:ended'])).toBe(1);
      expect((await pool.query<{ name: string }>('SELECT name FROM forge_forged_tools ORDER BY name')).rows.map((row) => row.name)).toEqual(['of_open']);
      expect(await store.forged!.since(before)).toEqual([{ seq: expect.any(Number), removed: { name: 'of_ended', forgedAt } }]);
      expect(await replica.removeSessionTools(['mcp:ended'])).toBe(0);
    } finally {
      await replica.close();
    }
  });

  it('keeps every conversation when the store is opened without a retention (the default)', async () => {
    await saveConversation('ancient', 4000);
    const replica = await openPostgresStore({ url, leaseMs: 3000, taskRetentionMs: 30 * DAY, sweeps: true, sweepEveryMs: 20 });
    try {
      // Finished tasks past their retention, which the same sweeps delete: two sweeps ran, the first one's end
      // before the second one's task was saved.
      for (const id of ['first', 'second']) {
        await saveTaskIn(id, 'ancient', TaskState.TASK_STATE_COMPLETED);
        await pool.query(`UPDATE forge_tasks SET updated_at = now() - interval '4000 days'`);
        await waitUntil(async () => ((await pool.query('SELECT 1 FROM forge_tasks')).rowCount ? undefined : true), 20_000, `the ${id} finished task deleted by the sweep`);
      }
      expect(await conversationIds()).toEqual(['ancient']);
    } finally {
      await replica.close();
    }
  });
});

// What both sweeps do alike: in batches, skipping rows others hold, on the store's schedule.
describe.each([
  {
    what: 'finished tasks',
    table: 'forge_tasks',
    sweep: sweepExpiredTasks,
    save: (id: string, daysAgo: number) => saveTask(id, TaskState.TASK_STATE_COMPLETED, daysAgo),
    bulk: `INSERT INTO forge_tasks (id, context_id, state, data, updated_at) SELECT 'bulk-' || i, 'ctx', 3, '{}'::jsonb, now() - interval '40 days' FROM generate_series(1, 25) AS i`,
    // What a push config's set on the task holds while it saves (saveWithin), or another replica's sweep.
    hold: 'FOR KEY SHARE',
    opened: { taskRetentionMs: 30 * DAY },
    logged: 'state store: deleted 1 finished task not updated for 30d (FORGE_TASK_RETENTION)',
  },
  {
    what: 'conversations',
    table: 'forge_conversations',
    sweep: sweepExpiredConversations,
    save: saveConversation,
    bulk: `INSERT INTO forge_conversations (id, data, updated_at) SELECT 'bulk-' || i, '{"messages": []}'::jsonb, now() - interval '40 days' FROM generate_series(1, 25) AS i`,
    // What a turn taking the conversation holds for a moment, or another replica's sweep.
    hold: 'FOR UPDATE',
    opened: { conversationRetentionMs: 30 * DAY },
    logged: 'state store: deleted 1 conversation without a turn for 30d (FORGE_CONVERSATION_RETENTION)',
  },
])('the sweep of $what on Postgres', ({ table, sweep, save, bulk, hold, opened, logged }) => {
  const ids = async () => (await pool.query<{ id: string }>(`SELECT id FROM ${table} ORDER BY id`)).rows.map((row) => row.id);

  it('deletes more rows than one batch holds, batch after batch, in one sweep', async () => {
    await pool.query(bulk);
    await save('kept', 20);
    const batches: number[] = [];
    // Each batch's delete, whether run on the pool (the tasks') or on a client in its transaction (the conversations').
    const counted = <Q extends (text: string, values?: unknown[]) => Promise<pg.QueryResult>>(query: Q) => (text: string, values?: unknown[]) =>
      query(text, values).then((result) => (text.startsWith(`DELETE FROM ${table}`) && batches.push(result.rowCount ?? 0), result));
    const counting = {
      query: counted(pool.query.bind(pool)),
      connect: async () => {
        const client = await pool.connect();
        return new Proxy(client, { get: (target, key) => (key === 'query' ? counted(target.query.bind(target)) : Reflect.get(target, key)) });
      },
    } as unknown as pg.Pool;
    expect(await sweep(counting, { retentionMs: 30 * DAY, batch: 10 })).toBe(25);
    expect(batches).toEqual([10, 10, 5]);
    expect(await ids()).toEqual(['kept']);
  });

  it('passes over a row another session holds, instead of waiting for it, and takes it at the next sweep', async () => {
    await save('held', 40);
    await save('free', 40);
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM ${table} WHERE id = 'held' ${hold}`);
      expect(await sweep(pool, { retentionMs: 30 * DAY })).toBe(1);
      expect(await ids()).toEqual(['held']);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect(await sweep(pool, { retentionMs: 30 * DAY })).toBe(1);
    expect(await ids()).toEqual([]);
  });

  it('is swept by the store on its schedule, with the retention it was opened with', async () => {
    await save('old', 40);
    await save('recent', 20);
    const log = capturingLog();
    const replica = await openPostgresStore({ url, leaseMs: 3000, ...opened, sweeps: true, sweepEveryMs: 20, log });
    try {
      await waitUntil(async () => ((await ids()).includes('old') ? undefined : true), 20_000, 'the old row deleted by the sweep');
      expect(await ids()).toEqual(['recent']);
      expect(log.infos).toContain(logged);
    } finally {
      await replica.close();
    }
  });
});

// forge_tool's bookkeeping grew without end: a session that stopped calling left its call counts, and every removal
// stayed in forge_forged_removals for the replicas to read.
describe("the pruning of forge_tool's bookkeeping on Postgres", () => {
  const record = (name: string) => ({ request: { name, scope: 'agent' }, tier: 'agent', forgedAt: `${name}-forged`, verdict: { approved: true }, testResults: [] }) as unknown as ForgedRecord;
  const callSessions = async () => (await pool.query<{ session: string }>('SELECT session FROM forge_forge_calls ORDER BY session')).rows.map((row) => row.session);
  const removalNames = async () => (await pool.query<{ name: string }>('SELECT name FROM forge_forged_removals ORDER BY name')).rows.map((row) => row.name);

  beforeEach(async () => {
    await pool.query('DELETE FROM forge_forge_calls');
    await pool.query('DELETE FROM forge_forged_removals');
    await pool.query('UPDATE forge_forged_pruned SET through = 0');
  });

  it('deletes the call counts calls_per_minute no longer looks at, batch after batch, and keeps the last minute\'s', async () => {
    for (let i = 0; i < 5; i++) await pool.query("INSERT INTO forge_forge_calls (session, at) VALUES ('mcp:gone', clock_timestamp() - interval '2 minutes')");
    expect(await store.forged!.takeCall('context:active', 2)).toBeUndefined();
    expect(await pruneForgedBookkeeping(pool, 2)).toEqual({ calls: 5, removals: 0 });
    expect(await callSessions()).toEqual(['context:active']);
    // The minute's count is untouched: one more call, then the limit.
    expect(await store.forged!.takeCall('context:active', 2)).toBeUndefined();
    expect(await store.forged!.takeCall('context:active', 2)).toMatch(/called 2 times in the last minute/);
  });

  it('deletes the removals older than a day, notes the newest it deleted, and a replica behind it reads every tool anew', async () => {
    for (const name of ['old_a', 'old_b', 'recent', 'kept']) expect(await store.forged!.add(record(name), 50)).toBeUndefined();
    const { seq: behind } = (await store.forged!.since(0)).at(-1)!;
    expect(await store.forged!.remove('old_a')).toBe(true);
    expect(await store.forged!.remove('old_b')).toBe(true);
    expect(await store.forged!.remove('recent')).toBe(true);
    await pool.query("UPDATE forge_forged_removals SET removed_at = now() - interval '25 hours' WHERE name LIKE 'old_%'");
    const { seq: upToDate } = (await store.forged!.since(0)).at(-1)!;

    expect(await pruneForgedBookkeeping(pool, 1)).toEqual({ calls: 0, removals: 2 });
    expect(await removalNames()).toEqual(['recent']);
    // Behind a pruned removal: told so first, then every record the store holds.
    expect(await store.forged!.since(behind)).toEqual([{ seq: 0, pruned: true }, { seq: expect.any(Number), record: expect.objectContaining({ forgedAt: 'kept-forged' }) }, { seq: expect.any(Number), removed: { name: 'recent', forgedAt: 'recent-forged' } }]);
    // Past them: only what came after.
    expect(await store.forged!.since(upToDate)).toEqual([]);
    expect(await store.forged!.since(0)).not.toContainEqual({ seq: 0, pruned: true });
  });

  // A replica that read nothing for a day (the store away from it) would have missed a removal the sweep pruned, and
  // served the tool on.
  it('a replica that missed a removal since pruned drops the tool at its next look', async () => {
    const h = await tools(['forge_tool', 'math_calculate', 'json_parse'], { workDir: tempDir(), config: { forge_tool: { timeout: 5 } } });
    const replica = await openPostgresStore({ url, leaseMs: 3000 });
    try {
      await setActiveState(replica);
      for (const name of ['calc_removed', 'calc_kept']) {
        const forged = await h.registry.execute('forge_tool', { ...calcJson, name }, { session: 'context:lagging', timeoutMs: 60_000 });
        expect((forged as { value: ForgeResult }).value).toMatchObject({ success: true, tier: 'session' });
      }
      // A look that starts after both were added: this replica has read past them.
      await h.registry.find('no_such_tool');
      expect([h.registry.has('calc_removed'), h.registry.has('calc_kept')]).toEqual([true, true]);
      // Removed by another replica a day ago, unheard here (no notification), then pruned.
      await pool.query(`WITH gone AS (DELETE FROM forge_forged_tools WHERE name = 'calc_removed' RETURNING name, record->>'forgedAt' AS forged_at)
        INSERT INTO forge_forged_removals (seq, name, forged_at, removed_at) SELECT nextval(pg_get_serial_sequence('forge_forged_tools', 'seq')), name, forged_at, now() - interval '25 hours' FROM gone`);
      expect(await pruneForgedBookkeeping(pool, 500)).toMatchObject({ removals: 1 });

      await h.registry.find('no_such_tool');
      await waitUntil(async () => (h.registry.has('calc_removed') ? undefined : true), 20_000, 'calc_removed no longer served');
      expect(h.registry.has('calc_kept')).toBe(true);
    } finally {
      await setActiveState(undefined);
      await replica.close();
      await h.registry.close();
    }
  });

  it("is swept by the store on its schedule with no retention set", async () => {
    await pool.query("INSERT INTO forge_forge_calls (session, at) VALUES ('mcp:gone', clock_timestamp() - interval '2 minutes')");
    expect(await store.forged!.add(record('gone_long_ago'), 50)).toBeUndefined();
    expect(await store.forged!.remove('gone_long_ago')).toBe(true);
    await pool.query("UPDATE forge_forged_removals SET removed_at = now() - interval '25 hours'");
    const replica = await openPostgresStore({ url, leaseMs: 3000, sweeps: true, sweepEveryMs: 20 });
    try {
      await waitUntil(async () => ((await callSessions()).length || (await removalNames()).length ? undefined : true), 20_000, "forge_tool's old call counts and removals pruned");
    } finally {
      await replica.close();
    }
  });
});

