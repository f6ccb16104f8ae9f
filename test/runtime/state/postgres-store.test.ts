/**
 * The Postgres state store itself, several instances on one real database
 * (as replicas would be): migrations when many start at once, due times
 * claimed once, the schedule limit under a race, compare-and-swap on a
 * conversation whose hold was taken over, cancel requests between
 * instances, and leases of dead holders reaped. Then connections cut the
 * way a restart or failover cuts them: the process goes on, the broken
 * connection is not reused, and the LISTEN connection comes back at one
 * attempt per second, its forged-tool subscribers looking again.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSchedule } from '../../../runtime/scheduler/schedule-expression.ts';
import { Scheduler } from '../../../runtime/scheduler/scheduler.ts';
import { PostgresConversations } from '../../../runtime/state/postgres-conversations.ts';
import { PostgresForged } from '../../../runtime/state/postgres-forged.ts';
import { PostgresNotifications } from '../../../runtime/state/postgres-notifications.ts';
import { MIGRATION_LOCK, MIGRATIONS } from '../../../runtime/state/postgres-migrations.ts';
import { openPool } from '../../../runtime/state/pool-client.ts';
import { failTask } from '../../../runtime/state/fail-task.ts';
import { PostgresTasks } from '../../../runtime/state/postgres-tasks.ts';
import { openPostgresStore, type PostgresStateStore, type PostgresStoreOptions } from '../../../runtime/state/postgres-store.ts';
import { StateConflictError, type Session } from '../../../runtime/state/store.ts';
import { keepLatest } from '../../../runtime/agent/agent.ts';
import { StateUnavailableError } from '../../../runtime/store-unavailable.ts';
import type { ForgedRecord } from '../../../runtime/tools/emergent/forged-store.ts';
import { Task, TaskState } from '../../../runtime/vendor/a2a.ts';
import { waitUntil } from '../../helpers/fleet.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';
import { listRequest, pagesWhileTasksArrive } from '../../helpers/task-paging.ts';
import { relay } from '../../helpers/tcp-relay.ts';

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

async function stores(count: number, leaseMs = 3000, poolSize?: number): Promise<{ url: string; stores: PostgresStateStore[] }> {
  const url = await postgres.createDatabase(`store_${process.pid}_${++databases}`);
  const made = await Promise.all(Array.from({ length: count }, () => openPostgresStore({ url, leaseMs, poolSize })));
  opened.push(...made);
  return { url, stores: made };
}

// Runs beside the block below (which waits on leases, timeouts and cut connections), its own tests in order.
describe('the Postgres state store', { concurrent: true }, () => {
  it.sequential('migrates once when eight instances open a fresh database at the same moment', async () => {
    const { url } = await stores(8);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT version FROM forge_migrations ORDER BY version');
      expect(rows).toEqual(MIGRATIONS.map((_, i) => ({ version: i + 1 })));
      // The last one ran: cancel requests have their table.
      expect((await client.query("SELECT to_regclass('forge_task_cancels') AS t")).rows).toEqual([{ t: 'forge_task_cancels' }]);
    } finally {
      await client.end();
    }
  });

  it.sequential('opens a database a newer Forge migrated further (a rollback), says so, and works', async () => {
    const { url } = await stores(1);
    await asAdmin(url, 'INSERT INTO forge_migrations (version) VALUES ($1)', [MIGRATIONS.length + 5]);
    const warnings: string[] = [];
    const store = await openPostgresStore({ url, leaseMs: 3000, log: { debug() {}, info() {}, warn: (message: string) => void warnings.push(message) } });
    opened.push(store);
    expect(warnings).toEqual([expect.stringContaining(`its schema is version ${MIGRATIONS.length + 5}, from a newer Forge; this one knows ${MIGRATIONS.length}`)]);
    await store.ping();
  });

  it("counts the webhooks of tasks finished before the final-state migration as having had their final state, and no others", async () => {
    // A database as a Forge before the migration left it: a finished task and a working one, each with a webhook.
    const url = await postgres.createDatabase(`store_${process.pid}_${++databases}`);
    const before = MIGRATIONS.findIndex((migration) => migration.includes('ADD COLUMN final_settled'));
    await asAdmin(url, 'CREATE TABLE forge_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    for (let version = 1; version <= before; version++) await asAdmin(url, `${MIGRATIONS[version - 1]}; INSERT INTO forge_migrations (version) VALUES (${version})`);
    await asAdmin(url, "INSERT INTO forge_tasks (id, context_id, state, data) VALUES ('done', 'c', 3, '{}'), ('working', 'c', 2, '{}')");
    await asAdmin(url, "INSERT INTO forge_push_configs (task_id, id, wire_version, config) VALUES ('done', 'h', '1.0', '{}'), ('working', 'h', '1.0', '{}')");
    opened.push(await openPostgresStore({ url, leaseMs: 3000 }));
    expect(await asAdmin(url, 'SELECT task_id, final_settled FROM forge_push_configs ORDER BY task_id')).toEqual([
      { task_id: 'done', final_settled: true },
      { task_id: 'working', final_settled: false },
    ]);
  });

  it.sequential("migrates a table in use without holding up other replicas' statements on it behind a long transaction, then opens when that ends", async () => {
    // A database as a Forge with only the first four migrations left it, with a task in it.
    const url = await postgres.createDatabase(`store_${process.pid}_${++databases}`);
    await asAdmin(url, 'CREATE TABLE forge_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    for (let version = 1; version <= 4; version++) await asAdmin(url, `${MIGRATIONS[version - 1]}; INSERT INTO forge_migrations (version) VALUES (${version})`);
    await asAdmin(url, "INSERT INTO forge_tasks (id, context_id, state, data) VALUES ('t', 'c', 2, '{}')");
    const reader = new pg.Client({ connectionString: url }); // pg_dump, or a report: it reads forge_tasks in one long transaction
    await reader.connect();
    const replica = new pg.Client({ connectionString: url, statement_timeout: 5000 } as pg.ClientConfig); // one not upgraded yet
    await replica.connect();
    try {
      await reader.query('BEGIN');
      await reader.query('SELECT count(*) FROM forge_tasks');
      let open = false;
      const opening = openPostgresStore({ url, leaseMs: 3000 }).then((store) => ((open = true), opened.push(store), store));
      await new Promise((resolve) => setTimeout(resolve, 1000));
      // The migration waits for the reader; the other replica's statements do not wait for the migration.
      await replica.query("UPDATE forge_tasks SET data = '{\"n\": 1}' WHERE id = 't'");
      expect((await replica.query("SELECT data FROM forge_tasks WHERE id = 't'")).rows).toEqual([{ data: { n: 1 } }]);
      expect(open).toBe(false);
      await reader.query('COMMIT');
      await (await opening).ping();
      expect((await asAdmin<{ version: number }>(url, 'SELECT max(version) AS version FROM forge_migrations'))[0].version).toBe(MIGRATIONS.length);
    } finally {
      await reader.end();
      await replica.end();
    }
  });

  it.sequential('gives up a migration behind a transaction that outlasts its deadline: the store does not open, says why, changes nothing, and leaves no connection or lock behind', async () => {
    const url = await postgres.createDatabase(`store_${process.pid}_${++databases}`);
    await asAdmin(url, 'CREATE TABLE forge_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    for (let version = 1; version <= 4; version++) await asAdmin(url, `${MIGRATIONS[version - 1]}; INSERT INTO forge_migrations (version) VALUES (${version})`);
    const reader = new pg.Client({ connectionString: url });
    await reader.connect();
    try {
      await reader.query('BEGIN');
      await reader.query('SELECT count(*) FROM forge_tasks');
      const started = Date.now();
      // Past its first 2 s wait and the second's start: it gives up after trying again, not at once.
      await expect(openPostgresStore({ url, leaseMs: 3000, migrationDeadlineMs: 3000 })).rejects.toThrow(/schema migration 5 waited [45] s for a table another session kept locked \(a long transaction: pg_dump, a report\?\); it is tried again at the next start/);
      expect(Date.now() - started).toBeGreaterThanOrEqual(4000);
      expect((await asAdmin<{ version: number }>(url, 'SELECT max(version) AS version FROM forge_migrations'))[0].version).toBe(4);
      expect(await asAdmin(url, "SELECT 1 FROM information_schema.columns WHERE table_name = 'forge_tasks' AND column_name = 'writer'")).toEqual([]);
      // A backend leaves pg_stat_activity a moment after its client hung up.
      await waitUntil(async () => ((await asAdmin(url, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'forge-%'")).length === 0 ? true : undefined), 5000, 'the connections closed');
      await reader.query('COMMIT');
      // The advisory lock went with its connection: the next start migrates.
      const store = await openPostgresStore({ url, leaseMs: 3000 });
      opened.push(store);
      expect((await asAdmin<{ version: number }>(url, 'SELECT max(version) AS version FROM forge_migrations'))[0].version).toBe(MIGRATIONS.length);
    } finally {
      await reader.end();
    }
  });

  it.sequential('hands each due time to exactly one of three instances checking at once', async () => {
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

  /** A scheduler on `records` with a clock the test moves; what it fired, by schedule id. */
  function scheduler(records: PostgresStateStore['schedules'], clock: { now: Date }) {
    const fired: string[] = [];
    const made = new Scheduler({ workDir: '/nonexistent', store: records, clock: () => clock.now, onFire: (task) => void fired.push(task.id) });
    return { fired, tick: async () => (await made.tick(), await made.idle()) };
  }

  it.sequential('fires a schedule deleted and set again (same id, same expression) before the next check', async () => {
    const { stores: [a] } = await stores(1);
    const clock = { now: new Date('2030-01-01T00:00:00Z') };
    const one = scheduler(a.schedules, clock);
    await a.schedules.saveTask({ id: 'beat', cron: '@every 1m', task: 't' }, 100);
    await one.tick(); // first due at 00:01
    await a.schedules.deleteTask('beat');
    await a.schedules.saveTask({ id: 'beat', cron: '@every 1m', task: 't' }, 100);
    clock.now = new Date('2030-01-01T00:00:30Z');
    await one.tick(); // seen again: due at its next time after now (00:01:30)
    clock.now = new Date('2030-01-01T00:02:00Z');
    await one.tick();
    expect(one.fired).toEqual(['beat']);
  });

  it.sequential('fires a schedule another instance deleted and set again between two checks of this one', async () => {
    const { stores: [a, b] } = await stores(2);
    const clock = { now: new Date('2030-01-01T00:00:00Z') };
    const onB = scheduler(b.schedules, clock);
    await a.schedules.saveTask({ id: 'beat', cron: '@every 1m', task: 't' }, 100);
    await onB.tick();
    await a.schedules.deleteTask('beat');
    await a.schedules.saveTask({ id: 'beat', cron: '@every 1m', task: 't' }, 100);
    for (const at of ['00:00:30', '00:02:00', '00:03:00']) {
      clock.now = new Date(`2030-01-01T${at}Z`);
      await onB.tick();
    }
    expect(onB.fired).toEqual(['beat', 'beat']);
  });

  it.sequential('does not fire a schedule set again at the due time a check put back for its deleted predecessor', async () => {
    const { stores: [a, b] } = await stores(2);
    const clock = { now: new Date('2030-01-01T00:00:00Z') };
    await a.schedules.saveTask({ id: 'beat', cron: '@every 1m', task: 't' }, 100);
    // The race: this check reads the schedule, another replica deletes it, then the check makes sure of its due row.
    const racing = Object.assign(Object.create(a.schedules) as PostgresStateStore['schedules'], {
      runtimeTasks: async () => {
        const tasks = await a.schedules.runtimeTasks();
        await b.schedules.deleteTask('beat');
        return tasks;
      },
    });
    await scheduler(racing, clock).tick(); // the due row is back, due at 00:01
    clock.now = new Date('2030-01-01T01:00:00Z');
    await b.schedules.saveTask({ id: 'beat', cron: '@every 1m', task: 't' }, 100);
    const one = scheduler(a.schedules, clock);
    await one.tick(); // a new schedule: first due a minute from now, not at the old 00:01
    expect(one.fired).toEqual([]);
    clock.now = new Date('2030-01-01T01:01:00Z');
    await one.tick();
    expect(one.fired).toEqual(['beat']);
  });

  it.sequential('lists each task once, newest first, while newer tasks arrive between pages', async () => {
    const { stores: [a] } = await stores(1);
    expect(await pagesWhileTasksArrive(a.tasks)).toEqual([['e', 'd', 'c'], ['b', 'a']]);
  });

  it.sequential('keeps the schedule limit when twenty schedule_set calls race for the last places', async () => {
    const { stores: [a, b] } = await stores(2);
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).schedules.saveTask({ id: `s${i}`, cron: '@hourly', task: 't' }, 5)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(refused.every((r) => r.reason.code === 'FORGE_SCHEDULE_LIMIT')).toBe(true);
    expect(await a.schedules.runtimeTasks()).toHaveLength(5);
  });

  it.sequential('refuses to save a turn whose hold expired and was taken by another instance', async () => {
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

  it.sequential('delivers a cancel request from one instance to the others', async () => {
    const { stores: [a, b] } = await stores(2);
    const heard = new Promise<string>((resolve) => b.cancels.subscribe(resolve));
    await a.cancels.request('task-42');
    expect(await heard).toBe('task-42');
  });

  it.sequential('keeps text Postgres cannot hold (NUL, U+0001, half a surrogate pair) as it was, in ids, values and keys: conversations, tasks, schedules and cancel requests', async () => {
    const { stores: [a, b] } = await stores(2);
    const texts = ['nul \0 here', 'U+0001 \u0001 and \u00010, written as a NUL is', 'half a pair \ud800 and \udc00', '\\u0000 as six characters', 'a pair 😀'];
    const id = 'conversation \0 \u0001 \ud800';
    await a.conversations.withTurn(id, async (session) => {
      for (const content of texts) session.messages.push({ role: 'user', content });
      session.messages.push({ role: 'assistant', content: '', toolCalls: [{ id: 'call \0', name: 'echo', arguments: { ['key \0 \udfff']: texts[2] } }] });
    });
    // Another instance reads what was written, and its turn's compare-and-swap finds the version it read.
    const read = await b.conversations.read(id);
    expect(read.messages.map((m) => m.content)).toEqual([...texts, '']);
    expect(read.messages.at(-1)).toEqual({ role: 'assistant', content: '', toolCalls: [{ id: 'call \0', name: 'echo', arguments: { ['key \0 \udfff']: texts[2] } }] });
    await b.conversations.withTurn(id, async (session) => void session.messages.push({ role: 'assistant', content: texts[0] }));
    expect((await a.conversations.read(id)).messages.map((m) => m.content)).toEqual([...texts, '', texts[0]]);
    // A conversation whose id differs only where the escaping works is another conversation.
    expect((await a.conversations.read('conversation \u00010 \u0001 \ud800')).messages).toEqual([]);

    const taskId = 'task \0 \udfff';
    const parts = texts.map((value) => ({ content: { $case: 'text' as const, value }, metadata: undefined, filename: '', mediaType: 'text/plain' }));
    const message = { messageId: 'm \0', contextId: id, taskId, role: 1, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
    await a.tasks.save({ id: taskId, contextId: id, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [message], metadata: undefined });
    const loaded = await b.tasks.load(taskId);
    expect(loaded?.contextId).toBe(id);
    expect(loaded?.history[0].parts.map((p) => (p.content?.$case === 'text' ? p.content.value : undefined))).toEqual(texts);
    const listed = await b.tasks.list({ ...listRequest(), contextId: id });
    expect(listed.tasks.map((t) => t.id)).toEqual([taskId]);

    await a.schedules.saveTask({ id: 'beat \0', cron: '@every 1m', task: texts.join(' | ') }, 10);
    expect((await b.schedules.runtimeTasks()).map((t) => [t.id, t.task])).toEqual([['beat \0', texts.join(' | ')]]);
    await a.schedules.appendHistory({ id: 'beat \0', source: 'runtime', scheduled_for: '2030-01-01T00:00:00Z', fired_at: '2030-01-01T00:00:00Z', duration_ms: 1, status: 'failed', error: texts[2] });
    expect((await b.schedules.history({ id: 'beat \0' })).map((r) => r.error)).toEqual([texts[2]]);

    const heard = new Promise<string>((resolve) => b.cancels.subscribe(resolve));
    await a.cancels.request(taskId);
    expect(await heard).toBe(taskId);
  });

  it.sequential('keeps a cancel request only while a turn holds the task, finds it at the renewal, and lets it go with the lease', async () => {
    const { url, stores: [runner, other] } = await stores(2, 300);
    const found: string[] = [];
    runner.cancels.subscribe((taskId) => found.push(taskId));
    const kept = async () => (await asAdmin<{ task_id: string }>(url, 'SELECT task_id FROM forge_task_cancels ORDER BY task_id')).map((r) => r.task_id);

    // No turn runs it: nothing to stop, nothing kept (the notification still goes out).
    await other.cancels.request('idle');
    expect(await kept()).toEqual([]);

    const lease = await runner.tasks.hold('busy');
    await other.cancels.request('busy');
    expect(await kept()).toEqual(['busy']);
    // Heard by notification, then again at each renewal (every 100 ms here) while the turn goes on.
    for (let i = 0; i < 100 && found.filter((id) => id === 'busy').length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(found.filter((id) => id === 'busy').length).toBeGreaterThanOrEqual(3);
    await lease.release();
    expect(await kept()).toEqual([]);

    // A lease taken over (its holder died before the reaper came) starts without the earlier turn's request.
    await runner.tasks.hold('again');
    await other.cancels.request('again');
    await other.tasks.hold('again');
    expect(await kept()).toEqual([]);

    // And one the reaper takes goes with it. The lease expires only once the request is kept: expired from the
    // start, a replica's own reaper (every third of the lease) could take it before the request, on a loaded host.
    await asAdmin(url, "INSERT INTO forge_task_leases (task_id, owner, expires_at) VALUES ('dead', 'gone', now() + interval '1 hour')");
    await other.cancels.request('dead');
    expect(await kept()).toEqual(['dead']);
    await asAdmin(url, "UPDATE forge_task_leases SET expires_at = now() - interval '1 second' WHERE task_id = 'dead'");
    await runner.tasks.reapExpired();
    expect(await kept()).toEqual([]);
  });

  /** A store running turns (told of the cancels it finds), and another replica that saves tasks canceled, as one that got a cancel does. */
  async function cancelledElsewhere(leaseMs: number) {
    const { stores: [runner, other] } = await stores(2, leaseMs);
    const found: string[] = [];
    runner.cancels.subscribe((taskId) => found.push(taskId));
    const cancel = (id: string) => other.tasks.save(Task.fromJSON({ id, contextId: 'ctx', status: { state: TaskState[TaskState.TASK_STATE_CANCELED], timestamp: new Date().toISOString() } }));
    return { runner, found, cancel };
  }

  it.sequential('finds a cancel handled elsewhere before its turn took the lease, whose notification it missed, as it takes the lease', async () => {
    // A lease whose first renewal comes after the test: the hold itself must find it.
    const { runner, found, cancel } = await cancelledElsewhere(60_000);
    await cancel('early'); // no lease existed to keep the request under
    const lease = await runner.tasks.hold('early');
    await waitUntil(() => (found.includes('early') ? true : undefined), 5_000, 'the cancel found by the hold');
    await lease.release();
  });

  it.sequential('finds at the renewal a task canceled elsewhere whose request was not kept and whose notification it missed', async () => {
    const { runner, found, cancel } = await cancelledElsewhere(300);
    const lease = await runner.tasks.hold('later');
    await cancel('later');
    await waitUntil(() => (found.includes('later') ? true : undefined), 5_000, 'the cancel found at a renewal');
    await lease.release();
  });

  it.sequential('fails a working task whose lease holder stopped renewing, and leaves a finished one alone', async () => {
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

/** Runs `sql` on a connection of its own (not the store's). */
/** Sends a cancel of 'back' every 250 ms, for 15 s at most, until `heard` has it: a LISTEN connection is back. */
async function expectHeardAgain(url: string, heard: readonly string[]): Promise<void> {
  for (let i = 0; i < 60 && !heard.includes('back'); i++) {
    await asAdmin(url, "SELECT pg_notify('forge_cancel', 'back')");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  expect(heard).toContain('back');
}

async function asAdmin<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

describe('the Postgres state store when connections drop', { concurrent: true }, () => {
  /** A store whose connections go through a relay that the test can cut, and the database's URL. */
  async function storeBehindRelay(options: Partial<Pick<PostgresStoreOptions, 'connectTimeoutMs' | 'queryTimeoutMs' | 'leaseMs'>> = {}) {
    const { url } = await stores(1);
    const gate = await relay(postgres.port);
    const warnings: string[] = [];
    const store = await openPostgresStore({ url: url.replace(`:${postgres.port}/`, `:${gate.port}/`), leaseMs: 3000, log: { debug() {}, info() {}, warn: (text) => void warnings.push(text) }, ...options });
    opened.push(store);
    return { url, gate, store, warnings };
  }
  const taskIn = (state: TaskState, id: string) => Task.fromJSON({ id, contextId: 'ctx', status: { state: TaskState[state], timestamp: new Date().toISOString() } });
  const storedState = async (url: string, id: string) => (await asAdmin<{ state: string }>(url, 'SELECT data->\'status\'->>\'state\' AS state FROM forge_tasks WHERE id = $1', [id]))[0]?.state;
  const leaseOwners = async (url: string, id: string) => (await asAdmin<{ owner: string }>(url, 'SELECT owner FROM forge_task_leases WHERE task_id = $1', [id])).map((r) => r.owner);

  it('fails a schedule_set whose connection is cut mid-transaction, goes on, and never reuses the cut connection', async () => {
    const { url, stores: [store] } = await stores(1, 3000, 1);
    // Hold the table so schedule_set stops inside its transaction, with its client checked out of the pool.
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE forge_schedules IN ACCESS EXCLUSIVE MODE');
      const saving = store.schedules.saveTask({ id: 'cut', cron: '@hourly', task: 't' }, 10).then(
        () => 'saved',
        (err: Error) => err.message,
      );
      let waiting: { pid: number }[] = [];
      for (let i = 0; i < 100 && !waiting.length; i++) {
        waiting = await asAdmin<{ pid: number }>(url, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
        if (!waiting.length) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(waiting).toHaveLength(1);
      await asAdmin(url, 'SELECT pg_terminate_backend($1)', [waiting[0].pid]);
      expect(await saving).toMatch(/terminat/i);
    } finally {
      await locker.end();
    }
    // One client in the pool: had the cut one gone back, each of these would fail.
    for (let i = 0; i < 3; i++) expect((await store.schedules.saveTask({ id: `after-${i}`, cron: '@hourly', task: 't' }, 10)).created).toBe(true);
  });

  it('keeps claiming due times while every connection it has is cut, again and again', async () => {
    const { url, stores: [store] } = await stores(1, 3000, 2);
    const entry = { key: 'runtime:beat', signature: 'every-1s', schedule: parseSchedule('@every 1s') };
    const start = new Date('2030-01-01T00:00:00Z');
    await store.schedules.claimDue([entry], start);
    let cutting = true;
    const cutter = (async () => {
      while (cutting) {
        // With a timeout, pg_terminate_backend returns once the backend has exited, not when it was signalled:
        // when the cutter stops, no cut is still on its way to land in the claim after the storm.
        await asAdmin(url, `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name LIKE 'forge-%'`);
      }
    })();
    // At least 40 claims, and on until some cuts have landed inside one: a claim takes a few ms and the
    // cutter's own connect can take longer than 40 of them on a loaded machine.
    let failures = 0;
    const deadline = Date.now() + 20_000;
    let second = 1;
    for (; second <= 40 || (failures < 3 && Date.now() < deadline); second++) {
      await store.schedules.claimDue([entry], new Date(start.getTime() + second * 1000)).catch(() => failures++);
    }
    cutting = false;
    await cutter;
    expect(failures).toBeGreaterThanOrEqual(3); // the cuts did land inside claims
    // The last cut's FATAL is in the pool's sockets by now; one turn of the event loop lets the pool hear it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    // After the storm, the store claims again on live connections.
    const after = await store.schedules.claimDue([entry], new Date(start.getTime() + (second + 60) * 1000));
    expect(after.map((c) => c.scheduledFor.getTime() > start.getTime())).toEqual([true]);
  }, 30_000);

  it('keeps its LISTEN connection and the other listeners when one listener throws', async () => {
    const url = await postgres.createDatabase(`listen_${process.pid}_${++databases}`);
    const warnings: string[] = [];
    const log = { debug() {}, info() {}, warn: (message: string) => void warnings.push(message) };
    const notifications = new PostgresNotifications(() => new pg.Client({ connectionString: url }), log);
    try {
      await notifications.start();
      const heard: string[] = [];
      notifications.on('forge_cancel', () => {
        throw new Error('a listener of its own mind');
      });
      notifications.on('forge_cancel', (payload) => heard.push(payload));
      for (const payload of ['one', 'two']) await asAdmin(url, 'SELECT pg_notify($1, $2)', ['forge_cancel', payload]);
      for (let i = 0; i < 250 && heard.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(heard).toEqual(['one', 'two']);
      expect(warnings).toEqual([]);
    } finally {
      await notifications.close();
    }
  });

  it('keeps a task saved while the store is away, loads it from there, and saves its latest state when the store is back (the A2A SDK stops saving a task after one failed save)', async () => {
    const { url, gate, store, warnings } = await storeBehindRelay();
    const task = (state: string, id = 'through-a-cut') => Task.fromJSON({ id, contextId: 'ctx', status: { state, timestamp: new Date().toISOString() } });
    try {
      gate.down();
      // Past the 3 s a statement is tried again for: each save returns, and the latest state is what loads.
      await store.tasks.save(task(TaskState[TaskState.TASK_STATE_WORKING]));
      await new Promise((resolve) => setTimeout(resolve, 3500));
      await store.tasks.save(task(TaskState[TaskState.TASK_STATE_INPUT_REQUIRED]));
      expect((await store.tasks.load('through-a-cut'))?.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(await storedState(url, 'through-a-cut')).toBeUndefined();
      gate.up();
      await waitUntil(async () => ((await storedState(url, 'through-a-cut')) === TaskState[TaskState.TASK_STATE_INPUT_REQUIRED] ? true : undefined), 10_000, 'the kept state saved');
      // Saved: the next save goes straight to the store.
      await waitUntil(() => ((store.tasks as unknown as { kept: Map<string, unknown> }).kept.size === 0 ? true : undefined), 5_000, 'the writer done');
      await store.tasks.save(task(TaskState[TaskState.TASK_STATE_COMPLETED]));
      expect(await storedState(url, 'through-a-cut')).toBe(TaskState[TaskState.TASK_STATE_COMPLETED]);

      // A task another replica finished otherwise meanwhile (its reaper failed it) stays as the fleet saw it finish.
      gate.down();
      await store.tasks.save(task(TaskState[TaskState.TASK_STATE_WORKING], 'given-up'));
      const direct = await openPostgresStore({ url, leaseMs: 3000 });
      opened.push(direct);
      await direct.tasks.save(task(TaskState[TaskState.TASK_STATE_FAILED], 'given-up'));
      gate.up();
      await waitUntil(() => (warnings.some((w) => w.includes('task given-up changed otherwise')) ? true : undefined), 10_000, 'the kept state given up');
      expect(await storedState(url, 'given-up')).toBe(TaskState[TaskState.TASK_STATE_FAILED]);

      // A load is tried again across a moment without a connection.
      gate.down();
      const loading = store.tasks.load('through-a-cut');
      await new Promise((resolve) => setTimeout(resolve, 400));
      gate.up();
      expect((await loading)?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    } finally {
      await gate.close();
    }
  }, 30_000);

  it('has Postgres end the statements it stopped waiting for (past their timeout), instead of leaving them queued on a lock they would then hold', async () => {
    const { url } = await stores(0);
    const store = await openPostgresStore({ url, leaseMs: 3000, queryTimeoutMs: 500 });
    opened.push(store);
    const locker = new pg.Client({ connectionString: url }); // a long migration by hand, a VACUUM FULL
    await locker.connect();
    const waiting = async () => (await asAdmin<{ pid: number }>(url, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'forge-%' AND wait_event_type = 'Lock'")).length;
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE forge_tasks IN ACCESS EXCLUSIVE MODE');
      await expect(store.tasks.load('behind-the-lock')).rejects.toThrow(/Query read timeout/);
      // Each try's connection was dropped; Postgres notices within its 2 s check and ends the statement.
      await waitUntil(async () => ((await waiting()) === 0 ? true : undefined), 6000, 'the abandoned statements ended');
    } finally {
      await locker.query('ROLLBACK').catch(() => {});
      await locker.end();
    }
  });

  it("asks Postgres to check for a gone client every 2 s on each connection, unless the role or database sets it (behind a pooler)", async () => {
    const { url } = await stores(0);
    const interval = async () => {
      const pool = openPool({ connectionString: url });
      try {
        return (await pool.query<{ v: string }>("SELECT current_setting('client_connection_check_interval') AS v")).rows[0].v;
      } finally {
        await pool.end();
      }
    };
    expect(await interval()).toBe('2s');
    await asAdmin(url, `ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET client_connection_check_interval = '5s'`);
    expect(await interval()).toBe('5s');
  });

  it("keeps a turn's lease, renewed, until the last state it kept while the store was away is saved, then lets it go", async () => {
    const { url, gate, store } = await storeBehindRelay();
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    const id = 'kept-under-lease';
    const leaseExpiresIn = async () => (await asAdmin<{ owner: string; ms: number }>(url, 'SELECT owner, (extract(epoch FROM expires_at - now()) * 1000)::float8 AS ms FROM forge_task_leases WHERE task_id = $1', [id]))[0];
    try {
      await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, id));
      const lease = await store.tasks.hold(id);
      const [owner] = await leaseOwners(url, id);
      gate.down();
      await store.tasks.save(taskIn(TaskState.TASK_STATE_COMPLETED, id)); // kept at once: its turn holds the lease
      await lease.release(TaskState.TASK_STATE_COMPLETED);
      // The store is back, but the kept state cannot land yet: its row is locked (a slow transaction).
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM forge_tasks WHERE id = $1 FOR UPDATE', [id]);
      gate.up();
      await new Promise((resolve) => setTimeout(resolve, 4000)); // more than a lease
      expect(await storedState(url, id)).toBe(TaskState[TaskState.TASK_STATE_WORKING]);
      const held = await leaseExpiresIn();
      expect(held?.owner).toBe(owner);
      expect(held.ms).toBeGreaterThan(0); // renewed, so no reaper fails a task whose answer is on its way
      await locker.query('COMMIT');
      await waitUntil(async () => ((await storedState(url, id)) === TaskState[TaskState.TASK_STATE_COMPLETED] ? true : undefined), 10_000, 'the kept state saved');
      await waitUntil(async () => ((await leaseExpiresIn()) === undefined ? true : undefined), 10_000, 'the lease let go');
    } finally {
      await locker.end();
      await gate.close();
    }
  });

  it('loads a task whose lease it holds as it last saved it while the store is away, without waiting for the store', async () => {
    const { gate, store } = await storeBehindRelay();
    try {
      await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'held-here'));
      const lease = await store.tasks.hold('held-here');
      gate.down();
      const started = Date.now();
      expect((await store.tasks.load('held-here'))?.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      // Not the 3 s another load is tried again for: the SDK loads before each of the task's events.
      expect(Date.now() - started).toBeLessThan(2000);
      await expect(store.tasks.load('not-held')).rejects.toThrow();
      gate.up();
      await lease.release();
    } finally {
      await gate.close();
    }
  });

  it('loads a new task, whose lease found it not stored and which was not saved since, as no task while the store is away, without waiting for the store', async () => {
    const { gate, store } = await storeBehindRelay();
    try {
      const lease = await store.tasks.hold('new-here');
      gate.down();
      const started = Date.now();
      // The SDK's load before a new task's first event: a failure would end its handling of the request.
      await expect(store.tasks.load('new-here')).resolves.toBeUndefined();
      expect(Date.now() - started).toBeLessThan(2000);
      gate.up();
      await lease.release();
    } finally {
      await gate.close();
    }
  });

  /**
   * Tasks on a pool whose lease statements wait for the test, and whose loads find the store away: the
   * SDK's first load of a new task fails while its turn is still taking the lease.
   */
  async function tasksTakingLease() {
    // A store opened on the database first: it migrates it.
    const { url } = await stores(1);
    const pool = openPool({ connectionString: url });
    let letLeaseThrough!: (ok: boolean) => void;
    const leaseGoes = new Promise<boolean>((resolve) => (letLeaseThrough = resolve));
    const racing = {
      query: async (...args: Parameters<pg.Pool['query']>) => {
        const text = String(typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text);
        if (text.startsWith('SELECT data FROM forge_tasks')) throw new StateUnavailableError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
        if (text.includes('forge_task_leases') && text.includes('INSERT')) {
          if (!(await leaseGoes)) throw new StateUnavailableError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
        }
        return (pool.query as (...a: unknown[]) => Promise<unknown>)(...args);
      },
    } as unknown as pg.Pool;
    const tasks = new PostgresTasks(racing, 'racer', 3000);
    return { tasks, pool, letLeaseThrough };
  }

  it('answers a load that finds the store away while its turn is still taking the lease once the lease is taken, as what the lease found', async () => {
    const { tasks, pool, letLeaseThrough } = await tasksTakingLease();
    try {
      const holding = tasks.hold('taking');
      const loading = tasks.load('taking');
      const started = Date.now();
      letLeaseThrough(true);
      const lease = await holding;
      await expect(loading).resolves.toBeUndefined();
      // Not the 3 s a load no turn here knows is tried again for.
      expect(Date.now() - started).toBeLessThan(2000);
      await lease.release();
    } finally {
      await tasks.close();
      await pool.end();
    }
  });

  it('tries a load again, as any other, when its turn could not take the lease (the turn ends failed, and runs nothing)', async () => {
    const { tasks, pool, letLeaseThrough } = await tasksTakingLease();
    try {
      const holding = tasks.hold('not-taken');
      const loading = tasks.load('not-taken');
      letLeaseThrough(false);
      await expect(holding).rejects.toThrow();
      await expect(loading).rejects.toThrow(StateUnavailableError);
    } finally {
      await tasks.close();
      await pool.end();
    }
  });

  it("lets an earlier turn's late release (its last state was kept while the store was away) go of its own lease only, not the next turn's", async () => {
    const { url, gate, store } = await storeBehindRelay();
    try {
      await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'two-turns'));
      const first = await store.tasks.hold('two-turns');
      gate.down();
      await store.tasks.save(taskIn(TaskState.TASK_STATE_INPUT_REQUIRED, 'two-turns'));
      await first.release(TaskState.TASK_STATE_INPUT_REQUIRED); // the store is away: it lets go in the background
      gate.up();
      // The approval comes at once, to the same replica: the next turn holds the task.
      let lost = false;
      const second = await store.tasks.hold('two-turns', () => (lost = true));
      await waitUntil(async () => ((await storedState(url, 'two-turns')) === TaskState[TaskState.TASK_STATE_INPUT_REQUIRED] ? true : undefined), 10_000, 'the kept state saved');
      // Time for the first turn's release to run, and for the second's lease to be renewed (a third of 3 s).
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(await leaseOwners(url, 'two-turns')).toHaveLength(1);
      expect(lost).toBe(false);
      await second.release();
      expect(await leaseOwners(url, 'two-turns')).toEqual([]);
    } finally {
      await gate.close();
    }
  });

  it('keeps a task canceled through another replica canceled, though the replica running it loaded it across a dropped connection', async () => {
    const { url, gate, store } = await storeBehindRelay();
    const elsewhere = await openPostgresStore({ url, leaseMs: 3000 });
    opened.push(elsewhere);
    try {
      await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'canceled-elsewhere'));
      const lease = await store.tasks.hold('canceled-elsewhere');
      await elsewhere.tasks.save(taskIn(TaskState.TASK_STATE_CANCELED, 'canceled-elsewhere'));
      gate.down();
      // As the runner last saved it: working.
      expect((await store.tasks.load('canceled-elsewhere'))?.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      gate.up();
      await store.tasks.save(taskIn(TaskState.TASK_STATE_COMPLETED, 'canceled-elsewhere'));
      expect(await storedState(url, 'canceled-elsewhere')).toBe(TaskState[TaskState.TASK_STATE_CANCELED]);
      await lease.release();
    } finally {
      await gate.close();
    }
  });

  it('saves a kept task state through a failover whose new node takes no writes at first', async () => {
    const { url, gate, store } = await storeBehindRelay();
    const database = new URL(url).pathname.slice(1);
    try {
      await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'failed-over'));
      gate.down();
      await store.tasks.save(taskIn(TaskState.TASK_STATE_COMPLETED, 'failed-over'));
      // Back, on a node that is read-only for a while (as a standby being promoted is).
      await asAdmin(url, `ALTER DATABASE "${database}" SET default_transaction_read_only = on`);
      gate.up();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(await storedState(url, 'failed-over')).toBe(TaskState[TaskState.TASK_STATE_WORKING]);
      // Promoted: the read-only sessions are ended, the next ones take writes.
      const maintenance = url.replace(/\/[^/]*$/, '/postgres');
      await asAdmin(maintenance, `ALTER DATABASE "${database}" RESET default_transaction_read_only`);
      await asAdmin(maintenance, 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [database]);
      await waitUntil(async () => ((await storedState(url, 'failed-over')) === TaskState[TaskState.TASK_STATE_COMPLETED] ? true : undefined), 10_000, 'the kept state saved');
    } finally {
      await gate.close();
    }
  });

  it("holds a task's lease until the SDK has saved the state its turn ended in, though the turn began in that state", async () => {
    const { url, stores: [store] } = await stores(1);
    for (const [id, before] of [['last-state', TaskState.TASK_STATE_WORKING], ['asked-again', TaskState.TASK_STATE_INPUT_REQUIRED]] as const) {
      const last = before === TaskState.TASK_STATE_WORKING ? TaskState.TASK_STATE_COMPLETED : TaskState.TASK_STATE_INPUT_REQUIRED;
      await store.tasks.save(taskIn(before, id));
      const lease = await store.tasks.hold(id);
      // The executor releases as it publishes the last state; the SDK saves it a moment later.
      const releasing = lease.release(last);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await leaseOwners(url, id), id).toHaveLength(1);
      await store.tasks.save(taskIn(last, id));
      await releasing;
      expect(await leaseOwners(url, id), id).toEqual([]);
    }
  });

  it('leaves the lease to expire, and the reaper to fail the task, when the state its turn ended in is never saved', async () => {
    const { url, stores: [store] } = await stores(1, 1000);
    await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'never-saved'));
    const lease = await store.tasks.hold('never-saved');
    await lease.release(TaskState.TASK_STATE_COMPLETED); // the SDK stopped: no save comes
    await waitUntil(async () => ((await storedState(url, 'never-saved')) === TaskState[TaskState.TASK_STATE_FAILED] ? true : undefined), 10_000, 'the task failed by the reaper');
  }, 20_000);

  it('runs a second turn of a task under the lease of the first when both run in one process', async () => {
    const { url, stores: [store] } = await stores(1);
    await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'two-at-once'));
    let lost = 0;
    const first = await store.tasks.hold('two-at-once', () => lost++);
    const second = await store.tasks.hold('two-at-once', () => lost++);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // past a renewal (a third of 3 s)
    expect(lost).toBe(0);
    await first.release();
    expect(await leaseOwners(url, 'two-at-once')).toHaveLength(1);
    await second.release();
    expect(await leaseOwners(url, 'two-at-once')).toEqual([]);
  });

  /**
   * A turn's task state kept while its replica is cut off from the store, and a write of the task by another
   * replica meanwhile (`writeElsewhere`, given that write's task): the other write stands. The task is saved
   * before the turn takes its lease, unless `absentAtHold`.
   */
  async function keptStateYieldsTo(id: string, writeElsewhere: (url: string, theirs: Task) => Promise<unknown>, absentAtHold = false) {
    const { url, gate, store, warnings } = await storeBehindRelay();
    try {
      if (!absentAtHold) await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, id));
      const lease = await store.tasks.hold(id);
      gate.down();
      await store.tasks.save(taskIn(TaskState.TASK_STATE_INPUT_REQUIRED, id));
      await writeElsewhere(url, Task.fromJSON({ id, contextId: 'ctx', status: { state: TaskState[TaskState.TASK_STATE_WORKING], timestamp: '2030-01-01T00:00:00.000Z' } }));
      gate.up();
      await waitUntil(() => (warnings.some((w) => w.includes(`task ${id} changed otherwise`)) ? true : undefined), 10_000, 'the kept state given up');
      expect((await asAdmin<{ t: string }>(url, "SELECT data->'status'->>'timestamp' AS t FROM forge_tasks WHERE id = $1", [id]))[0].t).toBe('2030-01-01T00:00:00.000Z');
      await lease.release();
    } finally {
      await gate.close();
    }
  }

  it('keeps a message another replica ran on the task while this one was cut off, instead of its own kept state', async () => {
    // The approval reached another replica, which runs the task on.
    await keptStateYieldsTo('moved-on', async (url, theirs) => {
      const elsewhere = await openPostgresStore({ url, leaseMs: 3000 });
      opened.push(elsewhere);
      await elsewhere.tasks.save(theirs);
    });
  });

  /** A task's save as Forge wrote it before tasks had a writer (and before the finished rule), run by a replica not yet upgraded. */
  const saveAsOlderForge = (url: string, task: Task) =>
    asAdmin(
      url,
      `INSERT INTO forge_tasks (id, context_id, state, status_time, data, updated_at) VALUES ($1, $2, $3, $4, $5::jsonb, now())
       ON CONFLICT (id) DO UPDATE SET context_id = EXCLUDED.context_id, state = EXCLUDED.state, status_time = EXCLUDED.status_time, data = EXCLUDED.data, updated_at = now()`,
      [task.id, task.contextId, task.status!.state, task.status!.timestamp, JSON.stringify(Task.toJSON(task))],
    );

  it('keeps what a replica on older code (which names no writer) wrote on the task while this one was cut off, instead of its own kept state', async () => {
    await keptStateYieldsTo('old-code', saveAsOlderForge);
  });

  it('keeps what a replica on older code wrote on a task that did not exist yet when this turn took its lease', async () => {
    await keptStateYieldsTo('old-code-new-task', saveAsOlderForge, true);
  });

  it("leaves a turn's account as it is when the reaper, having loaded the task before the account was saved, fails it after", async () => {
    const { url, stores: [runner, reaper] } = await stores(2);
    const id = 'account-before-reaper';
    const statusText = async () => (await asAdmin<{ text: string }>(url, "SELECT data->'status'->'message'->'parts'->0->>'text' AS text FROM forge_tasks WHERE id = $1", [id]))[0]?.text;
    await runner.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, id));
    // The reaper's read, then the runner's account, then the reaper's write: a row lock holds the write back.
    const account = failTask(taskIn(TaskState.TASK_STATE_WORKING, id), 'the replica running this task lost its connection to the state store')!;
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    let reaping: Promise<boolean>;
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM forge_tasks WHERE id = $1 FOR UPDATE', [id]);
      reaping = reaper.tasks.failLoaded(id, 'the replica running this task stopped before it finished');
      // Until the reaper's write waits for the lock (its read does not).
      for (let i = 0; i < 200 && !(await asAdmin(url, "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE forge_tasks SET state%'")).length; i++) await new Promise((resolve) => setTimeout(resolve, 25));
      await locker.query("UPDATE forge_tasks SET state = 4, data = $2::jsonb WHERE id = $1", [id, JSON.stringify(Task.toJSON(account))]);
      await locker.query('COMMIT');
    } finally {
      await locker.end();
    }
    expect(await reaping!).toBe(false);
    expect(await statusText()).toBe('the replica running this task lost its connection to the state store');
    // A task still as the reaper loaded it is failed.
    await runner.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'still-working'));
    expect(await reaper.tasks.failLoaded('still-working', 'stopped')).toBe(true);
    expect(await storedState(url, 'still-working')).toBe('TASK_STATE_FAILED');
  });

  it("saves a turn's account of its lost lease over the failure the reaper wrote, though a state of the turn is still kept from the outage", async () => {
    const { url, gate, store, warnings } = await storeBehindRelay();
    const elsewhere = await openPostgresStore({ url, leaseMs: 3000 });
    opened.push(elsewhere);
    const id = 'account-after-kept';
    const account = 'the replica running this task lost its connection to the state store';
    const statusText = async () => (await asAdmin<{ text: string }>(url, "SELECT data->'status'->'message'->'parts'->0->>'text' AS text FROM forge_tasks WHERE id = $1", [id]))[0]?.text;
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, id));
      let lost!: () => void;
      const leaseLost = new Promise<void>((resolve) => (lost = resolve));
      await store.tasks.hold(id, () => lost());
      gate.down();
      await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, id)); // a tool call's status: kept under the lease
      // Cut off past its lease: another replica reaps it and fails the task.
      await asAdmin(url, "UPDATE forge_task_leases SET expires_at = now() - interval '1 second' WHERE task_id = $1", [id]);
      expect(await elsewhere.tasks.reapExpired()).toEqual([id]);
      // The kept state's write is held up (its row locked), so it is still kept when the turn gives its account.
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM forge_tasks WHERE id = $1 FOR UPDATE', [id]);
      gate.up();
      await leaseLost; // the next renewal finds the lease gone
      // The executor publishes the failure, saying why; the SDK loads the task and saves it.
      const loaded = await store.tasks.load(id);
      const saving = store.tasks.save({ ...loaded!, status: failTask(taskIn(TaskState.TASK_STATE_WORKING, id), account)!.status });
      await locker.query('COMMIT');
      await saving;
      await waitUntil(() => (warnings.some((w) => w.includes(`task ${id} changed otherwise`)) ? true : undefined), 10_000, 'the kept state given up');
      expect(await storedState(url, id)).toBe(TaskState[TaskState.TASK_STATE_FAILED]);
      expect(await statusText()).toBe(account);
    } finally {
      await locker.end();
      await gate.close();
    }
  });

  it('keeps what another replica wrote while a save was under way that its turn let go of (its last state never saved), kept after', async () => {
    // The save outlasts the turn's release, which waits 5 s for the last state.
    const { url, gate, store, warnings } = await storeBehindRelay({ queryTimeoutMs: 6_500, connectTimeoutMs: 6_500, leaseMs: 30_000 });
    const elsewhere = await openPostgresStore({ url, leaseMs: 3000 });
    opened.push(elsewhere);
    const at = (state: TaskState, timestamp: string) => Task.fromJSON({ id: 'let-go', contextId: 'ctx', status: { state: TaskState[state], timestamp } });
    try {
      await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'let-go'));
      const lease = await store.tasks.hold('let-go');
      gate.stall();
      const saving = store.tasks.save(at(TaskState.TASK_STATE_WORKING, '2020-01-01T00:00:00.000Z')); // the SDK waits on it, and saves nothing more
      await lease.release(TaskState.TASK_STATE_COMPLETED);
      await elsewhere.tasks.save(at(TaskState.TASK_STATE_INPUT_REQUIRED, '2030-01-01T00:00:00.000Z')); // an approval ran on another replica
      gate.up();
      await saving; // its statement timed out: kept
      await waitUntil(() => (warnings.some((w) => w.includes('task let-go changed otherwise')) ? true : undefined), 15_000, 'the kept state given up');
      expect((await asAdmin<{ t: string }>(url, "SELECT data->'status'->>'timestamp' AS t FROM forge_tasks WHERE id = 'let-go'"))[0].t).toBe('2030-01-01T00:00:00.000Z');
    } finally {
      await gate.close();
    }
  }, 60_000);

  it('keeps a finished task as it finished when a replica on older code saves another state of it late', async () => {
    const { url, stores: [a] } = await stores(1);
    await a.tasks.save(taskIn(TaskState.TASK_STATE_CANCELED, 'done-before'));
    await saveAsOlderForge(url, taskIn(TaskState.TASK_STATE_COMPLETED, 'done-before'));
    expect(await storedState(url, 'done-before')).toBe(TaskState[TaskState.TASK_STATE_CANCELED]);
    // Another save of the same finished state still lands (an artifact added as the task finished).
    await saveAsOlderForge(url, Task.fromJSON({ id: 'done-before', contextId: 'later', status: { state: TaskState[TaskState.TASK_STATE_CANCELED], timestamp: new Date().toISOString() } }));
    expect((await asAdmin<{ context_id: string }>(url, "SELECT context_id FROM forge_tasks WHERE id = 'done-before'"))[0].context_id).toBe('later');
  });

  /** A turn's task state kept while its replica is cut off from the store lands, over the task as `writeBefore` left it before the turn took its lease. */
  async function keptStateLandsOver(id: string, writeBefore: (url: string) => Promise<unknown>) {
    const { url, gate, store } = await storeBehindRelay();
    try {
      await writeBefore(url);
      const lease = await store.tasks.hold(id);
      gate.down();
      await store.tasks.save(taskIn(TaskState.TASK_STATE_COMPLETED, id));
      gate.up();
      await waitUntil(async () => ((await storedState(url, id)) === TaskState[TaskState.TASK_STATE_COMPLETED] ? true : undefined), 10_000, 'the kept state saved');
      await lease.release();
    } finally {
      await gate.close();
    }
  }

  it('saves the kept state of a task another replica wrote last before this turn took its lease (an approval asked there, run here)', async () => {
    await keptStateLandsOver('asked-there', async (url) => {
      const elsewhere = await openPostgresStore({ url, leaseMs: 3000 });
      opened.push(elsewhere);
      await elsewhere.tasks.save(taskIn(TaskState.TASK_STATE_INPUT_REQUIRED, 'asked-there'));
    });
  });

  it('saves the kept state of a task last written before tasks had a writer (saved by an older Forge)', async () => {
    // As the migration left a row written before it.
    await keptStateLandsOver('from-before', async (url) => {
      await saveAsOlderForge(url, taskIn(TaskState.TASK_STATE_INPUT_REQUIRED, 'from-before'));
      await asAdmin(url, "UPDATE forge_tasks SET writer = NULL WHERE id = 'from-before'");
    });
  });

  /**
   * Conversations over a pool whose first save of a conversation is lost with its connection, after it
   * landed or before, with `meanwhile` (another turn) run before the loss is reported.
   */
  function conversationsLosingFirstSave(url: string, landed: boolean, meanwhile: () => Promise<void>) {
    const direct = new pg.Pool({ connectionString: url });
    let cut = false;
    const pool = {
      query: async (sql: string, values: unknown[]) => {
        if (cut || !/UPDATE forge_conversations SET data/.test(sql)) return direct.query(sql, values);
        cut = true;
        if (landed) await direct.query(sql, values);
        await meanwhile();
        throw new Error('Connection terminated unexpectedly');
      },
    } as unknown as pg.Pool;
    const conversations = new PostgresConversations(pool, { on: () => () => {} } as unknown as PostgresNotifications, 'cut-replica', 3000);
    return { conversations, wasCut: () => cut, end: () => direct.end() };
  }

  it("knows a turn's save landed when the answer was lost with the connection, though another turn saved after it", async () => {
    const { url, stores: [store] } = await stores(1);
    const cutting = conversationsLosingFirstSave(url, true, () => store.conversations.withTurn('landed', async (session) => void session.messages.push({ role: 'user', content: 'next turn' })));
    try {
      await cutting.conversations.withTurn('landed', async (session) => void session.messages.push({ role: 'user', content: 'kept' }));
      expect(cutting.wasCut()).toBe(true);
      expect((await store.conversations.read('landed')).messages.map((m) => m.content)).toEqual(['kept', 'next turn']);
    } finally {
      await cutting.end();
    }
  });

  it("knows a turn's save landed when the answer was lost, though the next turn dropped the conversation's earliest messages (its limit)", async () => {
    const { url, stores: [store] } = await stores(1);
    // A conversation at its limit: every turn drops its earliest turn as it adds one (Agent's keepLatest).
    const limit = 4;
    await store.conversations.withTurn('capped', async (session) => void session.messages.push({ role: 'user', content: 'first' }, { role: 'assistant', content: 'one' }));
    const turn = (ask: string, answer: string) => async (session: Session) => {
      session.messages.push({ role: 'user', content: ask }, { role: 'assistant', content: answer });
      keepLatest(session.messages, limit);
    };
    const cutting = conversationsLosingFirstSave(url, true, () => store.conversations.withTurn('capped', turn('third', 'three')));
    try {
      await cutting.conversations.withTurn('capped', turn('second', 'two'));
      expect(cutting.wasCut()).toBe(true);
      expect((await store.conversations.read('capped')).messages.map((m) => m.content)).toEqual(['second', 'two', 'third', 'three']);
    } finally {
      await cutting.end();
    }
  });

  it("refuses a turn's save whose connection was lost before it landed, when another turn took the conversation over meanwhile", async () => {
    const { url, stores: [store] } = await stores(1);
    // Meanwhile this turn's hold expires, and another turn takes the conversation over and saves.
    const cutting = conversationsLosingFirstSave(url, false, async () => {
      await asAdmin(url, "UPDATE forge_conversations SET turn_expires = now() - interval '1 second'");
      await store.conversations.withTurn('taken-over', async (session) => void session.messages.push({ role: 'user', content: 'other turn' }));
    });
    try {
      await expect(cutting.conversations.withTurn('taken-over', async (session) => void session.messages.push({ role: 'user', content: 'lost' }))).rejects.toThrow(StateConflictError);
      expect(cutting.wasCut()).toBe(true);
      expect((await store.conversations.read('taken-over')).messages.map((m) => m.content)).toEqual(['other turn']);
    } finally {
      await cutting.end();
    }
  });

  it('takes a store gone silent (a network partition) for a store away, after its timeouts, and saves the kept state when it answers again', async () => {
    const { url, gate, store } = await storeBehindRelay({ connectTimeoutMs: 1000, queryTimeoutMs: 1000 });
    try {
      await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'partitioned'));
      const lease = await store.tasks.hold('partitioned');
      gate.stall();
      // Not a hang for as long as TCP keeps trying: kept after the statement's timeout.
      await store.tasks.save(taskIn(TaskState.TASK_STATE_COMPLETED, 'partitioned'));
      expect((await store.tasks.load('partitioned'))?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      gate.up();
      await waitUntil(async () => ((await storedState(url, 'partitioned')) === TaskState[TaskState.TASK_STATE_COMPLETED] ? true : undefined), 15_000, 'the kept state saved');
      await lease.release(TaskState.TASK_STATE_COMPLETED);
    } finally {
      await gate.close();
    }
  }, 30_000);

  it("saves a kept state over one of its own that landed though its answer never came back (a statement past its timeout)", async () => {
    const { url } = await stores(1);
    const warnings: string[] = [];
    const store = await openPostgresStore({ url, leaseMs: 3000, queryTimeoutMs: 1000, log: { debug() {}, info() {}, warn: (text) => void warnings.push(text) } });
    opened.push(store);
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'lost-answer'));
      const lease = await store.tasks.hold('lost-answer');
      // The row is locked: the next save waits past its timeout, is kept, and lands once the lock goes.
      await locker.query('BEGIN');
      await locker.query("SELECT 1 FROM forge_tasks WHERE id = 'lost-answer' FOR UPDATE");
      await store.tasks.save(taskIn(TaskState.TASK_STATE_INPUT_REQUIRED, 'lost-answer'));
      await store.tasks.save(taskIn(TaskState.TASK_STATE_COMPLETED, 'lost-answer'));
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await locker.query('COMMIT');
      await waitUntil(async () => ((await storedState(url, 'lost-answer')) === TaskState[TaskState.TASK_STATE_COMPLETED] ? true : undefined), 15_000, 'the latest kept state saved');
      expect(warnings.filter((w) => w.includes('changed otherwise'))).toEqual([]);
      await lease.release(TaskState.TASK_STATE_COMPLETED);
    } finally {
      await locker.end();
    }
  }, 30_000);

  it("re-opens the store's LISTEN connection though the store stays silent for a while after it noticed", async () => {
    const { url, gate, store, warnings } = await storeBehindRelay({ connectTimeoutMs: 1000, queryTimeoutMs: 1000 });
    const heard: string[] = [];
    store.cancels.subscribe((taskId) => heard.push(taskId));
    try {
      gate.stall();
      await waitUntil(() => (warnings.some((w) => /notification connection did not answer within 1000 ms/.test(w)) ? true : undefined), 10_000, 'the silence noticed');
      // Still silent: the reconnections meanwhile must give up in time, not wait forever.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      gate.up();
      await expectHeardAgain(url, heard);
    } finally {
      await gate.close();
    }
  }, 30_000);

  it('opens while another instance holds the migration lock for longer than a statement may take', async () => {
    const { url } = await stores(1);
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await locker.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
      const opening = openPostgresStore({ url, leaseMs: 3000, queryTimeoutMs: 500 });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await locker.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
      const store = await opening;
      opened.push(store);
      await store.ping();
    } finally {
      await locker.end();
    }
  });

  it('runs a turn that joined a hold which then failed under a lease of its own', async () => {
    const { url, stores: [store] } = await stores(1);
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      // Another session's uncommitted lease row: the first hold waits on it.
      await locker.query('BEGIN');
      await locker.query("INSERT INTO forge_task_leases (task_id, owner, expires_at) VALUES ('joined', 'elsewhere', now() + interval '1 minute')");
      const first = store.tasks.hold('joined');
      first.catch(() => {});
      const lockerPid = (locker as unknown as { processID: number }).processID;
      const waiting = () => asAdmin<{ pid: number }>(url, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO forge_task_leases%' AND pid NOT IN ($1, pg_backend_pid())", [lockerPid]);
      await waitUntil(async () => ((await waiting()).length ? true : undefined), 10_000, 'the first hold waiting on the lease row');
      const second = store.tasks.hold('joined');
      // The first hold fails (its statement cancelled), and the other session lets go.
      await asAdmin(url, 'SELECT pg_cancel_backend(pid) FROM unnest($1::int[]) AS pid', [(await waiting()).map((r) => r.pid)]);
      await expect(first).rejects.toThrow();
      await locker.query('ROLLBACK');
      const lease = await second;
      expect(await leaseOwners(url, 'joined')).toHaveLength(1);
      await lease.release();
      expect(await leaseOwners(url, 'joined')).toEqual([]);
    } finally {
      await locker.end();
    }
  });

  it('leaves the leases of turns cut off with it alone when the store comes back after more than a lease: their holders renew first', async () => {
    // Two replicas only, both cut off: none stayed in contact to see the holder's lease expire.
    const url = await postgres.createDatabase(`outage_${process.pid}_${++databases}`);
    const [holderGate, reaperGate] = await Promise.all([relay(postgres.port), relay(postgres.port)]);
    const through = (gate: { port: number }) => url.replace(`:${postgres.port}/`, `:${gate.port}/`);
    const holder = await openPostgresStore({ url: through(holderGate), leaseMs: 2000 });
    const reaper = await openPostgresStore({ url: through(reaperGate), leaseMs: 2000 });
    opened.push(holder, reaper);
    try {
      await holder.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'outlived'));
      let lost = false;
      const lease = await holder.tasks.hold('outlived', () => (lost = true));
      holderGate.down();
      reaperGate.down();
      await new Promise((resolve) => setTimeout(resolve, 4500)); // every lease has expired
      // The reaper is back first; the holder three quarters of a lease later.
      reaperGate.up();
      await new Promise((resolve) => setTimeout(resolve, 1500));
      holderGate.up();
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(await storedState(url, 'outlived')).toBe(TaskState[TaskState.TASK_STATE_WORKING]);
      expect(lost).toBe(false);
      await lease.release();
    } finally {
      await Promise.all([holderGate.close(), reaperGate.close()]);
    }
  }, 30_000);

  it("keeps a newer state another replica saved over a last state whose save was under way on a silent store when its turn was released", async () => {
    // A lease longer than the test: the other replica must not reap the turn cut off meanwhile.
    const { url, gate, store } = await storeBehindRelay({ connectTimeoutMs: 6000, queryTimeoutMs: 6000, leaseMs: 30_000 });
    const elsewhere = await openPostgresStore({ url, leaseMs: 3000 });
    opened.push(elsewhere);
    const asked = (year: number) => Task.fromJSON({ id: 'asked', contextId: 'ctx', status: { state: TaskState[TaskState.TASK_STATE_INPUT_REQUIRED], timestamp: `${year}-01-01T00:00:00.000Z` } });
    try {
      await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'asked'));
      const lease = await store.tasks.hold('asked');
      gate.stall();
      // The last state's save hangs past the 5 s a release waits for it.
      const saving = store.tasks.save(asked(2020));
      await lease.release(TaskState.TASK_STATE_INPUT_REQUIRED);
      // Meanwhile the approval ran on another replica, which asked again.
      await elsewhere.tasks.save(asked(2030));
      gate.up();
      await saving;
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect((await asAdmin<{ t: string }>(url, "SELECT data->'status'->>'timestamp' AS t FROM forge_tasks WHERE id = 'asked'"))[0].t).toBe('2030-01-01T00:00:00.000Z');
    } finally {
      await gate.close();
    }
  }, 30_000);

  it("leaves a turn's lease to expire when its last state's save failed outright (neither stored nor kept)", async () => {
    const { url, stores: [store] } = await stores(1, 1500);
    store.tasks.stopReaper();
    await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'unsavable'));
    const lease = await store.tasks.hold('unsavable');
    const releasing = lease.release(TaskState.TASK_STATE_COMPLETED);
    // A trigger refuses the row, the store being there (as a constraint would).
    await asAdmin(url, "CREATE FUNCTION refuse_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$");
    await asAdmin(url, "CREATE TRIGGER refuse BEFORE INSERT OR UPDATE ON forge_tasks FOR EACH ROW WHEN (NEW.context_id = 'refused') EXECUTE FUNCTION refuse_row()");
    const unsavable = Task.fromJSON({ id: 'unsavable', contextId: 'refused', status: { state: TaskState[TaskState.TASK_STATE_COMPLETED], timestamp: new Date().toISOString() } });
    await expect(store.tasks.save(unsavable)).rejects.toThrow();
    await releasing;
    // Neither let go nor renewed any more (the reaper is stopped here): the lease row stays, and expires.
    const expired = async () => (await asAdmin(url, "SELECT 1 FROM forge_task_leases WHERE task_id = 'unsavable' AND expires_at < now()")).length > 0;
    await waitUntil(async () => ((await expired()) ? true : undefined), 10_000, 'the lease expired where it was');
    expect(await storedState(url, 'unsavable')).toBe(TaskState[TaskState.TASK_STATE_WORKING]);
  });

  it('waits two leases after it starts before it reaps: holders cut off with it may be back only now', async () => {
    const url = await postgres.createDatabase(`fresh_${process.pid}_${++databases}`);
    const before = await openPostgresStore({ url, leaseMs: 1000 });
    await before.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'expired-at-start'));
    await before.close();
    await asAdmin(url, "INSERT INTO forge_task_leases (task_id, owner, expires_at) VALUES ('expired-at-start', 'gone', now() - interval '1 second')");
    // It may reap 4 s after it opened; it is asked at 1.2 s, leaving a loaded machine room.
    const store = await openPostgresStore({ url, leaseMs: 2000 });
    opened.push(store);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(await storedState(url, 'expired-at-start')).toBe(TaskState[TaskState.TASK_STATE_WORKING]);
    await waitUntil(async () => ((await storedState(url, 'expired-at-start')) === TaskState[TaskState.TASK_STATE_FAILED] ? true : undefined), 10_000, 'the task failed by the reaper');
  });

  it('closes within its 2 s while the store is silent, and says which kept state it lost', async () => {
    const { gate, store, warnings } = await storeBehindRelay();
    try {
      gate.down();
      await store.tasks.save(taskIn(TaskState.TASK_STATE_WORKING, 'lost-at-stop')); // kept: the store is away
      // Then silent, in one tick (the kept state's writer tries again only later): the last try of the kept
      // state, and the pool's end, get no answer.
      gate.up();
      gate.stall();
      const started = Date.now();
      await store.close();
      expect(Date.now() - started).toBeLessThan(3500); // 2 s, with room for a loaded machine
      expect(warnings).toContainEqual(expect.stringContaining('closing with the latest state of task lost-at-stop unsaved'));
    } finally {
      await gate.close();
    }
  });

  it('saves a turn that ends while the store is away once it is back, within the hold', async () => {
    const { gate, store } = await storeBehindRelay();
    try {
      const result = await store.conversations.withTurn('cut-at-the-end', async (session) => {
        session.messages.push({ role: 'user', content: 'kept' });
        gate.down();
        setTimeout(() => gate.up(), 1500);
        return 'answered';
      });
      expect(result).toBe('answered');
      expect((await store.conversations.read('cut-at-the-end')).messages).toEqual([{ role: 'user', content: 'kept' }]);
    } finally {
      await gate.close();
    }
  });

  it('gives up the save of a turn that ends while the store stays away for longer than the hold: the turn fails, and the conversation stays as it was', async () => {
    const { gate, store } = await storeBehindRelay();
    try {
      await store.conversations.withTurn('away-too-long', async (session) => void session.messages.push({ role: 'user', content: 'first' }));
      let ended = 0;
      const turn = store.conversations.withTurn('away-too-long', async (session) => {
        session.messages.push({ role: 'user', content: 'lost' });
        gate.down();
        ended = Date.now();
        return 'answered';
      });
      await expect(turn).rejects.toThrow();
      // Tried again for a hold (3 s here), not given up at once, nor tried for ever.
      expect(Date.now() - ended).toBeGreaterThanOrEqual(3000);
      expect(Date.now() - ended).toBeLessThan(10_000);
      gate.up();
      expect((await store.conversations.read('away-too-long')).messages).toEqual([{ role: 'user', content: 'first' }]);
      // Its hold expired: the next turn runs.
      expect(await store.conversations.withTurn('away-too-long', async (session) => session.messages.length)).toBe(1);
    } finally {
      await gate.close();
    }
  });

  /** A LISTEN connection through a relay the test can cut or silence, hearing forge_cancel. */
  async function listeningBehindRelay(heartbeatMs?: number) {
    const url = await postgres.createDatabase(`listen_${process.pid}_${++databases}`);
    const gate = await relay(postgres.port);
    const warnings: string[] = [];
    const log = { debug() {}, info() {}, warn: (message: string) => void warnings.push(message) };
    const notifications = new PostgresNotifications(() => new pg.Client({ connectionString: url.replace(`:${postgres.port}/`, `:${gate.port}/`), connectionTimeoutMillis: 1000 }), log, heartbeatMs);
    await notifications.start();
    const heard: string[] = [];
    notifications.on('forge_cancel', (payload) => heard.push(payload));
    return {
      gate,
      warnings,
      /** Notifies until the connection hears it (it may be re-opening still). */
      expectHeardAgain: () => expectHeardAgain(url, heard),
      async close() {
        await notifications.close();
        await gate.close();
      },
    };
  }

  it('re-opens its LISTEN connection at one attempt per second while Postgres is away, then hears notifications again', async () => {
    const listening = await listeningBehindRelay();
    const { gate, warnings } = listening;
    try {
      gate.down();
      await new Promise((resolve) => setTimeout(resolve, 4500));
      // One retry per failed attempt: about four in 4.5 s. Two per failure would be 15 by now, and doubling.
      expect(gate.droppedAttempts()).toBeGreaterThanOrEqual(2);
      expect(gate.droppedAttempts()).toBeLessThanOrEqual(6);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/notification connection .*; reconnecting/);
      gate.up();
      await listening.expectHeardAgain();
    } finally {
      await listening.close();
    }
  }, 30_000);

  it('re-opens its LISTEN connection when the store goes silent (a network partition sends no error), then hears notifications again', async () => {
    const listening = await listeningBehindRelay(500);
    try {
      listening.gate.stall();
      await waitUntil(() => (listening.warnings.some((w) => /notification connection did not answer within 500 ms; reconnecting/.test(w)) ? true : undefined), 10_000, 'the silence noticed');
      listening.gate.up();
      await listening.expectHeardAgain();
    } finally {
      await listening.close();
    }
  }, 30_000);

  it('has forged-tool subscribers look again when its LISTEN connection is back: a tool forged meanwhile was announced to no one', async () => {
    const { url, stores: [forger] } = await stores(1);
    const gate = await relay(postgres.port);
    const warnings: string[] = [];
    const log = { debug() {}, info() {}, warn: (message: string) => void warnings.push(message) };
    const notifications = new PostgresNotifications(() => new pg.Client({ connectionString: url.replace(`:${postgres.port}/`, `:${gate.port}/`) }), log);
    const pool = new pg.Pool({ connectionString: url });
    try {
      await notifications.start();
      const listener = new PostgresForged(pool, notifications);
      let looks = 0;
      listener.subscribe(() => looks++);
      gate.down();
      for (let i = 0; i < 100 && warnings.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(warnings[0]).toMatch(/notification connection .*; reconnecting/);
      // Forged on another replica while this one's LISTEN connection is down: its notification is lost.
      const record = { request: { name: 'forged_while_away' }, owner: null } as unknown as ForgedRecord;
      expect(await forger.forged!.add(record, 10)).toBeUndefined();
      expect(looks).toBe(0);
      gate.up();
      for (let i = 0; i < 100 && looks === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(looks).toBe(1);
      expect((await listener.since(0)).map((r) => ('record' in r ? r.record.request.name : r))).toEqual(['forged_while_away']);
    } finally {
      await notifications.close();
      await pool.end();
      await gate.close();
    }
  }, 30_000);
});
