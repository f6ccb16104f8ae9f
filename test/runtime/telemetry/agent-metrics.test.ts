/**
 * The agent's own metrics, recorded as it works: model tokens and calls per
 * model, approvals asked, granted and denied, turns, a fallback seen as a
 * failed model span followed by the next, and egress refusals.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { serveAgent } from '../../../runtime/server/serve.ts';
import { Agent } from '../../../runtime/agent/agent.ts';
import { FileConversations } from '../../../runtime/state/file-conversations.ts';
import { createModelClient } from '../../../runtime/agent/providers/create-model.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { approvals, egressRefusals, modelCalls, modelTokens, turns, turnsInFlight } from '../../../runtime/telemetry/forge-metrics.ts';
import { addSpanProcessor, type FinishedSpan } from '../../../runtime/telemetry/tracer.ts';
import { ok } from '../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { clientCalls } from '../../../runtime/server/client-calls.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { frontendOf, REQUEST_FRONTENDS } from '../../../runtime/telemetry/trace-request.ts';
import { repoRoot, tempDir } from '../../helpers/project.ts';
import { startScriptedOpenAI } from '../../helpers/scripted-llm.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function agentWith(baseUrls: string[]) {
  const registry = new ToolRegistry({ workDir: process.cwd() });
  registry.register({ name: 'drop_table', description: 'Drops.', category: 'custom', tags: ['write'], inputSchema: { type: 'object' }, execute: async () => ok('dropped') }, 'test');
  registry.register({ name: 'list_tables', description: 'Lists.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async () => ok('t1') }, 'test');
  const [main, ...fallbacks] = baseUrls.map((url, i) => ({ provider: 'openai' as const, name: `model-${i}`, base_url: `${url}/v1` }));
  const model = createModelClient({ ...main, fallbacks }, new HttpClient(), {});
  return new Agent({
    manifest: { agent_id: 'metrics-agent', version: '1.0.0', description: 'x' },
    tools: clientCalls(registry),
    model,
    gate: { decide: (spec) => (spec.tags.includes('write') ? 'ask' : 'allow') },
    sessions: new FileConversations(tempDir()),
  });
}

describe('tool calls the agent makes over A2A, tracing off', () => {
  // With tracing on, the agent loop's span already kept the inner count away; off, nothing did.
  it('are counted once, with frontend="agent"', async () => {
    const tool = 'counted_once';
    const llm = await startScriptedOpenAI([{ toolCalls: [{ name: tool, arguments: {} }] }, { text: 'Done.' }]);
    const registry = new ToolRegistry({ workDir: process.cwd() });
    registry.register({ name: tool, description: 'Counts.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async () => ok('counted') }, 'test');
    const manifest = { agent_id: 'metrics-agent', version: '1.0.0', description: 'x', tools: registry.list(), model: { provider: 'openai', name: 'scripted', base_url: `${llm.url}/v1` } } as unknown as AgentManifest;
    const served = await serveAgent({ manifest, registry, workDir: tempDir(), host: '127.0.0.1', port: 0, http: new HttpClient(), log: silentLogger, env: { FORGE_AUTH_TOKEN: 'metrics-token' } });
    cleanups.push(() => served.stop(100));
    const authFetch: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: 'Bearer metrics-token' } });
    const client = await new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })] })).createFromUrl(served.url);
    const message = { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text' as const, value: 'count' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
    const task = (await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined })) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const text = await (await authFetch(`${served.url}/metrics`)).text();
    expect(text.split('\n').filter((line) => line.startsWith(`forge_tool_calls_total{tool="${tool}"`))).toEqual([`forge_tool_calls_total{tool="${tool}",frontend="agent",outcome="ok"} 1`]);
  });

  it("count the conversation's own forged tool by no name: its name is that conversation's, and metrics may be public", async () => {
    const tool = 'own_secret_tool';
    const contextId = randomUUID();
    const llm = await startScriptedOpenAI([{ toolCalls: [{ name: tool, arguments: {} }] }, { text: 'Done.' }]);
    const registry = new ToolRegistry({ workDir: process.cwd() });
    registry.register({ name: tool, description: 'Forged.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async () => ok('ran'), forged: { tier: 'session', owner: `context:${contextId}` } } as never, 'test');
    const manifest = { agent_id: 'metrics-agent', version: '1.0.0', description: 'x', tools: [], model: { provider: 'openai', name: 'scripted', base_url: `${llm.url}/v1` } } as unknown as AgentManifest;
    const served = await serveAgent({ manifest, registry, workDir: tempDir(), host: '127.0.0.1', port: 0, http: new HttpClient(), log: silentLogger, env: { FORGE_AUTH_TOKEN: 'metrics-token' } });
    cleanups.push(() => served.stop(100));
    const authFetch: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: 'Bearer metrics-token' } });
    const client = await new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })] })).createFromUrl(served.url);
    const message = { messageId: randomUUID(), contextId, taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text' as const, value: 'use it' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
    const task = (await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined })) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // The model was offered the tool and its call ran.
    expect(JSON.stringify(llm.bodies.at(-1))).toContain('ran');
    const text = await (await authFetch(`${served.url}/metrics`)).text();
    expect(text).not.toContain(tool);
    expect(text).toMatch(/^forge_tool_calls_total\{tool="\(session tool\)",frontend="agent",outcome="ok"\} [1-9]/m);
  });
});

describe('agent metrics', () => {
  it('counts tokens per model, approvals asked, granted and denied, and turns', async () => {
    const llm = await startScriptedOpenAI([
      { toolCalls: [{ id: 'c1', name: 'drop_table', arguments: {} }] },
      { text: 'Dropped.' },
      { toolCalls: [{ id: 'c2', name: 'drop_table', arguments: {} }] },
      { text: 'Not dropped.' },
    ]);
    const agent = agentWith([llm.url]);
    const before = { asked: approvals.get({ decision: 'asked', by: 'policy' }), granted: approvals.get({ decision: 'granted', by: 'person' }), denied: approvals.get({ decision: 'denied', by: 'person' }), completed: turns.get({ status: 'completed' }), input: modelTokens.get({ model: 'openai:model-0', type: 'input' }) };

    expect((await agent.send('c', 'drop it')).status).toBe('input-required');
    expect((await agent.resume('c', { c1: true })).status).toBe('completed');
    expect((await agent.send('c', 'again')).status).toBe('input-required');
    expect((await agent.resume('c', { c2: false })).status).toBe('completed');

    expect(approvals.get({ decision: 'asked', by: 'policy' }) - before.asked).toBe(2);
    expect(approvals.get({ decision: 'granted', by: 'person' }) - before.granted).toBe(1);
    expect(approvals.get({ decision: 'denied', by: 'person' }) - before.denied).toBe(1);
    expect(turns.get({ status: 'completed' }) - before.completed).toBe(2);
    expect(turnsInFlight.get()).toBe(0);
    expect(modelTokens.get({ model: 'openai:model-0', type: 'input' }) - before.input).toBeGreaterThan(0);
    expect(modelCalls.get({ model: 'openai:model-0', outcome: 'ok' })).toBeGreaterThanOrEqual(4);
  });

  it('counts a call the policy allowed as granted by the policy, and a name no tool has not at all', async () => {
    const llm = await startScriptedOpenAI([{ toolCalls: [{ id: 'r1', name: 'list_tables', arguments: {} }, { id: 'r2', name: 'no_such_tool', arguments: {} }] }, { text: 'Listed.' }]);
    const agent = agentWith([llm.url]);
    const count = () => ({ granted: approvals.get({ decision: 'granted', by: 'policy' }), asked: approvals.get({ decision: 'asked', by: 'policy' }), denied: approvals.get({ decision: 'denied', by: 'policy' }) });
    const before = count();
    expect((await agent.send('g', 'list them')).status).toBe('completed');
    const after = count();
    expect({ granted: after.granted - before.granted, asked: after.asked - before.asked, denied: after.denied - before.denied }).toEqual({ granted: 1, asked: 0, denied: 0 });
  });

  it('shows each try and a fallback as a failed model span followed by the next, under the same turn', async () => {
    // Asked again twice (at once, as it says), then the fallback.
    const broken = await startScriptedOpenAI(Array.from({ length: 3 }, () => ({ status: 503, text: 'overloaded', headers: { 'retry-after-ms': '0' } })));
    const good = await startScriptedOpenAI([{ text: 'Hello from the fallback.' }]);
    const spans: FinishedSpan[] = [];
    cleanups.push(addSpanProcessor((s) => spans.push(s)));
    const outcome = await agentWith([broken.url, good.url]).send('f', 'hi');
    expect(outcome).toMatchObject({ status: 'completed', text: 'Hello from the fallback.' });
    const models = spans.filter((s) => s.name.startsWith('chat '));
    const turn = spans.find((s) => s.name === 'invoke_agent metrics-agent')!;
    expect(models.map((s) => [s.name, s.status.code])).toEqual([['chat model-0', 'error'], ['chat model-0', 'error'], ['chat model-0', 'error'], ['chat model-1', 'unset']]);
    expect(models[0].status.message).toContain('overloaded');
    for (const s of models) expect(s.parentSpanId).toBe(turn.spanId);
    expect(modelCalls.get({ model: 'openai:model-0', outcome: 'error' })).toBeGreaterThanOrEqual(1);
  });

  it('counts a request the egress policy refuses', async () => {
    const before = egressRefusals.get();
    const http = new HttpClient({ checkUrl: (url) => ({ host: url.hostname, rule: 'test rule' }), checkAddress: () => undefined });
    await expect(http.request({ url: 'http://example.test/' })).rejects.toThrow(/refused/);
    expect(egressRefusals.get() - before).toBe(1);
  });
});

describe('the README metrics table', () => {
  it('lists every frontend label forge_requests_total uses', () => {
    const row = readFileSync(join(repoRoot, 'README.md'), 'utf8').split('\n').find((line) => line.startsWith('| `forge_requests_total`'))!;
    for (const frontend of REQUEST_FRONTENDS) expect(row, frontend).toMatch(new RegExp(`[(;,] ?${frontend}\\b`));
    expect(['/readyz', '/healthz', '/.well-known/agent-card.json', '/nothing'].map(frontendOf)).toEqual(['other', 'other', 'other', 'other']);
    expect(frontendOf('/metrics')).toBe('metrics');
  });
});
