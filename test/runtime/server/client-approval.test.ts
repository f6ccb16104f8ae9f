/**
 * Token holders and the approval policy. By default (approval.clients:
 * approved) a REST or MCP caller's named tool counts as approved, as with
 * `forge tool run`; `approval.clients: policy` puts them through the same
 * rules as the model, refusing with FORGE_APPROVAL_REQUIRED what would need
 * a person (no one can be asked over REST or MCP). A2A calls are the
 * model's, always under the policy: a call that needs a person pauses the
 * task. Every front end, both modes.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ApprovalPolicy } from '../../../runtime/guard/approval-policy.ts';
import type { AgentManifest, ApprovalSettings } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { ok, type Tool } from '../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';
import { startScriptedOpenAI } from '../../helpers/scripted-llm.ts';

const TOKEN = 'approval-token';
const running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop(100)));
});

async function startAgent(clients: ApprovalSettings['clients']) {
  const llm = await startScriptedOpenAI([{ toolCalls: [{ name: 'delete_file', arguments: { path: 'old.txt' } }] }, { text: 'unreachable' }]);
  const approval: ApprovalSettings = { auto_approve: ['tag:read'], auto_deny: [], ...(clients ? { clients } : {}) };
  const registry = new ToolRegistry({ workDir: tempDir(), approval: ApprovalPolicy.create(approval) });
  const calls: string[] = [];
  const tool = (name: string, tags: string[]): Tool => ({
    name, description: `${name} tool`, category: 'custom', tags, inputSchema: { type: 'object' },
    execute: async (args) => (calls.push(name), ok({ done: name, args })),
  });
  registry.register(tool('lookup', ['read']), 'test');
  registry.register(tool('delete_file', ['write']), 'test');
  registry.register({ ...tool('tidy', ['read']), composedOf: ['delete_file'], execute: async (_args, ctx) => ctx.registry.execute('delete_file', { path: 'old.txt' }) }, 'test');
  const manifest = {
    agent_id: 'approvals', version: '1.0.0', description: '', tools: registry.list(), approval,
    model: { provider: 'openai', name: 'scripted', base_url: `${llm.url}/v1` },
  } as unknown as AgentManifest;
  const agent = await serveAgent({ manifest, registry, workDir: tempDir(), host: '127.0.0.1', port: 0, http: new HttpClient(), log: silentLogger, env: { FORGE_AUTH_TOKEN: TOKEN } });
  running.push(agent);
  return { agent, calls };
}

const rest = (agent: RunningAgent, name: string) =>
  fetch(`${agent.url}/tools/${name}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: '{"path":"old.txt"}' }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

async function mcpCall(agent: RunningAgent, name: string) {
  const client = new Client({ name: 'approval-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
  try {
    return await client.callTool({ name, arguments: { path: 'old.txt' } });
  } finally {
    await client.close();
  }
}

async function a2aTask(agent: RunningAgent): Promise<Task> {
  const authFetch: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${TOKEN}` } });
  const client = await new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })] })).createFromUrl(agent.url);
  const message: Message = { messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'delete old.txt' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
  return (await client.sendMessage({ tenant: '', message, configuration: undefined, metadata: undefined })) as Task;
}

describe('approval.clients: policy', () => {
  it('refuses a token holder\'s write call over REST with FORGE_APPROVAL_REQUIRED, and lets a read call run', async () => {
    const { agent, calls } = await startAgent('policy');
    const refused = await rest(agent, 'delete_file');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ ok: false, error: { code: 'FORGE_APPROVAL_REQUIRED', message: expect.stringContaining('tool "delete_file" needs a person\'s confirmation') } });
    expect((await rest(agent, 'lookup')).body).toMatchObject({ ok: true, value: { done: 'lookup' } });
    expect(calls).toEqual(['lookup']);
  });

  it('refuses it over MCP the same way', async () => {
    const { agent, calls } = await startAgent('policy');
    const refused = await mcpCall(agent, 'delete_file');
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('FORGE_APPROVAL_REQUIRED');
    expect((await mcpCall(agent, 'lookup')).isError).toBeFalsy();
    expect(calls).toEqual(['lookup']);
  });

  it('over A2A, the model\'s call to it waits for a person', async () => {
    const { agent, calls } = await startAgent('policy');
    const task = await a2aTask(agent);
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(calls).toEqual([]);
  });
});

describe('approval.clients: approved (the default)', () => {
  it("refuses a named tool's sub-call that needs a person as one no one can be asked about, over REST and MCP", async () => {
    const { agent, calls } = await startAgent(undefined);
    const overRest = await rest(agent, 'tidy');
    expect(overRest.body).toMatchObject({ ok: false, error: { code: 'FORGE_APPROVAL_REQUIRED', message: expect.stringContaining('there is no one to ask; it was called by tidy') } });
    const overMcp = await mcpCall(agent, 'tidy');
    expect(overMcp.isError).toBe(true);
    expect(JSON.stringify(overMcp.content)).toContain('FORGE_APPROVAL_REQUIRED');
    expect(calls).toEqual([]);
  });

  it('runs the tool a token holder names over REST and MCP, as documented', async () => {
    const { agent, calls } = await startAgent(undefined);
    expect((await rest(agent, 'delete_file')).body).toMatchObject({ ok: true });
    expect((await mcpCall(agent, 'delete_file')).isError).toBeFalsy();
    expect(calls).toEqual(['delete_file', 'delete_file']);
  });

  it('still puts the model\'s calls over A2A through the policy', async () => {
    const { agent, calls } = await startAgent('approved');
    expect((await a2aTask(agent)).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(calls).toEqual([]);
  });
});
