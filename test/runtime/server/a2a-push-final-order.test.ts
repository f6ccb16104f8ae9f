/**
 * A webhook slow enough that a task's final state waits behind its earlier
 * updates never sees the task go backwards: once the final state is queued,
 * the task's earlier states still waiting are dropped (its artifacts are
 * sent, in order, before it), and with replicas on Postgres, an update
 * saying the task has not ended is not sent once the store holds it
 * finished (another replica may have sent the final state by then). The
 * webhook is a real server on loopback whose first request the test holds
 * unanswered.
 */
import { StreamResponse, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgressPolicy } from '../../../runtime/guard/egress.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { PolicyPushSender } from '../../../runtime/server/a2a/push-notifications.ts';
import { MemoryPushConfigs } from '../../../runtime/state/memory-push-configs.ts';
import { openPostgresStore, type PostgresStateStore } from '../../../runtime/state/postgres-store.ts';
import type { PushConfigRecords } from '../../../runtime/state/store.ts';
import { defaultServerCallContextBuilder, Task, UnauthenticatedUser } from '../../../runtime/vendor/a2a.ts';
import { startServer, type TestServer } from '../../helpers/http-server.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';

const context = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '1.0' });
const log = { debug: () => {}, info: () => {}, warn: () => {} };

const status = (taskId: string, state: string, n: number) => StreamResponse.fromJSON({ statusUpdate: { taskId, contextId: 'c', status: { state }, metadata: { n } } });
const artifact = (taskId: string, n: number) => StreamResponse.fromJSON({ artifactUpdate: { taskId, contextId: 'c', artifact: { artifactId: `a${n}`, parts: [{ text: `part ${n}` }] }, metadata: { n } } });

/** What the webhook received, in order: `working#0`, `artifact#1`, `completed#6`... */
function received(webhook: TestServer): string[] {
  return webhook.requests.map((r) => {
    const body = JSON.parse(r.body) as { statusUpdate?: { status: { state: string }; metadata: { n: number } }; artifactUpdate?: { metadata: { n: number } }; task?: { status: { state: string } } };
    if (body.artifactUpdate) return `artifact#${body.artifactUpdate.metadata.n}`;
    if (body.task) return `${body.task.status.state.replace('TASK_STATE_', '').toLowerCase()}#task`;
    return `${body.statusUpdate!.status.state.replace('TASK_STATE_', '').toLowerCase()}#${body.statusUpdate!.metadata.n}`;
  });
}

/** Whether a state that is not final comes after a final one. */
function goesBackwards(sequence: string[]): boolean {
  const firstFinal = sequence.findIndex((s) => /^(completed|failed|canceled|rejected)#/.test(s));
  return firstFinal >= 0 && sequence.slice(firstFinal).some((s) => /^(submitted|working|input_required|auth_required)#/.test(s));
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A webhook that holds its first request until `release` (answering it with `status`); the others it answers at once. */
async function slowWebhook(): Promise<TestServer & { release(status?: number): void; holding(): boolean }> {
  let held: ServerResponse | undefined;
  const webhook = await startServer((_req, res) => {
    if (webhook.requests.length === 1) held = res;
    else res.end();
  });
  return Object.assign(webhook, { release: (code = 200) => held!.writeHead(code).end(), holding: () => held !== undefined });
}

async function hookOn(store: PushConfigRecords, webhook: TestServer, taskId: string, setOver = context): Promise<PolicyPushSender> {
  const config: TaskPushNotificationConfig = { tenant: '', id: 'hook', taskId, url: `${webhook.url}/hook`, token: 't', authentication: undefined };
  await store.save(taskId, setOver, config);
  return senderFor(store, webhook);
}

function senderFor(store: PushConfigRecords, webhook: TestServer): PolicyPushSender {
  const http = new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: [], allowed_addresses: [`127.0.0.1:${webhook.port}`] }));
  return new PolicyPushSender(store, http, log, { retryDelayMs: 10, cacheMs: 0, finalGraceMs: 0, finalRetryMs: 0, timeoutMs: 60_000 });
}

/** What a v0.3 webhook received, in order: each body is the whole task, by its state and artifacts. */
function receivedV03(webhook: TestServer): string[] {
  return webhook.requests.map((r) => {
    const task = JSON.parse(r.body) as { kind: string; status: { state: string }; artifacts?: { artifactId: string }[] };
    return `${task.status.state.replace('-', '_')}#${(task.artifacts ?? []).map((a) => a.artifactId).join(',')}`;
  });
}

/** The task as the SDK hands it over with an update: in `state`, with artifacts a1..an. */
const taskIn = (id: string, state: string, artifacts: number) =>
  Task.fromJSON({ id, contextId: 'c', status: { state, timestamp: new Date().toISOString() }, artifacts: Array.from({ length: artifacts }, (_, i) => ({ artifactId: `a${i + 1}`, parts: [{ text: `part ${i + 1}` }] })) });

describe('a final state queued behind a slow webhook', () => {
  it("drops the task's earlier states still waiting, and sends its artifacts in order before the final state", async () => {
    const webhook = await slowWebhook();
    const sender = await hookOn(new MemoryPushConfigs(), webhook, 't1');
    void sender.send(status('t1', 'TASK_STATE_WORKING', 0), context);
    await waitFor(webhook.holding, 'the first notification to reach the webhook');
    void sender.send(artifact('t1', 1), context);
    void sender.send(status('t1', 'TASK_STATE_WORKING', 2), context);
    void sender.send(artifact('t1', 3), context);
    void sender.send(status('t1', 'TASK_STATE_INPUT_REQUIRED', 4), context);
    void sender.send(artifact('t1', 5), context);
    void sender.send(status('t1', 'TASK_STATE_COMPLETED', 6), context);
    // The held one fails with a 503: it is not tried again, as the task has ended since.
    webhook.release(503);
    await sender.settled();
    expect(received(webhook)).toEqual(['working#0', 'artifact#1', 'artifact#3', 'artifact#5', 'completed#6']);
  });

  it('at a v0.3 webhook, whose every notification is the whole task, drops the artifacts waiting too: the final task carries them', async () => {
    const webhook = await slowWebhook();
    const v03 = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '0.3' });
    const sender = await hookOn(new MemoryPushConfigs(), webhook, 't5', v03);
    void sender.send(status('t5', 'TASK_STATE_WORKING', 0), v03, taskIn('t5', 'TASK_STATE_WORKING', 0));
    await waitFor(webhook.holding, 'the first notification to reach the webhook');
    void sender.send(artifact('t5', 1), v03, taskIn('t5', 'TASK_STATE_WORKING', 1));
    void sender.send(artifact('t5', 2), v03, taskIn('t5', 'TASK_STATE_WORKING', 2));
    void sender.send(status('t5', 'TASK_STATE_COMPLETED', 3), v03, taskIn('t5', 'TASK_STATE_COMPLETED', 2));
    webhook.release();
    await sender.settled();
    expect(receivedV03(webhook)).toEqual(['working#', 'completed#a1,a2']);
  });
});

describe('with replicas on Postgres', () => {
  let postgres: TestPostgres;
  let replicas: PostgresStateStore[];

  beforeAll(async () => {
    postgres = await startPostgres();
    const url = await postgres.createDatabase(`push_final_order_${process.pid}`);
    replicas = [await openPostgresStore({ url, leaseMs: 3000 }), await openPostgresStore({ url, leaseMs: 3000 })];
  }, 60_000);

  afterAll(async () => {
    await Promise.all((replicas ?? []).map((r) => r.close()));
    await postgres?.stop();
  });

  const saveTask = (id: string, state: string) => replicas[0].tasks.save(Task.fromJSON({ id, contextId: 'c', status: { state, timestamp: new Date().toISOString() } }));

  /** A task working on replica a, whose first notification (working#0) the slow webhook holds; over v0.3, each update with its task. */
  async function heldOnA(taskId: string, v03?: typeof context) {
    const webhook = await slowWebhook();
    await saveTask(taskId, 'TASK_STATE_WORKING');
    const a = await hookOn(replicas[0].pushConfigs, webhook, taskId, v03);
    void a.send(status(taskId, 'TASK_STATE_WORKING', 0), v03 ?? context, v03 && taskIn(taskId, 'TASK_STATE_WORKING', 0));
    await waitFor(webhook.holding, 'the first notification to reach the webhook');
    return { webhook, a };
  }

  it('a final state another replica sent from the store (the grace passed) is not followed by the earlier states still waiting', async () => {
    const { webhook, a } = await heldOnA('t2');
    void a.send(artifact('t2', 1), context);
    void a.send(status('t2', 'TASK_STATE_WORKING', 2), context);
    void a.send(artifact('t2', 3), context);
    await saveTask('t2', 'TASK_STATE_COMPLETED');
    void a.send(status('t2', 'TASK_STATE_COMPLETED', 4), context);
    // Replica b finds the final state not sent past the grace (none here), and sends it.
    await senderFor(replicas[1].pushConfigs, webhook).retryFinals();
    expect(received(webhook)).toEqual(['working#0', 'completed#task']);
    webhook.release();
    await a.settled();
    const sequence = received(webhook);
    expect(goesBackwards(sequence), sequence.join(' ')).toBe(false);
    expect(sequence.filter((s) => s.startsWith('artifact#'))).toEqual(['artifact#1', 'artifact#3']);
  });

  it('a task another replica ran to its end is not said, after that, to be working by the states waiting here', async () => {
    const { webhook, a } = await heldOnA('t3');
    void a.send(artifact('t3', 1), context);
    void a.send(status('t3', 'TASK_STATE_INPUT_REQUIRED', 2), context);
    // The client answered through replica b, which ran the task to its end and sent its final state.
    await saveTask('t3', 'TASK_STATE_COMPLETED');
    await senderFor(replicas[1].pushConfigs, webhook).send(status('t3', 'TASK_STATE_COMPLETED', 3), context);
    webhook.release();
    await a.settled();
    const sequence = received(webhook);
    expect(goesBackwards(sequence), sequence.join(' ')).toBe(false);
    expect(sequence).toEqual(['working#0', 'completed#3', 'artifact#1']);
  });

  it('a v0.3 webhook, whose every notification is the whole task, is not sent the task working after another replica ran it to its end', async () => {
    const v03 = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '0.3' });
    const { webhook, a } = await heldOnA('t4', v03);
    void a.send(artifact('t4', 1), v03, taskIn('t4', 'TASK_STATE_WORKING', 1));
    await saveTask('t4', 'TASK_STATE_COMPLETED');
    await senderFor(replicas[1].pushConfigs, webhook).send(status('t4', 'TASK_STATE_COMPLETED', 2), v03, taskIn('t4', 'TASK_STATE_COMPLETED', 1));
    webhook.release();
    await a.settled();
    // The final task carries the artifact the one left out would have.
    expect(receivedV03(webhook)).toEqual(['working#', 'completed#a1']);
  });
});
