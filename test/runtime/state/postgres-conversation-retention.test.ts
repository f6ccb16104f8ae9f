/**
 * The Postgres store's retention of conversations (FORGE_CONVERSATION_RETENTION,
 * opt-in): a sweep deletes the conversations whose last turn is older than the
 * retention, in batches, and never one a turn holds, one waiting for an
 * approval, or one an unfinished task (paused for approval or auth) still
 * uses. Against a real PostgreSQL on loopback; the rows' times are written
 * in the past instead of waiting for them to age.
 */
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStateStore } from '../../../runtime/state/postgres-store.ts';
import { sweepExpiredConversations } from '../../../runtime/state/postgres-retention.ts';
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
  url = await postgres.createDatabase(`conversation_retention_${process.pid}`);
  store = await openPostgresStore({ url, leaseMs: 3000 });
  pool = new pg.Pool({ connectionString: url, max: 4 });
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await store?.close();
  await postgres?.stop();
});

beforeEach(async () => {
  await pool.query('DELETE FROM forge_conversations');
  await pool.query('DELETE FROM forge_tasks');
});

const DAY = 24 * 60 * 60 * 1000;
const context = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '1.0' });

/** A conversation with one turn, saved by the store, its last turn `daysAgo` days back. */
async function saveConversation(id: string, daysAgo: number): Promise<void> {
  await store.conversations.withTurn(id, async (session) => void session.messages.push({ role: 'user', content: `hello from ${id}` }));
  await pool.query(`UPDATE forge_conversations SET updated_at = now() - $2 * interval '1 day' WHERE id = $1`, [id, daysAgo]);
}
async function saveTask(id: string, contextId: string, state: TaskState): Promise<void> {
  await store.tasks.save(Task.fromJSON({ id, contextId, status: { state: TaskState[state], timestamp: new Date().toISOString() } }));
}
const conversationIds = async () => (await pool.query<{ id: string }>('SELECT id FROM forge_conversations ORDER BY id')).rows.map((row) => row.id);

function capturingLog(): Logger & { infos: string[] } {
  const infos: string[] = [];
  return { infos, info: (message) => void infos.push(message), warn: () => {}, debug: () => {} };
}

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
      await saveTask(`task-${state}`, `ctx-${state}`, state);
    }
    await saveConversation('ctx-finished', 400);
    await saveTask('task-finished', 'ctx-finished', TaskState.TASK_STATE_COMPLETED);

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

  it('deletes more conversations than one batch holds, batch after batch, in one sweep', async () => {
    await pool.query(`INSERT INTO forge_conversations (id, data, updated_at) SELECT 'bulk-' || i, '{"messages": []}'::jsonb, now() - interval '40 days' FROM generate_series(1, 25) AS i`);
    await saveConversation('kept', 20);
    const batches: number[] = [];
    const counting = { query: (text: string, values: unknown[]) => pool.query(text, values).then((result) => (batches.push(result.rowCount ?? 0), result)) } as unknown as pg.Pool;
    expect(await sweepExpiredConversations(counting, { retentionMs: 30 * DAY, batch: 10 })).toBe(25);
    expect(batches).toEqual([10, 10, 5]);
    expect(await conversationIds()).toEqual(['kept']);
  });

  it('passes over a conversation whose row another session holds, instead of waiting for it, and takes it at the next sweep', async () => {
    await saveConversation('held', 40);
    await saveConversation('free', 40);
    const holder = await pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM forge_conversations WHERE id = 'held' FOR UPDATE");
      expect(await sweepExpiredConversations(pool, { retentionMs: 30 * DAY })).toBe(1);
      expect(await conversationIds()).toEqual(['held']);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    expect(await sweepExpiredConversations(pool, { retentionMs: 30 * DAY })).toBe(1);
    expect(await conversationIds()).toEqual([]);
  });

  it('is swept by the store on its schedule, with the retention it was opened with', async () => {
    await saveConversation('old', 40);
    await saveConversation('recent', 20);
    const log = capturingLog();
    const replica = await openPostgresStore({ url, leaseMs: 3000, conversationRetentionMs: 30 * DAY, sweepEveryMs: 20, log });
    try {
      await waitUntil(async () => ((await conversationIds()).includes('old') ? undefined : true), 20_000, 'the old conversation deleted by the sweep');
      expect(await conversationIds()).toEqual(['recent']);
      expect(log.infos).toContain('state store: deleted 1 conversation without a turn for 30d (FORGE_CONVERSATION_RETENTION)');
    } finally {
      await replica.close();
    }
  });

  it('keeps every conversation when the store is opened without a retention (the default)', async () => {
    await saveConversation('ancient', 4000);
    const replica = await openPostgresStore({ url, leaseMs: 3000, taskRetentionMs: 30 * DAY, sweepEveryMs: 20 });
    try {
      // Finished tasks past their retention, which the same sweeps delete: two sweeps ran, the first one's end
      // before the second one's task was saved.
      for (const id of ['first', 'second']) {
        await saveTask(id, 'ancient', TaskState.TASK_STATE_COMPLETED);
        await pool.query(`UPDATE forge_tasks SET updated_at = now() - interval '4000 days'`);
        await waitUntil(async () => ((await pool.query('SELECT 1 FROM forge_tasks')).rowCount ? undefined : true), 20_000, `the ${id} finished task deleted by the sweep`);
      }
      expect(await conversationIds()).toEqual(['ancient']);
    } finally {
      await replica.close();
    }
  });
});
