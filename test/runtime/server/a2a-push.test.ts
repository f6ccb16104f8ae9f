/**
 * A2A push notifications, driven by @a2a-js/sdk's own clients over real
 * HTTP: a client registers a webhook (a real HTTP server on loopback, which
 * forge.yaml's egress.allowed_addresses lets the agent reach), and the agent
 * POSTs the task's updates there with the config's token — up to completed,
 * and when the task pauses for approval. A webhook the egress policy does not
 * allow (another loopback port, the cloud metadata address, plain http to a
 * public address) is refused when it is set and never called. With the
 * Postgres store, a webhook set through one replica is called by another.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Role, Task, TaskState, type Message, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import { defaultServerCallContextBuilder, UnauthenticatedUser } from '@a2a-js/sdk/server';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { LegacyJsonRpcTransport } from '@a2a-js/sdk/compat/v0_3/client';
import type { GateDecision } from '../../../runtime/agent/approval-gate.ts';
import { createEgressPolicy } from '../../../runtime/guard/egress.ts';
import type { AgentManifest, EgressSettings } from '../../../runtime/manifest.ts';
import { HttpClient, type HostLookup } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import type { PushDelivery } from '../../../runtime/server/a2a/push-notifications.ts';
import { createFileStore } from '../../../runtime/state/file-store.ts';
import { MemoryPushConfigs } from '../../../runtime/state/memory-push-configs.ts';
import { openPostgresStore } from '../../../runtime/state/postgres-store.ts';
import type { StateStore } from '../../../runtime/state/store.ts';
import type { Logger, ToolSpec } from '../../../runtime/tools/model.ts';
import { LOOKUP_AND_DELETE, recordingTools } from '../../helpers/tool-agent.ts';
import { ToolRegistry } from '../../../runtime/tools/registry.ts';
import { startServer, type TestServer } from '../../helpers/http-server.ts';
import { freePort } from '../../helpers/free-port.ts';
import { startPostgres, type TestPostgres } from '../../helpers/postgres.ts';
import { deployBundle, forge, minimalConfig, tempDir, writeProject } from '../../helpers/project.ts';
import { startAgentProcess } from '../../helpers/agent-process.ts';
import { startScriptedOpenAI, type ScriptedServer, type ScriptedTurn } from '../../helpers/scripted-llm.ts';

const TOKEN = 'agent-token-456';
const HOOK_TOKEN = 'hook-secret-789';

const running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop(100)));
});

interface Options {
  /** forge.yaml's egress: default, the model's port and the webhook's allowed on loopback. */
  egress?: (llm: ScriptedServer) => EgressSettings;
  gate?: (spec: ToolSpec) => GateDecision;
  state?: StateStore;
  port?: number;
  lookup?: HostLookup;
  log?: Logger;
  llm?: ScriptedServer;
  pushDelivery?: PushDelivery;
}

/** Lines the agent logged, to see what a failed notification says. */
function capturingLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, debug: () => {}, info: () => {}, warn: (line) => lines.push(line) };
}

async function startAgent(script: (ScriptedTurn | ((body: Record<string, any>) => ScriptedTurn))[], webhook: TestServer, options: Options = {}) {
  const llm = options.llm ?? (await startScriptedOpenAI(script));
  const registry = new ToolRegistry({ workDir: process.cwd() });
  const calls = recordingTools(registry, LOOKUP_AND_DELETE);
  const egress = options.egress?.(llm) ?? { mode: 'allowlist', allowed_domains: [], allowed_addresses: [`127.0.0.1:${llm.port}`, `127.0.0.1:${webhook.port}`] };
  const manifest = {
    agent_id: 'push-test', version: '1.0.0', description: 'An agent for push notification tests.', tools: registry.list(),
    model: { provider: 'openai', name: 'scripted', base_url: `${llm.url}/v1` },
    egress,
  } as unknown as AgentManifest;
  const log = options.log ?? capturingLog();
  const agent = await serveAgent({
    manifest, registry, workDir: tempDir(), host: '127.0.0.1', port: options.port ?? 0,
    // As the bundle builds it (runtime/assemble.ts): the agent's one client, under forge.yaml's egress.
    http: new HttpClient(createEgressPolicy(egress), options.lookup ? { lookup: options.lookup } : {}),
    log,
    env: { FORGE_AUTH_TOKEN: TOKEN },
    gate: options.gate ? { decide: options.gate } : undefined,
    state: options.state,
    // Replicas share a store: each names itself (the client goes where the card says).
    publicUrl: options.port ? `http://127.0.0.1:${options.port}` : undefined,
    pushDelivery: { retryDelayMs: 20, ...options.pushDelivery },
  });
  running.push(agent);
  return { agent, llm, calls, log };
}

const authFetch: typeof fetch = (input, init) => fetch(input, { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${TOKEN}` } });

function v1Client(url: string) {
  return new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })] })).createFromUrl(url);
}

function userMessage(text: string, ids: { contextId?: string; taskId?: string } = {}): Message {
  return { messageId: randomUUID(), contextId: ids.contextId ?? '', taskId: ids.taskId ?? '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

const pushConfig = (url: string, taskId = '', id = ''): TaskPushNotificationConfig => ({ tenant: '', id, taskId, url, token: HOOK_TOKEN, authentication: undefined });

const send = (message: Message, push?: TaskPushNotificationConfig) => ({
  tenant: '', message, metadata: undefined,
  configuration: push ? { acceptedOutputModes: [], taskPushNotificationConfig: push, returnImmediately: false } : undefined,
});

/** A webhook that answers 200 (or what `status` says for the nth request). */
const startWebhook = (status: (n: number) => number = () => 200) => {
  let n = 0;
  return startServer((_req, res) => {
    res.statusCode = status(++n);
    res.end();
  });
};

/** The task state a v1.0 notification (a StreamResponse as JSON) carries. */
function v1State(body: string): string | undefined {
  const parsed = JSON.parse(body) as { task?: { status?: { state?: string } }; statusUpdate?: { status?: { state?: string } } };
  return (parsed.task ?? parsed.statusUpdate)?.status?.state;
}

async function waitFor<T>(check: () => T | undefined, what: string, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const statesOf = (webhook: TestServer) => webhook.requests.map((r) => v1State(r.body));
const reached = (webhook: TestServer, state: string) => () => (statesOf(webhook).includes(state) ? true : undefined);

describe('A2A push notifications (file: store)', () => {
  it('says so in the agent card, v1.0 and v0.3', async () => {
    const webhook = await startWebhook();
    const { agent } = await startAgent([], webhook);
    const card = await (await v1Client(agent.url)).getAgentCard();
    expect(card.capabilities?.pushNotifications).toBe(true);
    const legacy = (await (await fetch(`${agent.url}/.well-known/agent.json`)).json()) as { capabilities: unknown };
    expect(legacy.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
  });

  it('is not offered in the card under egress deny-all, where every webhook would be refused', async () => {
    const webhook = await startWebhook();
    const { agent } = await startAgent([], webhook, { egress: () => ({ mode: 'deny-all', allowed_domains: [], allowed_addresses: [] }) });
    expect((await (await v1Client(agent.url)).getAgentCard()).capabilities?.pushNotifications).toBe(false);
    const legacy = (await (await fetch(`${agent.url}/.well-known/agent.json`)).json()) as { capabilities: unknown };
    expect(legacy.capabilities).toMatchObject({ streaming: true, pushNotifications: false });
  });

  it("POSTs a task's updates up to completed to the webhook message/send names, with its token", async () => {
    const webhook = await startWebhook();
    const { agent } = await startAgent([{ toolCalls: [{ name: 'lookup', arguments: { city: 'Oslo' } }] }, { text: 'Oslo has 709000 people.' }], webhook);
    const client = await v1Client(agent.url);
    const task = (await client.sendMessage(send(userMessage('How many people live in Oslo?'), pushConfig(`${webhook.url}/hook`)))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    await waitFor(reached(webhook, 'TASK_STATE_COMPLETED'), 'the completed notification');
    const states = statesOf(webhook);
    expect(states[0]).toBe('TASK_STATE_SUBMITTED');
    expect(states).toContain('TASK_STATE_WORKING');
    expect(states.at(-1)).toBe('TASK_STATE_COMPLETED');
    for (const request of webhook.requests) {
      expect(request).toMatchObject({ method: 'POST', url: '/hook' });
      expect(request.headers['x-a2a-notification-token']).toBe(HOOK_TOKEN);
      expect(request.headers['content-type']).toBe('application/a2a+json');
      expect(request.headers.authorization).toBeUndefined();
      const body = JSON.parse(request.body);
      expect((body.task ?? body.statusUpdate ?? body.artifactUpdate).taskId ?? body.task.id).toBe(task.id);
    }
    // The config is the task's: listed under it, with the id the agent gave it.
    const { configs } = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
    expect(configs).toEqual([expect.objectContaining({ taskId: task.id, url: `${webhook.url}/hook`, token: HOOK_TOKEN, id: expect.stringMatching(/.+/) })]);
  });

  it('notifies a task paused for approval (input-required), and, with a webhook set on the paused task over v0.3, its end; get, list and delete work', async () => {
    const paused = await startWebhook();
    const later = await startWebhook();
    const { agent, calls } = await startAgent(
      [{ toolCalls: [{ id: 'call-1', name: 'delete_file', arguments: { path: 'old.txt' } }] }, { text: 'done' }],
      paused,
      { gate: (spec) => (spec.tags.includes('read') ? 'allow' : 'ask'), egress: (llm) => ({ mode: 'allowlist', allowed_domains: [], allowed_addresses: [`127.0.0.1:${llm.port}`, `127.0.0.1:${paused.port}`, `127.0.0.1:${later.port}`] }) },
    );
    const client = await v1Client(agent.url);
    const task = (await client.sendMessage(send(userMessage('delete old.txt'), pushConfig(`${paused.url}/first`, '', 'first')))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await waitFor(reached(paused, 'TASK_STATE_INPUT_REQUIRED'), 'the input-required notification');
    expect(paused.requests.every((r) => r.headers['x-a2a-notification-token'] === HOOK_TOKEN)).toBe(true);

    // A second webhook, set over v0.3 on the paused task: it gets v0.3's body (the task itself).
    const legacy = new LegacyJsonRpcTransport({ endpoint: `${agent.url}/a2a`, fetchImpl: authFetch });
    const set = await legacy.createTaskPushNotificationConfig(pushConfig(`${later.url}/second`, task.id, 'second'));
    expect(set).toMatchObject({ id: 'second', taskId: task.id, url: `${later.url}/second` });
    expect(await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'second' })).toMatchObject({ url: `${later.url}/second`, token: HOOK_TOKEN });
    const listed = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
    expect(listed.configs.map((c) => c.id).sort()).toEqual(['first', 'second']);

    // The first is deleted: the task's end goes to the second only.
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'first' });
    await expect(client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'first' })).rejects.toThrow(/not found/);
    expect((await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })).configs.map((c) => c.id)).toEqual(['second']);
    const before = paused.requests.length;

    const done = (await client.sendMessage(send(userMessage('approve', { contextId: task.contextId, taskId: task.id })))) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(calls).toEqual(['delete_file {"path":"old.txt"}']);
    const last = await waitFor(() => later.requests.map((r) => JSON.parse(r.body)).find((body) => body.status?.state === 'completed'), 'the completed notification over v0.3');
    expect(last).toMatchObject({ kind: 'task', id: task.id });
    expect(later.requests.every((r) => r.url === '/second' && r.headers['x-a2a-notification-token'] === HOOK_TOKEN)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(paused.requests.length).toBe(before);
  });

  it('refuses, when it is set, a webhook the egress policy does not allow — another loopback port, the metadata address, plain http to a public one — and never calls it', async () => {
    const webhook = await startWebhook();
    const stranger = await startWebhook();
    // The webhook's port is allowed; the stranger's (also on loopback) is not. 93.184.215.14 is a public address the domains list allows (nothing connects to it).
    const { agent, llm } = await startAgent([{ text: 'fine' }], webhook, { egress: (llm) => ({ mode: 'allowlist', allowed_domains: ['93.184.215.14'], allowed_addresses: [`127.0.0.1:${llm.port}`, `127.0.0.1:${webhook.port}`] }) });
    const client = await v1Client(agent.url);

    // In message/send: the request is refused and the message never runs.
    await expect(client.sendMessage(send(userMessage('hi'), pushConfig(`${stranger.url}/hook`)))).rejects.toThrow(/push notification config refused: the agent's egress policy refuses http:\/\/127\.0\.0\.1:\d+\/hook: 127\.0\.0\.1 is allowed only on port/);
    // So is a streamed one.
    const streamed = async () => {
      for await (const event of client.sendMessageStream(send(userMessage('hi'), pushConfig('http://169.254.169.254/')))) void event;
    };
    await expect(streamed()).rejects.toThrow(/push notification config refused: .*169\.254\.169\.254/);
    expect(llm.bodies).toHaveLength(0);

    const task = (await client.sendMessage(send(userMessage('hi')))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const refused = async (url: string, pattern: RegExp) => {
      await expect(client.createTaskPushNotificationConfig(pushConfig(url, task.id))).rejects.toThrow(pattern);
      const legacy = new LegacyJsonRpcTransport({ endpoint: `${agent.url}/a2a`, fetchImpl: authFetch });
      await expect(legacy.createTaskPushNotificationConfig(pushConfig(url, task.id))).rejects.toThrow(pattern);
    };
    await refused(`${stranger.url}/hook`, /127\.0\.0\.1 is allowed only on port/);
    await refused('http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local|metadata/);
    await refused('http://localhost:1/', /localhost|loopback|not in egress\.allowed_domains/);
    await refused('http://93.184.215.14/hook', /plain http to a public address: a webhook must be https/);
    await refused('ftp://example.com/hook', /must be an https URL/);
    // https to the allowed public address is taken (nothing is sent to it for a finished task).
    await expect(client.createTaskPushNotificationConfig(pushConfig('https://93.184.215.14/hook', task.id, 'public'))).resolves.toMatchObject({ id: 'public' });
    const { configs } = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
    expect(configs.map((c) => c.url)).toEqual(['https://93.184.215.14/hook']);
    // At most ten webhooks a task: an eleventh is refused, one of the ten set again is not.
    for (let i = 1; i < 10; i++) await client.createTaskPushNotificationConfig(pushConfig(`https://93.184.215.14/hook${i}`, task.id, `h${i}`));
    await expect(client.createTaskPushNotificationConfig(pushConfig('https://93.184.215.14/eleven', task.id, 'eleven'))).rejects.toThrow(/has 10 already, the most it may have; delete one first/);
    await expect(client.createTaskPushNotificationConfig(pushConfig('https://93.184.215.14/again', task.id, 'h3'))).resolves.toMatchObject({ id: 'h3' });
    expect((await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })).configs).toHaveLength(10);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(stranger.requests).toEqual([]);
    expect(webhook.requests).toEqual([]);
  });

  it('refuses a config larger than MAX_PUSH_CONFIG_BYTES (a huge token or URL), over v1.0 and v0.3, in set and in message/send', async () => {
    const webhook = await startWebhook();
    const { agent, llm } = await startAgent([{ text: 'fine' }], webhook);
    const client = await v1Client(agent.url);
    const huge = { ...pushConfig(`${webhook.url}/hook`), token: 'k'.repeat(64 * 1024) };
    await expect(client.sendMessage(send(userMessage('hi'), huge))).rejects.toThrow(/push notification config refused: the config is \d+ bytes, more than the 8192/);
    expect(llm.bodies).toHaveLength(0);
    const task = (await client.sendMessage(send(userMessage('hi')))) as Task;
    await expect(client.createTaskPushNotificationConfig({ ...huge, taskId: task.id })).rejects.toThrow(/more than the 8192/);
    const legacy = new LegacyJsonRpcTransport({ endpoint: `${agent.url}/a2a`, fetchImpl: authFetch });
    await expect(legacy.createTaskPushNotificationConfig({ ...pushConfig(`${webhook.url}/hook?${'q'.repeat(64 * 1024)}`), taskId: task.id })).rejects.toThrow(/more than the 8192/);
    expect((await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })).configs).toEqual([]);
    // A usual one is taken.
    await expect(client.createTaskPushNotificationConfig(pushConfig(`${webhook.url}/hook`, task.id, 'usual'))).resolves.toMatchObject({ id: 'usual' });
  });

  it('checks the webhook again when it sends: a name that now resolves to the metadata address is not called', async () => {
    // Each connection closed after its answer: each notification connects anew, by the name as it resolves then
    // (a kept-alive connection goes on to the address it was checked for).
    const webhook = await startServer((_req, res) => res.setHeader('connection', 'close').end());
    let address = '127.0.0.1';
    const lookup: HostLookup = (_name, _options, callback) => callback(null, [{ address, family: 4 }]);
    const log = capturingLog();
    const { agent } = await startAgent(
      [{ toolCalls: [{ id: 'c1', name: 'delete_file', arguments: {} }] }, { text: 'done' }],
      webhook,
      { gate: () => 'ask', lookup, log, egress: (llm) => ({ mode: 'allowlist', allowed_domains: ['hooks.example'], allowed_addresses: [`127.0.0.1:${llm.port}`, `127.0.0.1:${webhook.port}`] }) },
    );
    const client = await v1Client(agent.url);
    const url = `http://hooks.example:${webhook.port}/hook`;
    const task = (await client.sendMessage(send(userMessage('delete'), pushConfig(url)))) as Task;
    await waitFor(reached(webhook, 'TASK_STATE_INPUT_REQUIRED'), 'the input-required notification');
    const before = webhook.requests.length;
    // The name now points at the cloud metadata address.
    address = '169.254.169.254';
    const done = (await client.sendMessage(send(userMessage('yes', { contextId: task.contextId, taskId: task.id })))) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    await waitFor(() => (log.lines.some((line) => line.includes('169.254.169.254')) ? true : undefined), 'the refusal in the log');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(webhook.requests.length).toBe(before);
    expect(log.lines.find((line) => line.includes('169.254.169.254'))).toMatch(new RegExp(`push notification for task ${task.id} to http://hooks\\.example:\\d+/hook failed: .*refused.*169\\.254\\.169\\.254`));
  });

  it('tries a failing webhook again a bounded number of times, never failing the task, and logs the failure without the token', async () => {
    // The completed notification is answered 503 once, then 200: it arrives on its second try. (An earlier state
    // answered 503 would not be tried again once the task has ended: the final state is queued behind it.)
    let refusedOnce = false;
    const flaky = await startServer((req, res) => {
      const refuse = !refusedOnce && v1State(req.body) === 'TASK_STATE_COMPLETED';
      refusedOnce ||= refuse;
      res.writeHead(refuse ? 503 : 200).end();
    });
    const broken = await startWebhook(() => 500);
    const log = capturingLog();
    const { agent } = await startAgent([{ text: 'one' }, { text: 'two' }], flaky, {
      log,
      egress: (llm) => ({ mode: 'allowlist', allowed_domains: [], allowed_addresses: [`127.0.0.1:${llm.port}`, `127.0.0.1:${flaky.port}`, `127.0.0.1:${broken.port}`] }),
    });
    const client = await v1Client(agent.url);
    const first = (await client.sendMessage(send(userMessage('one'), pushConfig(`${flaky.url}/hook?key=query-secret`)))) as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // The 503'd body came again, and arrived.
    const completed = () => flaky.requests.filter((r) => v1State(r.body) === 'TASK_STATE_COMPLETED');
    await waitFor(() => (completed().length === 2 ? true : undefined), 'the completed notification, tried again');
    expect(completed()[0].body).toBe(completed()[1].body);

    const second = (await client.sendMessage(send(userMessage('two'), pushConfig(`${broken.url}/hook?key=query-secret`)))) as Task;
    expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const failures = () => log.lines.filter((line) => line.includes(`push notification for task ${second.id}`));
    // The completed notification tried three times, then logged as failed: never more. (An earlier state is tried
    // three times too, unless the task ends meanwhile: then its final state is queued, and the earlier one given up.)
    const completedTries = () => statesOf(broken).filter((state) => state === 'TASK_STATE_COMPLETED').length;
    await waitFor(() => (completedTries() === 3 && failures().length > 0 ? true : undefined), 'the completed notification failed in the log');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(completedTries()).toBe(3);
    for (const line of failures()) expect(line).toMatch(/to http:\/\/127\.0\.0\.1:\d+\/hook\?… failed after 3 tries: the webhook answered 500/);
    for (const line of log.lines) {
      expect(line).not.toContain(HOOK_TOKEN);
      expect(line).not.toContain('query-secret');
    }
    expect(log.lines.filter((line) => line.includes(first.id))).toEqual([]);
  });
  it("a task the file store drops (past its finished-task limit) takes its webhooks with it", async () => {
    const webhook = await startWebhook();
    const state = createFileStore(tempDir(), { tasks: { maxFinished: 1 } });
    const { agent } = await startAgent([{ text: 'one' }, { text: 'two' }], webhook, { state });
    const client = await v1Client(agent.url);
    const first = (await client.sendMessage(send(userMessage('one'), pushConfig(`${webhook.url}/hook`)))) as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((state.pushConfigs as MemoryPushConfigs).size).toBe(1);
    // Another task finishes: the first is dropped, and its config with it.
    await client.sendMessage(send(userMessage('two')));
    await expect(client.getTask({ tenant: '', id: first.id, historyLength: 0 })).rejects.toThrow(/not found/i);
    expect((state.pushConfigs as MemoryPushConfigs).size).toBe(0);
  });

  it('a set on a task the file store drops while the webhook is checked is answered task not found, and not kept', async () => {
    const webhook = await startWebhook();
    // Lookups are held while `holding`: the set waits in its check of the webhook's name.
    const held: (() => void)[] = [];
    let holding = false;
    const lookup: HostLookup = (_name, _options, callback) => {
      const answer = () => callback(null, [{ address: '127.0.0.1', family: 4 }]);
      if (holding) held.push(answer);
      else answer();
    };
    const state = createFileStore(tempDir(), { tasks: { maxFinished: 1 } });
    const egress = (llm: ScriptedServer): EgressSettings => ({ mode: 'allowlist', allowed_domains: ['hooks.example'], allowed_addresses: [`127.0.0.1:${llm.port}`, `127.0.0.1:${webhook.port}`] });
    const { agent } = await startAgent([{ text: 'one' }, { text: 'two' }], webhook, { state, lookup, egress });
    const client = await v1Client(agent.url);
    const first = (await client.sendMessage(send(userMessage('one')))) as Task;
    holding = true;
    const set = client.createTaskPushNotificationConfig(pushConfig(`http://hooks.example:${webhook.port}/hook`, first.id, 'late')).then(
      () => 'kept',
      (err: unknown) => String(err),
    );
    await waitFor(() => (held.length ? true : undefined), 'the set checking its webhook');
    holding = false;
    await client.sendMessage(send(userMessage('two')));
    for (const answer of held) answer();
    expect(await set).toMatch(/not found/i);
    expect((state.pushConfigs as MemoryPushConfigs).size).toBe(0);
    expect(webhook.requests).toEqual([]);
  });
});

describe('A2A push notifications (Postgres store, two replicas)', () => {
  let postgres: TestPostgres;
  beforeAll(async () => {
    postgres = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    await postgres?.stop();
  });

  it('a webhook set through one replica is called by the replica that runs the task', async () => {
    const url = await postgres.createDatabase('push_replicas');
    const webhook = await startWebhook();
    const llm = await startScriptedOpenAI([{ toolCalls: [{ id: 'c1', name: 'delete_file', arguments: { path: 'x' } }] }, { text: 'done on b' }]);
    const stores: StateStore[] = [];
    const replica = async () => {
      const state = await openPostgresStore({ url, leaseMs: 2000 });
      stores.push(state);
      return (await startAgent([], webhook, { llm, state, port: await freePort(), gate: (spec) => (spec.tags.includes('read') ? 'allow' : 'ask') })).agent;
    };
    try {
      const a = await replica();
      const b = await replica();
      const clientA = await v1Client(a.url);
      const task = (await clientA.sendMessage(send(userMessage('delete x')))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      await clientA.createTaskPushNotificationConfig(pushConfig(`${webhook.url}/hook`, task.id, 'hook'));
      // Replica a is gone: only the store knows the webhook.
      await a.stop(100);
      expect(webhook.requests).toEqual([]);

      const clientB = await v1Client(b.url);
      expect((await clientB.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })).configs.map((c) => c.id)).toEqual(['hook']);
      const done = (await clientB.sendMessage(send(userMessage('approve', { contextId: task.contextId, taskId: task.id })))) as Task;
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      await waitFor(reached(webhook, 'TASK_STATE_COMPLETED'), 'the completed notification from replica b');
      expect(webhook.requests.every((r) => r.headers['x-a2a-notification-token'] === HOOK_TOKEN && r.url === '/hook')).toBe(true);
    } finally {
      await Promise.all(running.splice(0).map((r) => r.stop(100)));
      await Promise.all(stores.map((s) => s.close()));
    }
  }, 60_000);

  it("sends a task's final state again from the store once a webhook that refused every try is back", async () => {
    const url = await postgres.createDatabase('push_finals');
    let up = false;
    const answered: number[] = [];
    const webhook = await startWebhook(() => {
      answered.push(up ? 200 : 503);
      return answered[answered.length - 1];
    });
    const state = await openPostgresStore({ url, leaseMs: 2000 });
    try {
      // Looked for in the store every 100 ms; a claim holds for twice the try's deadline (1 s).
      const { agent } = await startAgent([{ text: 'done' }], webhook, { state, port: await freePort(), pushDelivery: { timeoutMs: 500, finalGraceMs: 0, finalRetryMs: 100 } });
      const client = await v1Client(agent.url);
      const task = (await client.sendMessage(send(userMessage('hi'), pushConfig(`${webhook.url}/hook`)))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const completed = () => webhook.requests.flatMap((r, i) => (v1State(r.body) === 'TASK_STATE_COMPLETED' ? [answered[i]] : []));
      await waitFor(() => (completed().length >= 3 ? true : undefined), 'the three tries of the completed notification');
      up = true;
      await waitFor(() => (completed().includes(200) ? true : undefined), 'the completed notification, sent again from the store');
      const sql = new pg.Client({ connectionString: url });
      await sql.connect();
      try {
        const until = Date.now() + 10_000;
        while (!(await sql.query('SELECT final_settled FROM forge_push_configs')).rows[0]?.final_settled) {
          if (Date.now() > until) throw new Error('timed out waiting for the config to be settled');
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      } finally {
        await sql.end();
      }
      expect(completed().filter((status) => status === 200)).toHaveLength(1);
    } finally {
      await Promise.all(running.splice(0).map((r) => r.stop(100)));
      await state.close();
    }
  }, 60_000);

  // The look for final states not sent lived in the A2A endpoints, made at the first A2A or MCP request: a replica
  // started after the one that ran the task stopped, and asked nothing (the client waits for its webhook), never looked.
  it("sends a final state the replica that ran the task left unsent, from a replica that has served no request", async () => {
    const url = await postgres.createDatabase('push_finals_idle');
    const webhook = await startWebhook();
    const state = await openPostgresStore({ url, leaseMs: 2000 });
    try {
      // What the stopped replica left: the task finished in the store, its webhook set, the final state not sent.
      const id = randomUUID();
      await state.tasks.save(Task.fromJSON({ id, contextId: 'ctx', status: { state: 'TASK_STATE_COMPLETED', timestamp: new Date().toISOString() } }));
      const context = defaultServerCallContextBuilder({ extensions: undefined, user: new UnauthenticatedUser(), headers: {}, requestedVersion: '1.0' });
      expect(await state.pushConfigs.saveWithin(id, context, pushConfig(`${webhook.url}/hook`, id, 'hook'), 10, true)).toBe('saved');
      await startAgent([], webhook, { state, port: await freePort(), pushDelivery: { finalGraceMs: 0, finalRetryMs: 100 } });
      await waitFor(reached(webhook, 'TASK_STATE_COMPLETED'), 'the completed notification, sent from the store by the idle replica');
      expect(webhook.requests.map((r) => r.url)).toEqual(['/hook']);
    } finally {
      await Promise.all(running.splice(0).map((r) => r.stop(100)));
      await state.close();
    }
  }, 60_000);

  it('keeps the ten-webhook limit under concurrent sets on one task', async () => {
    const url = await postgres.createDatabase('push_limit');
    const webhook = await startWebhook();
    const state = await openPostgresStore({ url, leaseMs: 2000 });
    try {
      const { agent } = await startAgent([{ text: 'fine' }], webhook, { state, port: await freePort() });
      const client = await v1Client(agent.url);
      const task = (await client.sendMessage(send(userMessage('hi')))) as Task;
      const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => client.createTaskPushNotificationConfig(pushConfig(`${webhook.url}/hook${i}`, task.id, `h${i}`))));
      const { configs } = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
      expect(configs).toHaveLength(10);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
      for (const r of results) if (r.status === 'rejected') expect(String(r.reason)).toMatch(/has 10 already, the most it may have/);
    } finally {
      await Promise.all(running.splice(0).map((r) => r.stop(100)));
      await state.close();
    }
  }, 60_000);
});

describe('A2A push notifications from the built bundle', () => {
  it("follows forge.yaml's egress: a webhook allowed_addresses lists gets the v0.3 task with the token; the metadata address is refused", async () => {
    const webhook = await startWebhook();
    const llm = await startScriptedOpenAI([{ text: 'Answered from the bundle.' }]);
    const project = writeProject({
      'forge.yaml': minimalConfig(`model:\n  provider: openai\n  name: scripted\n  base_url: ${llm.url}/v1\negress:\n  mode: allowlist\n  allowed_domains: []\n  allowed_addresses: ["127.0.0.1:${webhook.port}"]\n`),
    });
    const built = await forge(['build', '--prod'], project);
    expect(built.code, built.stderr).toBe(0);
    const { bundle, workDir } = deployBundle(project);
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: workDir, env: { FORGE_AUTH_TOKEN: TOKEN, OPENAI_API_KEY: 'sk-test' } });
    try {
      const rpc = async (method: string, params: unknown) => {
        const response = await fetch(`${agent.url}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
        return (await response.json()) as { result?: any; error?: { code: number; message: string } };
      };
      const message = { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'hello' }] };
      const metadata = await rpc('message/send', { message: { ...message, messageId: randomUUID() }, configuration: { pushNotificationConfig: { url: 'http://169.254.169.254/latest/meta-data/', token: HOOK_TOKEN } } });
      expect(metadata.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^push notification config refused: the agent's egress policy refuses http:\/\/169\.254\.169\.254\/latest\/meta-data\/: .*metadata/) });
      expect(llm.bodies).toHaveLength(0);

      // Not blocking: the client goes, and the webhook hears how the task ends.
      const sent = await rpc('message/send', { message, configuration: { blocking: false, pushNotificationConfig: { url: `${webhook.url}/hook`, token: HOOK_TOKEN } } });
      expect(sent.result).toMatchObject({ kind: 'task', status: { state: 'submitted' } });
      const completed = await waitFor(() => webhook.requests.map((r) => JSON.parse(r.body)).find((body) => body.status?.state === 'completed'), 'the completed notification');
      expect(completed).toMatchObject({ kind: 'task', id: sent.result.id });
      expect(webhook.requests.every((r) => r.headers['x-a2a-notification-token'] === HOOK_TOKEN)).toBe(true);
      const listed = await rpc('tasks/pushNotificationConfig/list', { id: sent.result.id });
      expect(listed.result).toEqual([expect.objectContaining({ taskId: sent.result.id, pushNotificationConfig: expect.objectContaining({ url: `${webhook.url}/hook` }) })]);
    } finally {
      await agent.stop();
    }
  }, 90_000);
});
