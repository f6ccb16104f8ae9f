/**
 * A finished task's final state reaches each of its webhooks at least once,
 * with replicas on Postgres: the replica that ran the task may stop before
 * its notification goes, or the webhook may be down for all of its tries.
 * The store keeps which webhooks took it; whichever replica looks next
 * sends the rest, one replica per config. Against a real PostgreSQL and a
 * real webhook on loopback.
 */
import type { StreamResponse, TaskPushNotificationConfig } from '@a2a-js/sdk';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgressPolicy } from '../../../runtime/guard/egress.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { FINAL_STATE_TRIES, PolicyPushSender, type PushDelivery } from '../../../runtime/server/a2a/push-notifications.ts';
import { openPostgresStore, type PostgresStateStore } from '../../../runtime/state/postgres-store.ts';
import { defaultServerCallContextBuilder, Task, TaskState, UnauthenticatedUser } from '../../../runtime/vendor/a2a.ts';
import { startServer, type TestServer } from '../../helpers/http-server.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';

let postgres: TestPostgres;
let replicas: PostgresStateStore[];
let sql: pg.Client;
let webhook: TestServer;
/** What the webhook answers now. */
let answer = 200;

beforeAll(async () => {
  postgres = await startPostgres();
  const url = await postgres.createDatabase(`push_finals_${process.pid}`);
  replicas = [await openPostgresStore({ url, leaseMs: 3000 }), await openPostgresStore({ url, leaseMs: 3000 })];
  sql = new pg.Client({ connectionString: url });
  await sql.connect();
  webhook = await startServer((_req, res) => res.writeHead(answer).end());
}, 60_000);

afterAll(async () => {
  await sql?.end();
  await Promise.all((replicas ?? []).map((r) => r.close()));
  webhook?.server.close();
  await postgres?.stop();
});

const context = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '1.0' });
const warnings: string[] = [];
const infos: string[] = [];
const log = { debug: () => {}, info: (line: string) => infos.push(line), warn: (line: string) => warnings.push(line) };

/** A replica's sender: two quick tries per notification, final states looked for again at once. */
function sender(replica: PostgresStateStore, delivery: PushDelivery = {}): PolicyPushSender {
  const http = new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: [], allowed_addresses: [`127.0.0.1:${webhook.port}`] }));
  return new PolicyPushSender(replica.pushConfigs, http, log, { attempts: 2, retryDelayMs: 10, cacheMs: 0, finalGraceMs: 0, finalRetryMs: 0, ...delivery });
}

/** A task in `state`, saved, with one webhook set on it; the task as saved. */
async function taskWithWebhook(id: string, state: TaskState): Promise<Task> {
  const task = Task.fromJSON({ id, contextId: 'ctx', status: { state: TaskState[state], timestamp: new Date().toISOString() } });
  await replicas[0].tasks.save(task);
  const config: TaskPushNotificationConfig = { tenant: '', id: 'hook', taskId: id, url: `${webhook.url}/hook/${id}`, token: 't', authentication: undefined };
  expect(await replicas[0].pushConfigs.saveWithin(id, context, config, 10, true)).toBe('saved');
  return task;
}

const asUpdate = (task: Task): StreamResponse => ({ payload: { $case: 'task', value: task } }) as StreamResponse;
const sentTo = (id: string) => webhook.requests.filter((r) => r.url === `/hook/${id}`);
const settled = async (id: string) => (await sql.query('SELECT final_settled FROM forge_push_configs WHERE task_id = $1', [id])).rows[0]?.final_settled;

describe("a finished task's final state", () => {
  it('that the webhook took at once is not sent again', async () => {
    answer = 200;
    const task = await taskWithWebhook('took-it', TaskState.TASK_STATE_COMPLETED);
    const a = sender(replicas[0]);
    await a.send(asUpdate(task), context, task);
    expect(sentTo('took-it')).toHaveLength(1);
    expect(await settled('took-it')).toBe(true);
    await Promise.all([a.retryFinals(), sender(replicas[1]).retryFinals()]);
    expect(sentTo('took-it')).toHaveLength(1);
  });

  it('that the webhook refused in every try is sent again from the store once it is back, by one replica only', async () => {
    answer = 503;
    const task = await taskWithWebhook('was-down', TaskState.TASK_STATE_FAILED);
    const [a, b] = [sender(replicas[0]), sender(replicas[1])];
    await a.send(asUpdate(task), context, task);
    expect(sentTo('was-down')).toHaveLength(2);
    expect(await settled('was-down')).toBe(false);
    answer = 200;
    // Both replicas look, again and again: the claim gives it to one (for longer than its try may take), and once taken it is settled.
    for (let round = 0; round < 10; round++) await Promise.all([a.retryFinals(), b.retryFinals()]);
    expect(sentTo('was-down')).toHaveLength(3);
    expect(JSON.parse(sentTo('was-down')[2].body)).toMatchObject({ task: { id: 'was-down', status: { state: 'TASK_STATE_FAILED' } } });
    expect(await settled('was-down')).toBe(true);
    expect(infos).toContainEqual(expect.stringMatching(/push notification of task was-down's final state to .* sent, on try 1 from the store/));
  });

  it('that the replica which ran the task never sent (it stopped first) is sent by another, once the grace has passed', async () => {
    answer = 200;
    await taskWithWebhook('stopped-first', TaskState.TASK_STATE_CANCELED);
    // Within the grace (the replica that ran it is still trying): left alone.
    await sender(replicas[1], { finalGraceMs: 60 * 60 * 1000 }).retryFinals();
    expect(sentTo('stopped-first')).toHaveLength(0);
    await sender(replicas[1]).retryFinals();
    expect(sentTo('stopped-first')).toHaveLength(1);
    expect(await settled('stopped-first')).toBe(true);
  });

  it('is given up after its tries from the store, and said so', async () => {
    answer = 503;
    await taskWithWebhook('never-back', TaskState.TASK_STATE_COMPLETED);
    const b = sender(replicas[1]);
    for (let round = 0; round < FINAL_STATE_TRIES + 3; round++) {
      await b.retryFinals();
      // Its next try due now, rather than after the claim's wait (20 s, doubling).
      await sql.query("UPDATE forge_push_configs SET final_retry_at = now() - interval '1 second' WHERE task_id = 'never-back'");
    }
    expect(sentTo('never-back')).toHaveLength(FINAL_STATE_TRIES);
    expect(await settled('never-back')).toBe(true);
    expect(warnings).toContainEqual(expect.stringMatching(new RegExp(`final state to .* given up after ${FINAL_STATE_TRIES} tries from the store: the webhook answered 503`)));
  });
});

describe('a task not finished', () => {
  it('is sent nothing from the store: only a final state is', async () => {
    answer = 503;
    const task = await taskWithWebhook('still-working', TaskState.TASK_STATE_WORKING);
    const a = sender(replicas[0]);
    await a.send(asUpdate(task), context, task);
    answer = 200;
    await a.retryFinals();
    expect(sentTo('still-working')).toHaveLength(2);
    expect(await settled('still-working')).toBe(false);
  });
});
