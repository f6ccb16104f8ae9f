/**
 * The agent's A2A endpoint driven by @a2a-js/sdk's own clients — the v1.0
 * ClientFactory and the v0.3 compat transport — over real HTTP, with a
 * scripted OpenAI-compatible model on loopback.
 */
import { randomUUID } from 'node:crypto';
import { get } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport, parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import type { GateDecision } from '../../../runtime/agent/approval-gate.ts';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { MAX_FILE_CHARS } from '../../../runtime/server/a2a/a2a-messages.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { createFileStore } from '../../../runtime/state/file-store.ts';
import type { MemoryTasks } from '../../../runtime/state/memory-tasks.ts';
import type { StateStore } from '../../../runtime/state/store.ts';
import type { ToolSpec } from '../../../runtime/tools/model.ts';
import { LOOKUP_AND_DELETE, recordingTools } from '../../helpers/tool-agent.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';
import { startScriptedOpenAI, type ScriptedTurn } from '../../helpers/scripted-llm.ts';

const running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop(100)));
});

const TOKEN = 'test-token-123';

async function startAgent(script: (ScriptedTurn | ((body: Record<string, any>) => ScriptedTurn | Promise<ScriptedTurn>))[], options: { gate?: (spec: ToolSpec) => GateDecision; model?: boolean; state?: StateStore } = {}) {
  const llm = await startScriptedOpenAI(script);
  const registry = new ToolRegistry({ workDir: process.cwd() });
  const calls = recordingTools(registry, LOOKUP_AND_DELETE);
  const manifest = {
    agent_id: 'a2a-test', version: '1.2.3', description: 'An agent for A2A tests.', tools: registry.list(),
    ...(options.model === false ? {} : { model: { provider: 'openai', name: 'scripted', base_url: `${llm.url}/v1` } }),
  } as unknown as AgentManifest;
  const agent = await serveAgent({
    manifest, registry, workDir: tempDir(), host: '127.0.0.1', port: 0, http: new HttpClient(), log: silentLogger,
    env: { FORGE_AUTH_TOKEN: TOKEN },
    gate: options.gate ? { decide: options.gate } : undefined,
    state: options.state,
  });
  running.push(agent);
  return { agent, llm, calls };
}

const authFetch: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${TOKEN}` } });

function v1Client(url: string) {
  return new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })] })).createFromUrl(url);
}

function userMessage(text: string, ids: { contextId?: string; taskId?: string } = {}, data?: unknown): Message {
  const parts: Message['parts'] = [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }];
  if (data !== undefined) parts.push({ content: { $case: 'data', value: data }, metadata: undefined, filename: '', mediaType: 'application/json' });
  return { messageId: randomUUID(), contextId: ids.contextId ?? '', taskId: ids.taskId ?? '', role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] };
}

const send = (message: Message) => ({ tenant: '', message, configuration: undefined, metadata: undefined });

function artifactText(task: Task): string {
  return task.artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

describe('A2A with the v1.0 client', () => {
  it('fetches the card, with one skill per tool and bearer auth declared', async () => {
    const { agent } = await startAgent([]);
    const client = await v1Client(agent.url);
    const card = await client.getAgentCard();
    expect(card.name).toBe('a2a-test');
    expect(card.skills.map((s) => s.id)).toEqual(['delete_file', 'lookup']);
    expect(card.supportedInterfaces.map((i) => i.protocolVersion)).toEqual(['1.0', '0.3']);
    expect(Object.keys(card.securitySchemes)).toEqual(['bearer']);
  });

  it('lists tasks a page at a time, and answers a page token it did not give with a malformed-request error', async () => {
    const { agent } = await startAgent([{ text: 'one' }, { text: 'two' }, { text: 'three' }]);
    const client = await v1Client(agent.url);
    const sent: string[] = [];
    for (const text of ['one', 'two', 'three']) sent.push(((await client.sendMessage(send(userMessage(text)))) as Task).id);
    const list = (pageToken: string) => client.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 2, pageToken, historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false });
    const first = await list('');
    expect(first.tasks).toHaveLength(2);
    expect(first.totalSize).toBe(3);
    const second = await list(first.nextPageToken);
    expect(second.nextPageToken).toBe('');
    expect([...first.tasks, ...second.tasks].map((task) => task.id).sort()).toEqual([...sent].sort());
    await expect(list(Buffer.from('2').toString('base64url'))).rejects.toThrow(/pageToken is not one this server gave/);
  });

  it('completes a task that uses a tool', async () => {
    const { agent, calls, llm } = await startAgent([
      { toolCalls: [{ name: 'lookup', arguments: { city: 'Oslo' } }] },
      (body) => ({ text: `Oslo has ${JSON.parse(body.messages.at(-1).content).population} people.` }),
    ]);
    const client = await v1Client(agent.url);
    const task = (await client.sendMessage(send(userMessage('How many people live in Oslo?')))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(task)).toBe('Oslo has 709000 people.');
    expect(calls).toEqual(['lookup {"city":"Oslo"}']);
    expect(llm.bodies[0].messages[0]).toMatchObject({ role: 'system' });
  });

  it("gives the model a data part's JSON with the text, as structured input another agent sends", async () => {
    const { agent, llm } = await startAgent([{ text: 'noted' }]);
    const client = await v1Client(agent.url);
    const task = (await client.sendMessage(send(userMessage('Book this:', {}, { city: 'Oslo', nights: 2 })))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(llm.bodies[0].messages.at(-1)).toEqual({ role: 'user', content: 'Book this:\n{"city":"Oslo","nights":2}' });
  });

  it('gives the model a text file as its text, and names a file it cannot read, so that it can say so', async () => {
    const { agent, llm } = await startAgent([{ text: 'read' }]);
    const client = await v1Client(agent.url);
    const file = (filename: string, mediaType: string, bytes: Buffer): Message['parts'][number] => ({ content: { $case: 'raw', value: bytes }, metadata: undefined, filename, mediaType });
    // An emoji across the cut: the cut falls before it, not between its halves.
    const long = `${'é'.repeat(MAX_FILE_CHARS - 1)}😀${'é'.repeat(9)}`;
    const parts = [
      ...userMessage('Summarise these:').parts,
      file('notes.md', 'text/markdown', Buffer.from('# Notes\nShip on Friday.')),
      file('data.csv', '', Buffer.from('city,people\nOslo,709000\n')),
      file('photo.png', 'image/png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a])),
      file('blob', '', Buffer.from([0xff, 0xfe, 0x00, 0x01])),
      file('long.txt', 'text/plain', Buffer.from(long)),
      { content: { $case: 'url', value: 'https://example.com/report.pdf' }, metadata: undefined, filename: 'report.pdf', mediaType: 'application/pdf' } as Message['parts'][number],
    ];
    const task = (await client.sendMessage(send({ ...userMessage(''), parts }))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const sent: string = llm.bodies[0].messages.at(-1).content;
    expect(sent).toContain('Summarise these:\n[file notes.md (text/markdown)]\n# Notes\nShip on Friday.');
    expect(sent).toContain('[file data.csv (no media type)]\ncity,people\nOslo,709000');
    expect(sent).toContain('[file photo.png (image/png, 6 bytes): not shown, only text files are read]');
    expect(sent).toContain('[file blob (no media type, 4 bytes): not shown, only text files are read]');
    expect(sent).toContain(`[file long.txt (text/plain)]\n${'é'.repeat(MAX_FILE_CHARS - 1)}\n[… 11 more characters of long.txt cut]`);
    expect(sent).toContain('[file report.pdf (application/pdf) at https://example.com/report.pdf: not fetched]');
  });

  it('rejects a message with nothing in it (no parts, blank text), asking the model nothing', async () => {
    const { agent, llm } = await startAgent([{ text: 'never' }]);
    const client = await v1Client(agent.url);
    for (const parts of [[], userMessage('   ').parts]) {
      const task = (await client.sendMessage(send({ ...userMessage(''), parts }))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
      expect(task.status?.message?.parts[0].content).toMatchObject({ value: expect.stringContaining('the message has no text to act on') });
    }
    expect(llm.bodies).toHaveLength(0);
  });

  it('streams the task: working updates for the tool call, then the answer', async () => {
    const { agent } = await startAgent([{ toolCalls: [{ name: 'lookup', arguments: {} }] }, { text: 'A streamed answer.' }]);
    const client = await v1Client(agent.url);
    const kinds: string[] = [];
    let text = '';
    let finalState: TaskState | undefined;
    for await (const event of client.sendMessageStream(send(userMessage('go')))) {
      const payload = (event as { payload?: { $case: string; value: any } }).payload;
      if (!payload) continue;
      kinds.push(payload.$case);
      if (payload.$case === 'artifactUpdate' && payload.value.append) text += payload.value.artifact.parts.map((p: any) => p.content?.value ?? '').join('');
      if (payload.$case === 'artifactUpdate' && !payload.value.append && !payload.value.lastChunk) text = payload.value.artifact.parts.map((p: any) => p.content?.value ?? '').join('');
      if (payload.$case === 'statusUpdate') finalState = payload.value.status.state;
    }
    expect(kinds[0]).toBe('task');
    expect(kinds).toContain('artifactUpdate');
    expect(text).toBe('A streamed answer.');
    expect(finalState).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('pauses a task for approval and resumes it when approved in the same context', async () => {
    const { agent, calls } = await startAgent(
      [{ toolCalls: [{ id: 'call-1', name: 'delete_file', arguments: { path: 'old.txt' } }] }, (body) => ({ text: `done: ${body.messages.at(-1).content}` })],
      { gate: (spec) => (spec.tags.includes('read') ? 'allow' : 'ask') },
    );
    const client = await v1Client(agent.url);
    const paused = (await client.sendMessage(send(userMessage('delete old.txt')))) as Task;
    expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const prompt = paused.status?.message?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    expect(prompt).toContain('delete_file');
    expect(calls).toEqual([]);

    const resumed = (await client.sendMessage(send(userMessage('approve', { contextId: paused.contextId, taskId: paused.id })))) as Task;
    expect(resumed.id).toBe(paused.id);
    expect(resumed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(calls).toEqual(['delete_file {"path":"old.txt"}']);
    expect(artifactText(resumed)).toBe('done: deleted');
  });

  it.each([
    ['a write and a read sharing one id', 'dup', 'dup'],
    ['a write with the id "__proto__"', '__proto__', 'r1'],
  ])('puts the task in input-required for %s, and runs the write only once approved', async (_name, writeId, readId) => {
    const { agent, calls } = await startAgent(
      [{ toolCalls: [{ id: writeId, name: 'delete_file', arguments: { path: 'old.txt' } }, { id: readId, name: 'lookup', arguments: {} }] }, { text: 'done' }],
      { gate: (spec) => (spec.tags.includes('read') ? 'allow' : 'ask') },
    );
    const client = await v1Client(agent.url);
    const paused = (await client.sendMessage(send(userMessage('delete old.txt')))) as Task;
    expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(calls).toEqual([]);
    const approvals = paused.status?.message?.parts.flatMap((p) => (p.content?.$case === 'data' ? [(p.content.value as { approvals: { callId: string; tool: string }[] }).approvals] : []))[0];
    expect(approvals?.map((a) => a.tool)).toEqual(['delete_file']);
    // Answered call by call, under the id the request named.
    const resumed = (await client.sendMessage(send(userMessage('', { contextId: paused.contextId, taskId: paused.id }, { approvals: { [approvals![0].callId]: true } })))) as Task;
    expect(resumed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(calls.sort()).toEqual(['delete_file {"path":"old.txt"}', 'lookup {}']);
  });

  it('tells the model a refused call was denied', async () => {
    const { agent, calls } = await startAgent(
      [{ toolCalls: [{ id: 'call-1', name: 'delete_file', arguments: {} }] }, (body) => ({ text: body.messages.at(-1).content })],
      { gate: () => 'ask' },
    );
    const client = await v1Client(agent.url);
    const paused = (await client.sendMessage(send(userMessage('delete')))) as Task;
    const resumed = (await client.sendMessage(send(userMessage('', { contextId: paused.contextId, taskId: paused.id }, { approvals: { 'call-1': false } })))) as Task;
    expect(resumed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(calls).toEqual([]);
    expect(artifactText(resumed)).toContain('FORGE_APPROVAL_DENIED');
  });

  it('keeps the conversation of a context across tasks', async () => {
    const { agent, llm } = await startAgent([{ text: 'Nice to meet you, Ada.' }, (body) => ({ text: `You told me: ${body.messages[1].content}` })]);
    const client = await v1Client(agent.url);
    const first = (await client.sendMessage(send(userMessage('My name is Ada.')))) as Task;
    const second = (await client.sendMessage(send(userMessage('What is my name?', { contextId: first.contextId })))) as Task;
    expect(artifactText(second)).toBe('You told me: My name is Ada.');
    expect(llm.bodies[1].messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
  });

  it('answers a clear error when no model is configured', async () => {
    const { agent } = await startAgent([], { model: false });
    const client = await v1Client(agent.url);
    const error = await client.sendMessage(send(userMessage('hi'))).catch((e: Error) => e);
    expect(String((error as Error).message)).toContain('no model configured');
  });
});

describe('A2A tasks kept in memory (the file: store)', () => {
  it('keeps only the latest finished tasks, never a running one, and the latest stays gettable', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let asked!: () => void;
    const modelAsked = new Promise<void>((resolve) => (asked = resolve));
    const answers = Array.from({ length: 5 }, (_, i) => ({ text: `answer ${i}` }));
    const state = createFileStore(tempDir(), { tasks: { maxFinished: 3 } });
    const { agent } = await startAgent([async () => (asked(), await held, { text: 'the slow one' }), ...answers], { state });
    const client = await v1Client(agent.url);

    // A running task: its stream stays open while the model is held.
    const stream = client.sendMessageStream(send(userMessage('slow')))[Symbol.asyncIterator]();
    const first = (await stream.next()).value as { payload?: { $case: string; value: Task } };
    expect(first.payload?.$case).toBe('task');
    const runningId = first.payload!.value.id;
    await modelAsked;

    const finished: Task[] = [];
    for (let i = 0; i < 5; i++) finished.push((await client.sendMessage(send(userMessage(`quick ${i}`)))) as Task);
    expect((state.tasks as MemoryTasks).retained()).toMatchObject({ running: 1, finished: 3 });
    expect((await client.getTask({ tenant: '', id: runningId, historyLength: undefined })).status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(artifactText(await client.getTask({ tenant: '', id: finished[4].id, historyLength: undefined }))).toBe('answer 4');
    const evicted = await client.getTask({ tenant: '', id: finished[0].id, historyLength: undefined }).catch((e: Error) => e);
    expect(String((evicted as Error).message)).toMatch(/not found/i);

    release();
    while (!(await stream.next()).done);
    expect((state.tasks as MemoryTasks).retained()).toMatchObject({ running: 0, finished: 3 });
    expect(artifactText(await client.getTask({ tenant: '', id: runningId, historyLength: undefined }))).toBe('the slow one');
  });
});

describe('A2A with the v0.3 compat client', () => {
  it('fetches the v0.3 card and completes a task over message/send', async () => {
    const { agent } = await startAgent([{ toolCalls: [{ name: 'lookup', arguments: {} }] }, { text: 'Answered over v0.3.' }]);
    const raw = await (await fetch(`${agent.url}/.well-known/agent.json`)).json();
    expect(raw).toMatchObject({ protocolVersion: '0.3.0', name: 'a2a-test', preferredTransport: 'JSONRPC' });
    const card = parseLegacyAgentCard(raw);
    const transport = new LegacyJsonRpcTransport({ endpoint: card.supportedInterfaces[0].url, fetchImpl: authFetch });
    const task = (await transport.sendMessage(send(userMessage('go')))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(task)).toBe('Answered over v0.3.');
    const again = await transport.getTask({ tenant: '', id: task.id, historyLength: undefined });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('pauses for approval over v0.3 too', async () => {
    const { agent, calls } = await startAgent([{ toolCalls: [{ id: 'c9', name: 'delete_file', arguments: {} }] }, { text: 'ok' }], { gate: () => 'ask' });
    const transport = new LegacyJsonRpcTransport({ endpoint: `${agent.url}/a2a`, fetchImpl: authFetch });
    const paused = (await transport.sendMessage(send(userMessage('delete')))) as Task;
    expect(paused.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const done = (await transport.sendMessage(send(userMessage('yes', { contextId: paused.contextId, taskId: paused.id })))) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(calls).toHaveLength(1);
  });
});

describe('A2A JSON-RPC errors', () => {
  it.each([
    ['not JSON', '{oops', -32700],
    ['not an object', '[1, 2]', -32600],
    ['an unknown v0.3 method', JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/explode', params: {} }), -32601],
    ['an unknown v1.0 method', JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'ExplodeTask', params: {} }), -32601],
  ])('answers %s with the spec error code', async (_name, body, code) => {
    const { agent } = await startAgent([]);
    const response = await fetch(`${agent.url}/a2a`, { method: 'POST', body, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } });
    expect(response.status).toBe(200);
    expect(((await response.json()) as any).error.code).toBe(code);
  });

  it("names the agent in its card by the Host the client reached it by, unless that Host is no host and port: the client sends its calls, with its token, where the card says", async () => {
    const { agent } = await startAgent([]);
    const cardUrl = (host: string) =>
      new Promise<string>((resolve, reject) => {
        get(`${agent.url}/.well-known/agent-card.json`, { headers: { host } }, (res) => {
          let body = '';
          res.on('data', (d) => (body += d));
          res.on('end', () => resolve(JSON.parse(body).url));
        }).on('error', reject);
      });
    expect(await cardUrl('agent.internal:9000')).toMatch(/^http:\/\/agent\.internal:9000\//);
    const own = new URL(agent.url);
    for (const hostile of ['evil.example/steal?x=', 'evil.example#', 'user@evil.example', 'evil.example:9000/x', '[::1]/x']) {
      const url = await cardUrl(hostile);
      expect(url, hostile).toMatch(new RegExp(`^http://${own.hostname.replace(/\./g, '\\.')}:${own.port}/`));
      expect(url, hostile).not.toContain('evil');
    }
  });

  it('refuses calls without the token, but serves the card and health', async () => {
    const { agent } = await startAgent([]);
    expect((await fetch(`${agent.url}/a2a`, { method: 'POST', body: '{}' })).status).toBe(401);
    expect((await fetch(`${agent.url}/tools`)).status).toBe(401);
    expect((await fetch(`${agent.url}/tools`, { headers: { authorization: 'Bearer wrong-token-123' } })).status).toBe(401);
    expect((await fetch(`${agent.url}/.well-known/agent-card.json`)).status).toBe(200);
    expect((await fetch(`${agent.url}/healthz`)).status).toBe(200);
  });
});
