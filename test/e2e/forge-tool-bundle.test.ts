/**
 * Agents that forge tools, end to end: a built bundle with `emergent:`, a
 * scripted model on loopback (the OpenAI wire format) driven over A2A by
 * @a2a-js/sdk's client, and MCP clients (the SDK's) over Streamable HTTP.
 * The model forges add_numbers (sandboxed code) and a composition of two
 * builtins, then calls them in the next turn; a tool that disagrees with
 * its expectedOutput is refused with the difference; sandbox escapes are
 * refused with the server healthy after each; a session's tools stay in it.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.ts';
import { startServer, type TestServer } from '../helpers/http-server.ts';
import { deployBundle, forge, minimalConfig, tempDir, writeProject } from '../helpers/project.ts';
import { startScriptedOpenAI, type ScriptedServer } from '../helpers/scripted-llm.ts';
import { addNumbers, calcJson } from '../helpers/forge-requests.ts';

const TOKEN = 'forge-tool-token';

const addWrong = { ...addNumbers, name: 'add_wrong', implementation: { mode: 'sandbox', code: 'function execute(input) { return { sum: input.a * input.b }; }' } };

let llm: ScriptedServer;
let target: TestServer;
let agent: AgentProcess;
let bundleDir: string;

/** The model: "forge" → three forge_tool calls; "use" → calls to the new tools; tool results → a text that quotes them. */
function model(body: Record<string, any>) {
  const last = body.messages.at(-1);
  if (last.role === 'user' && last.content.includes('forge')) {
    return { toolCalls: [addNumbers, calcJson, addWrong].map((request) => ({ name: 'forge_tool', arguments: request })) };
  }
  if (last.role === 'user' && last.content.includes('use')) {
    return { toolCalls: [{ name: 'add_numbers', arguments: { a: 40, b: 2 } }, { name: 'calc_json', arguments: { expression: '2+3' } }] };
  }
  const sinceUser = body.messages.slice(body.messages.findLastIndex((m: any) => m.role === 'user'));
  const results = sinceUser.filter((m: any) => m.role === 'tool').map((m: any) => m.content);
  return { text: JSON.stringify(results) };
}

beforeAll(async () => {
  llm = await startScriptedOpenAI(Array.from({ length: 100 }, () => model));
  target = await startServer((_req, res) => res.end('should never be reached'));
  const project = writeProject({
    'forge.yaml': minimalConfig(
      `model:\n  provider: openai\n  name: scripted\n  base_url: ${llm.url}/v1\ntools: [math_calculate, json_parse]\nemergent: { timeout: 2, memory: 48 }\napproval:\n  auto_approve: ["tag:read", "name:forge_tool"]\n`,
    ),
  });
  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stderr).toBe(0);
  const { bundle } = deployBundle(project);
  bundleDir = bundle;
  agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: TOKEN, FORGE_MCP_SESSIONS: 'stateful' } });
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  await new Promise<void>((resolve) => target.server.close(() => resolve()));
  await new Promise<void>((resolve) => llm.server.close(() => resolve()));
});

const authFetch: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${TOKEN}` } });

function userMessage(text: string, contextId = ''): Message {
  return { messageId: randomUUID(), contextId, taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

const send = (message: Message) => ({ tenant: '', message, configuration: undefined, metadata: undefined });
const artifactText = (task: Task) => task.artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

async function mcpClient(): Promise<Client> {
  const client = new Client({ name: 'forge-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
  return client;
}

async function healthy(): Promise<void> {
  expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);
}

describe('forge_tool over A2A', () => {
  it('forges add_numbers and a composition, refuses the wrong tool with the difference, and calls the new tools in the next turn', async () => {
    const a2a = await new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })] })).createFromUrl(agent.url);
    const forged = (await a2a.sendMessage(send(userMessage('please forge the tools')))) as Task;
    const results = JSON.parse(artifactText(forged)).map((text: string) => JSON.parse(text));
    expect(results[0]).toMatchObject({ success: true, tool: 'add_numbers', tier: 'session', verdict: { approved: true } });
    expect(results[1], JSON.stringify(results[1])).toMatchObject({ success: true, tool: 'calc_json', tier: 'session' });
    expect(results[2]).toMatchObject({ success: false, tool: 'add_wrong', errors: [{ code: 'FORGE_FORGE_TEST_FAILED' }] });
    expect(results[2].testResults[0]).toMatchObject({ input: { a: 1, b: 2 }, expected: { sum: 3 }, actual: { sum: 2 }, passed: false });
    expect(results[2].testResults[0].diff).toMatch(/-\s+"sum": 3[\s\S]*\+\s+"sum": 2/);
    const forgeRequest = llm.bodies.findIndex((b) => b.messages.at(-1).content === 'please forge the tools');
    expect(llm.bodies[forgeRequest].tools.map((t: any) => t.function.name)).not.toContain('add_numbers');

    const used = (await a2a.sendMessage(send(userMessage('now use them', forged.contextId)))) as Task;
    const useRequest = llm.bodies.findIndex((b) => b.messages.at(-1).content === 'now use them');
    const offered = llm.bodies[useRequest].tools.map((t: any) => t.function.name);
    expect(offered).toEqual(expect.arrayContaining(['add_numbers', 'calc_json']));
    expect(offered).not.toContain('add_wrong');
    const [sum, calc] = JSON.parse(artifactText(used)).map((text: string) => JSON.parse(text));
    expect(sum).toEqual({ sum: 42 });
    expect(calc).toEqual({ result: 5 });

    // Another conversation neither is offered the tools nor can call them.
    const other = (await a2a.sendMessage(send(userMessage('use them too')))) as Task;
    const otherRequest = llm.bodies.findIndex((b) => b.messages.at(-1).content === 'use them too');
    expect(llm.bodies[otherRequest].tools.map((t: any) => t.function.name)).not.toContain('add_numbers');
    expect(artifactText(other)).toContain('FORGE_TOOL_UNKNOWN');

    // Nor do REST and MCP callers.
    const listed = (await (await authFetch(`${agent.url}/tools`)).json()) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).not.toContain('add_numbers');
    expect((await authFetch(`${agent.url}/tools/add_numbers`, { method: 'POST', body: '{"a":1,"b":1}' })).status).toBe(404);
    const mcp = await mcpClient();
    try {
      expect((await mcp.listTools()).tools.map((t) => t.name)).not.toContain('add_numbers');
    } finally {
      await mcp.close();
    }
  });
});

describe('forge_tool over MCP', () => {
  it('forges a tool, tells the session its tool list changed, lists and runs it; another session does not see it', async () => {
    const client = await mcpClient();
    const other = await mcpClient();
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => void changed++);
    try {
      const request = { ...addNumbers, name: 'mcp_add' };
      const result = await client.callTool({ name: 'forge_tool', arguments: request });
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ success: true, tool: 'mcp_add', tier: 'session' });
      await expect.poll(() => changed, { timeout: 15_000 }).toBeGreaterThan(0);
      const listed = (await client.listTools()).tools.find((t) => t.name === 'mcp_add');
      expect(listed).toMatchObject({ description: 'Add two numbers.', outputSchema: addNumbers.outputSchema });
      expect((await client.callTool({ name: 'mcp_add', arguments: { a: 2, b: 2 } })).structuredContent).toEqual({ sum: 4 });

      expect((await other.listTools()).tools.map((t) => t.name)).not.toContain('mcp_add');
      const refused = await other.callTool({ name: 'mcp_add', arguments: { a: 2, b: 2 } });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('FORGE_TOOL_UNKNOWN');
    } finally {
      await client.close();
      await other.close();
    }
  });

  const probe = {
    name: 'escape_probe',
    description: 'Tries to get out of its sandbox when asked.',
    inputSchema: { type: 'object', properties: { mode: { type: 'string' } }, required: ['mode'] },
    outputSchema: {},
    implementation: {
      mode: 'sandbox',
      code: `async function execute(input) {
        switch (input.mode) {
          case 'ok': return { ok: true };
          case 'read': return require('node:fs').readFileSync('/etc/passwd', 'utf8');
          case 'write': return process.mainModule.require('fs').writeFileSync('/tmp/forge-escape', 'x');
          case 'spawn': return require('child_process').execSync('id').toString();
          case 'network': return await fetch(input.url);
          case 'constructor': return ({}).constructor.constructor('return process')().pid;
          case 'loop': while (true) {}
          case 'memory': { const a = []; while (true) a.push(new Array(1e6).fill(7)); }
          case 'huge': return 'x'.repeat(5e6);
        }
      }`,
    },
    testCases: [{ input: { mode: 'ok' }, expectedOutput: { ok: true } }],
  };

  const ESCAPES: [string, Record<string, unknown>, RegExp][] = [
    ['reading a file', { mode: 'read' }, /require is not defined/],
    ['writing a file', { mode: 'write' }, /process is not defined/],
    ['spawning a process', { mode: 'spawn' }, /require is not defined/],
    ['the network', { mode: 'network' }, /not in the allowlist/],
    ["constructor.constructor('return process')()", { mode: 'constructor' }, /Code generation from strings disallowed/],
    ['an endless loop', { mode: 'loop' }, /FORGE_SANDBOX_TIMEOUT/],
    ['a memory bomb', { mode: 'memory' }, /FORGE_SANDBOX_MEMORY/],
    ['a huge result', { mode: 'huge' }, /the limit is 1048576/],
  ];

  let client: Client;
  beforeAll(async () => {
    client = await mcpClient();
    const forged = await client.callTool({ name: 'forge_tool', arguments: probe });
    expect(forged.structuredContent, JSON.stringify(forged.content)).toMatchObject({ success: true });
  }, 60_000);
  afterAll(() => client?.close());

  it.each(ESCAPES)('refuses %s, and the server stays healthy', async (_name, args, message) => {
    const result = await client.callTool({ name: 'escape_probe', arguments: { ...args, url: `${target.url}/leak` } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toMatch(message);
    await healthy();
    expect((await client.callTool({ name: 'escape_probe', arguments: { mode: 'ok' } })).structuredContent).toEqual({ ok: true });
    expect(target.requests).toEqual([]);
  });

  it('counts the calls its caps stopped (time, memory, output) in /metrics, under the label of a session\'s own tool', async () => {
    const text = await (await authFetch(`${agent.url}/metrics`)).text();
    // escape_probe is the MCP session's own tool: counted, by no name (metrics may be public).
    expect(text).not.toContain('escape_probe');
    const stopped = /^forge_sandbox_refusals_total\{tool="\(session tool\)"\} (\d+)$/m.exec(text);
    expect(stopped, text.split("\n").filter((l) => /sandbox|session tool/.test(l)).join("\n")).not.toBeNull();
    // The endless loop, the memory bomb and the huge result above; not the escapes refused by the code's own errors.
    expect(Number(stopped?.[1])).toBe(3);
  });
});

describe('forge_tool over MCP stdio', () => {
  it('forges for the stdio session, tells it the list changed, and runs the tool', async () => {
    const client = new Client({ name: 'forge-test', version: '1.0.0' });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => void changed++);
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [join(bundleDir, 'runtime.mjs'), '--stdio'], cwd: tempDir(), stderr: 'pipe' }));
    try {
      const forged = await client.callTool({ name: 'forge_tool', arguments: { ...addNumbers, name: 'stdio_add' } });
      expect(forged.structuredContent, JSON.stringify(forged.content)).toMatchObject({ success: true, tier: 'session' });
      await expect.poll(() => changed, { timeout: 15_000 }).toBeGreaterThan(0);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('stdio_add');
      expect((await client.callTool({ name: 'stdio_add', arguments: { a: 1.5, b: 1 } })).structuredContent).toEqual({ sum: 2.5 });
    } finally {
      await client.close();
    }
  });
});

describe('forge_tool without a session', () => {
  it('refuses a session-tier forge over stateless MCP and REST, naming what to do', async () => {
    const response = await authFetch(`${agent.url}/tools/forge_tool`, { method: 'POST', body: JSON.stringify({ ...addNumbers, name: 'rest_add' }) });
    const body = (await response.json()) as { value: { success: boolean; errors: { code: string; hint: string }[] } };
    expect(body.value).toMatchObject({ success: false, errors: [{ code: 'FORGE_FORGE_NO_SESSION', hint: expect.stringContaining('scope: agent') }] });

    const stateless = await startAgentProcess(process.execPath, [join(bundleDir, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: TOKEN } });
    try {
      const client = new Client({ name: 'forge-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${stateless.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } }));
      const refused = await client.callTool({ name: 'forge_tool', arguments: { ...addNumbers, name: 'stateless_add' } });
      expect(refused.structuredContent).toMatchObject({ success: false, errors: [{ code: 'FORGE_FORGE_NO_SESSION' }] });
      await client.close();
    } finally {
      await stateless.stop();
    }
  });
});

describe('forge_tool under the default approval policy', () => {
  it('pauses the A2A task for a person, and forges once approved', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(`model:\n  provider: openai\n  name: scripted\n  base_url: ${llm.url}/v1\ntools: [math_calculate, json_parse]\nemergent: true\n`) });
    expect((await forge(['build'], project)).code).toBe(0);
    const guarded = await startAgentProcess(process.execPath, [join(project, '.forge-output', 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: TOKEN } });
    try {
      const a2a = await new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })] })).createFromUrl(guarded.url);
      const paused = (await a2a.sendMessage(send(userMessage('forge under guard')))) as Task;
      expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const approved = (await a2a.sendMessage(send({ ...userMessage('approve', paused.contextId), taskId: paused.id }))) as Task;
      expect(approved.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(JSON.parse(JSON.parse(artifactText(approved))[0])).toMatchObject({ success: true, tool: 'add_numbers' });
    } finally {
      await guarded.stop();
    }
  }, 120_000);
});
