/**
 * A webhook that is slow (or down) does not make the agent hold every update
 * of a task for it: past MAX_WAITING_NOTIFICATIONS waiting behind the one
 * under way, the oldest are dropped, and the latest (how the task ends) is
 * still sent; the states a later one supersedes go before any artifact
 * update. A long answer streams hundreds of chunks, each a copy of the
 * task, and each notification may take 3 tries of 10 s.
 */
import { describe, expect, it } from 'vitest';
import type { StreamResponse, TaskPushNotificationConfig } from '@a2a-js/sdk';
import type { ServerResponse } from 'node:http';
import { createEgressPolicy } from '../../../runtime/guard/egress.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { MAX_WAITING_NOTIFICATIONS, PolicyPushSender } from '../../../runtime/server/a2a/push-notifications.ts';
import { MemoryPushConfigs } from '../../../runtime/state/memory-push-configs.ts';
import { defaultServerCallContextBuilder, UnauthenticatedUser } from '../../../runtime/vendor/a2a.ts';
import { startServer } from '../../helpers/http-server.ts';

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const update = (taskId: string, n: number): StreamResponse =>
  ({ payload: { $case: 'statusUpdate', value: { taskId, contextId: 'c', status: { state: 2, message: undefined, timestamp: '' }, metadata: { n } } } }) as unknown as StreamResponse;

/** A sender whose webhook holds the first notification unanswered until the test lets it go, and answers the rest at once. */
async function heldWebhook(taskId: string) {
  const held: ServerResponse[] = [];
  const webhook = await startServer((_req, res) => {
    if (held.length === 0 && webhook.requests.length === 1) held.push(res);
    else res.end();
  });
  const http = new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: [], allowed_addresses: [`127.0.0.1:${webhook.port}`] }));
  const store = new MemoryPushConfigs();
  const context = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '1.0' });
  const config: TaskPushNotificationConfig = { tenant: '', id: 'h', taskId, url: `${webhook.url}/hook`, token: 'x', authentication: undefined };
  await store.save(taskId, context, config);
  const warnings: string[] = [];
  const sender = new PolicyPushSender(store, http, { debug: () => {}, info: () => {}, warn: (line) => warnings.push(line) }, { timeoutMs: 60_000 });
  return { webhook, held, context, sender, warnings };
}

describe('a slow webhook', () => {
  it(`has at most ${MAX_WAITING_NOTIFICATIONS} of a task's updates waiting for it; the latest is sent`, async () => {
    const { webhook, held, context, sender, warnings } = await heldWebhook('t1');

    void sender.send(update('t1', 0), context);
    await waitFor(() => held.length === 1, 'the first notification to reach the webhook');
    for (let n = 1; n <= 200; n++) void sender.send(update('t1', n), context);
    held[0].end();
    await sender.settled();

    const sent = webhook.requests.map((r) => (JSON.parse(r.body) as { statusUpdate: { metadata: { n: number } } }).statusUpdate.metadata.n);
    expect(sent.length).toBeLessThanOrEqual(1 + MAX_WAITING_NOTIFICATIONS);
    expect(sent[0]).toBe(0);
    expect(sent.at(-1)).toBe(200);
    // In order, none twice.
    expect([...sent].sort((a, b) => a - b)).toEqual(sent);
    expect(new Set(sent).size).toBe(sent.length);
    expect(warnings.filter((line) => line.includes('fall behind'))).toHaveLength(1);
  });

  it("past it, drops the states later ones supersede before any artifact update, and sends every artifact", async () => {
    const { webhook, held, context, sender } = await heldWebhook('t2');
    const artifact = (n: number): StreamResponse =>
      ({ payload: { $case: 'artifactUpdate', value: { taskId: 't2', contextId: 'c', artifact: { artifactId: `a${n}`, parts: [] }, append: false, lastChunk: true, metadata: { n } } } }) as unknown as StreamResponse;

    void sender.send(update('t2', 0), context);
    await waitFor(() => held.length === 1, 'the first notification to reach the webhook');
    // Artifacts first, then more working states than may wait: the artifacts are the oldest waiting.
    for (let n = 1; n <= 5; n++) void sender.send(artifact(n), context);
    for (let n = 6; n <= 100; n++) void sender.send(update('t2', n), context);
    held[0].end();
    await sender.settled();

    const bodies = webhook.requests.map((r) => JSON.parse(r.body) as { statusUpdate?: { metadata: { n: number } }; artifactUpdate?: { metadata: { n: number } } });
    const artifacts = bodies.flatMap((b) => (b.artifactUpdate ? [b.artifactUpdate.metadata.n] : []));
    const states = bodies.flatMap((b) => (b.statusUpdate ? [b.statusUpdate.metadata.n] : []));
    expect(artifacts).toEqual([1, 2, 3, 4, 5]);
    expect(states[0]).toBe(0);
    expect(states.at(-1)).toBe(100);
    expect(bodies.length).toBeLessThanOrEqual(1 + MAX_WAITING_NOTIFICATIONS);
  });

  it('never drops a final state to make room, whatever waits after it', async () => {
    const { webhook, held, context, sender } = await heldWebhook('t3');
    const completed = { payload: { $case: 'statusUpdate', value: { taskId: 't3', contextId: 'c', status: { state: 3, message: undefined, timestamp: '' }, metadata: { n: 1 } } } } as unknown as StreamResponse;
    const artifact = (n: number): StreamResponse =>
      ({ payload: { $case: 'artifactUpdate', value: { taskId: 't3', contextId: 'c', artifact: { artifactId: `a${n}`, parts: [] }, append: false, lastChunk: true, metadata: { n } } } }) as unknown as StreamResponse;

    void sender.send(update('t3', 0), context);
    await waitFor(() => held.length === 1, 'the first notification to reach the webhook');
    // The final state is the oldest waiting, with nothing it supersedes: the updates after it go, not it.
    void sender.send(completed, context);
    for (let n = 2; n <= 2 + MAX_WAITING_NOTIFICATIONS; n++) void sender.send(artifact(n), context);
    held[0].end();
    await sender.settled();

    const states = webhook.requests.flatMap((r) => {
      const body = JSON.parse(r.body) as { statusUpdate?: { status: { state: string } } };
      return body.statusUpdate ? [body.statusUpdate.status.state] : [];
    });
    expect(states).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
  });
});
