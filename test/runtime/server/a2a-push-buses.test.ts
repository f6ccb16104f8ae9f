/**
 * A message/stream whose push notification config is refused leaves nothing
 * behind: the SDK's streaming path makes the task's event bus before it saves
 * the config, so a refusal there (in the store) kept one bus per request.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Role } from '@a2a-js/sdk';
import type { AgentExecutor } from '@a2a-js/sdk/server';
import { buildAgentCard } from '../../../runtime/server/a2a/agent-card.ts';
import { checkedPushConfigs, refuseBadWebhooks } from '../../../runtime/server/a2a/webhook-checks.ts';
import { SubscriberBuses } from '../../../runtime/server/a2a/subscriber-buses.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { createEgressPolicy } from '../../../runtime/guard/egress.ts';
import { MemoryPushConfigs } from '../../../runtime/state/memory-push-configs.ts';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { defaultServerCallContextBuilder, DefaultRequestHandler, InMemoryTaskStore, UnauthenticatedUser } from '../../../runtime/vendor/a2a.ts';

describe('a refused webhook in message/stream', () => {
  it('is refused before the SDK makes the task its event bus', async () => {
    const http = new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: [] }));
    const store = new MemoryPushConfigs();
    const buses = new SubscriberBuses();
    const made: string[] = [];
    const create = buses.createOrGetByTaskId.bind(buses);
    buses.createOrGetByTaskId = (taskId, context) => (made.push(taskId), create(taskId, context));
    const executor: AgentExecutor = { execute: async () => {}, cancelTask: async () => {} };
    const manifest = { agent_id: 'x', version: '1', description: '', tools: [] } as unknown as AgentManifest;
    const handler = new DefaultRequestHandler(buildAgentCard(manifest, 'http://127.0.0.1:1', false), new InMemoryTaskStore(), executor, buses, checkedPushConfigs(store, http), undefined);
    refuseBadWebhooks(handler, store, http);
    const context = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '1.0' });
    const message = { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text' as const, value: 'hi' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
    const config = { tenant: '', id: '', taskId: '', url: 'http://169.254.169.254/', token: 't', authentication: undefined };
    const stream = async () => {
      for await (const event of handler.sendMessageStream({ tenant: '', message, metadata: undefined, configuration: { acceptedOutputModes: [], taskPushNotificationConfig: config, returnImmediately: false } }, context)) void event;
    };
    await expect(stream()).rejects.toThrow(/push notification config refused: .*169\.254\.169\.254/);
    expect(made.filter((taskId) => buses.getByTaskId(taskId))).toEqual([]);
  });
});
