/**
 * The Postgres state store itself, several instances on one real database
 * (as replicas would be): migrations when many start at once, due times
 * claimed once, the schedule limit under a race, compare-and-swap on a
 * conversation whose hold was taken over, cancel requests between
 * instances, and leases of dead holders reaped.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchedule } from '../../../runtime/scheduler/schedule-expression.ts';
import { openPostgresStore, type PostgresStateStore } from '../../../runtime/state/postgres-store.ts';
import { StateConflictError } from '../../../runtime/state/store.ts';
import { Task, TaskState } from '../../../runtime/vendor/protocol.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';

let postgres: TestPostgres;
const opened: PostgresStateStore[] = [];
let databases = 0;

beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(opened.map((s) => s.close()));
  await postgres?.stop();
});

async function stores(count: number, leaseMs = 3000): Promise<{ url: string; stores: PostgresStateStore[] }> {
  const url = await postgres.createDatabase(`store_${process.pid}_${++databases}`);
  const made = await Promise.all(Array.from({ length: count }, () => openPostgresStore({ url, leaseMs })));
  opened.push(...made);
  return { url, stores: made };
}

describe('the Postgres state store', () => {
  it('migrates once when eight instances open a fresh database at the same moment', async () => {
    const { url } = await stores(8);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT version FROM forge_migrations ORDER BY version');
      expect(rows).toEqual([{ version: 1 }]);
    } finally {
      await client.end();
    }
  });

  it('hands each due time to exactly one of three instances checking at once', async () => {
    const { stores: [a, b, c] } = await stores(3);
    const entry = { key: 'runtime:beat', signature: 'every-1s', schedule: parseSchedule('@every 1s') };
    const start = new Date('2030-01-01T00:00:00Z');
    for (const store of [a, b, c]) await store.schedules.claimDue([entry], start); // first due at 00:00:01
    const claimed: string[] = [];
    for (let second = 1; second <= 10; second++) {
      const now = new Date(start.getTime() + second * 1000);
      const results = await Promise.all([a, b, c].map((s) => s.schedules.claimDue([entry], now)));
      for (const result of results) claimed.push(...result.map((r) => r.scheduledFor.toISOString()));
    }
    expect(claimed.sort()).toEqual(Array.from({ length: 10 }, (_, i) => new Date(start.getTime() + (i + 1) * 1000).toISOString()));
  });

  it('keeps the schedule limit when twenty schedule_set calls race for the last places', async () => {
    const { stores: [a, b] } = await stores(2);
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).schedules.saveTask({ id: `s${i}`, cron: '@hourly', task: 't' }, 5)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused.every((r) => r.reason.code === 'FORGE_SCHEDULE_LIMIT')).toBe(true);
    expect(await a.schedules.runtimeTasks()).toHaveLength(5);
  });

  it('refuses to save a turn whose hold expired and was taken by another instance', async () => {
    const { url, stores: [a, b] } = await stores(2, 300);
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const slow = a.conversations.withTurn('ctx', async (session) => {
      session.messages.push({ role: 'user', content: 'from a' });
      await blocked;
    });
    // a's hold lapses as if it had stopped renewing (its renewals no longer match), and b takes the conversation.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await new Promise((resolve) => setTimeout(resolve, 100));
    await client.query(`UPDATE forge_conversations SET turn_owner = 'lapsed', turn_expires = now() - interval '1 second' WHERE id = 'ctx'`);
    await client.end();
    await b.conversations.withTurn('ctx', async (session) => void session.messages.push({ role: 'user', content: 'from b' }));
    release();
    await expect(slow).rejects.toBeInstanceOf(StateConflictError);
    expect((await a.conversations.read('ctx')).messages.map((m) => m.content)).toEqual(['from b']);
  });

  it('delivers a cancel request from one instance to the others', async () => {
    const { stores: [a, b] } = await stores(2);
    const heard = new Promise<string>((resolve) => b.cancels.subscribe(resolve));
    await a.cancels.request('task-42');
    expect(await heard).toBe('task-42');
  });

  it('fails a working task whose lease holder stopped renewing, and leaves a finished one alone', async () => {
    const { stores: [a, b] } = await stores(2, 300);
    const task = (id: string, state: TaskState) => Task.fromJSON({ id, contextId: 'ctx', status: { state: TaskState[state], timestamp: new Date().toISOString() } });
    await a.tasks.save(task('working', TaskState.TASK_STATE_WORKING));
    await a.tasks.save(task('done', TaskState.TASK_STATE_COMPLETED));
    const held = await a.tasks.hold('working');
    await a.tasks.hold('done');
    a.tasks.stopReaper();
    b.tasks.stopReaper();
    expect(await b.tasks.reapExpired()).toEqual([]); // renewed: still held
    await a.close(); // the holder dies: nothing renews
    opened.splice(opened.indexOf(a), 1);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await b.tasks.reapExpired()).toEqual(['working']);
    expect((await b.tasks.load('working'))!.status!.state).toBe(TaskState.TASK_STATE_FAILED);
    expect((await b.tasks.load('done'))!.status!.state).toBe(TaskState.TASK_STATE_COMPLETED);
    void held;
  });
});
