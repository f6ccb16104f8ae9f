/**
 * What an operator finds in a replica's log (`--log-format json`) when a
 * task goes wrong: two replicas of a built bundle on a real PostgreSQL. A
 * task that ends failed — the model refused it, or the replica was stopped
 * before the turn finished — is named in the log of the replica that ran it,
 * with its context: its status reaches only the client that asked. And a
 * trace collector that is away is said when it goes and when it is back.
 * And in /metrics a task its client canceled is no error. A replica that
 * refuses to start says why with a code and a hint a log pipeline can read.
 * A call still running when a stop's grace period ends is answered, not cut.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProcess } from '../../helpers/agent-process.ts';
import { fleetParts, getTask, sendMessage, startReplica, waitUntil } from '../../helpers/fleet.ts';
import { startAgentProcess } from '../../helpers/agent-process.ts';
import { freePort } from '../../helpers/free-port.ts';
import type { TestPostgres } from '../../helpers/postgres.ts';
import { runProcess, tempDir } from '../../helpers/project.ts';

let postgres: TestPostgres;
let bundle: string;
let asked = 0;

/** The model: refuses "refuse" (HTTP 400, which is not asked again), never answers "hang", answers the rest. */
function model(body: Record<string, any>) {
  const text = String(body.messages.at(-1).content);
  asked++;
  if (text === 'refuse') return { status: 400 };
  if (text === 'hang') return new Promise<never>(() => {});
  return { text: `ok: ${text}` };
}

beforeAll(async () => {
  // Tools that say they started (a file in the work dir), then run past any grace period.
  const waits = Object.fromEntries(['rest', 'mcp'].map((via) => [`tools/wait_${via}.py`, `"""\nTool: wait_${via}\nDescription: Starts, then sleeps a minute.\nTags: read\n"""\nimport time\n\ndef execute(args):\n    open("started-${via}", "w").close()\n    time.sleep(60)\n    return "slept"\n`]));
  ({ postgres, bundle } = await fleetParts(model, 1000, { tools: ['uuid_generate'], files: waits }));
}, 60_000);

afterAll(async () => {
  await postgres?.stop();
});

const logLines = (replica: AgentProcess) =>
  replica
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: string; msg: string });

describe('a failed task in the log of the replica that ran it', () => {
  it('names the task and its context, whether the model failed it or a stop cut its turn short', async () => {
    const stateUrl = await postgres.createDatabase(`oplog_${process.pid}`);
    const env = { FORGE_LOG_FORMAT: 'json', OPENAI_API_KEY: 'k', FORGE_DRAIN_DELAY: '0s', FORGE_SHUTDOWN_GRACE: '1s' };
    const [first, second] = await Promise.all([0, 1].map(() => startReplica({ bundle, stateUrl, publicUrl: 'http://agent.test', env })));
    try {
      const refused = await sendMessage(first.url, { text: 'refuse', contextId: 'ctx-refused' });
      expect(refused.status.state).toBe('failed');
      const line = logLines(first).find((l) => l.msg.includes(refused.id));
      expect(line).toMatchObject({ level: 'warn', msg: expect.stringMatching(new RegExp(`^task ${refused.id} \\(context ctx-refused\\) failed: openai:scripted: HTTP 400`)) });

      // A turn the model never answers, on the other replica, which is then stopped: its grace ends first.
      const before = asked;
      const hung = await sendMessage(second.url, { text: 'hang', contextId: 'ctx-hung' }, false);
      await waitUntil(() => (asked > before ? true : undefined), 15_000, 'the turn to reach the model');
      expect(await second.stop('SIGTERM')).toBe(0);
      expect(logLines(second)).toContainEqual({ time: expect.any(String), level: 'warn', msg: `task ${hung.id} (context ctx-hung) failed: the agent stopped before the task finished; send it again` });
      // The other replica sees the task failed in the store, as its client will.
      expect((await getTask(first.url, hung.id)).status.state).toBe('failed');
      // A task that completes is no warning.
      const done = await sendMessage(first.url, { text: 'hello', contextId: 'ctx-done' });
      expect(done.status.state).toBe('completed');
      expect(logLines(first).filter((l) => l.level === 'warn' && l.msg.startsWith('task '))).toHaveLength(1);
    } finally {
      await Promise.all([first.stop('SIGKILL'), second.stop('SIGKILL')]);
    }
  });
});

/** A span as OTLP/JSON carries it (the fields these tests read). */
interface ReceivedSpan {
  name: string;
  status: { code?: number; message?: string };
  attributes: { key: string; value: { stringValue?: string } }[];
  events: { name: string }[];
}

/** An OTLP/HTTP receiver on `port` that keeps the names of the spans it gets, and the spans. */
async function startCollector(port: number): Promise<{ spans: string[]; received: ReceivedSpan[]; close(): Promise<void> }> {
  const spans: string[] = [];
  const received: ReceivedSpan[] = [];
  const server: Server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    for (const resource of JSON.parse(body).resourceSpans) for (const scope of resource.scopeSpans) for (const span of scope.spans) spans.push(span.name), received.push(span);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { spans, received, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

describe('a trace collector that is away for a while', () => {
  it('is said when it goes, when traces are sent again (with the spans lost), and when it goes again', async () => {
    const port = await freePort();
    const env = { FORGE_AUTH_TOKEN: 'operator-token', FORGE_LOG_FORMAT: 'json', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_BSP_SCHEDULE_DELAY: '50' };
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env });
    const call = async () => expect((await fetch(`${agent.url}/tools/uuid_generate`, { method: 'POST', headers: { authorization: 'Bearer operator-token', 'content-type': 'application/json' }, body: '{}' })).status).toBe(200);
    const warnings = () => logLines(agent).filter((l) => l.msg.startsWith('traces could not be sent'));
    try {
      // Down at start (a collector sidecar not up yet): said once.
      await call();
      await agent.waitFor('traces could not be sent');
      expect(warnings()).toEqual([expect.objectContaining({ level: 'warn', msg: expect.stringContaining(`http://127.0.0.1:${port}/v1/traces: connect ECONNREFUSED`) })]);

      // Up: the next batch goes through, and the log says so with what was lost.
      const collector = await startCollector(port);
      await call();
      await agent.waitFor('traces: sent to');
      expect(logLines(agent)).toContainEqual(expect.objectContaining({ level: 'info', msg: expect.stringMatching(new RegExp(`^traces: sent to http://127\\.0\\.0\\.1:${port}/v1/traces again, after \\d+ failed batch(es)? over \\d+ s \\([1-9]\\d* spans? lost\\)$`)) }));
      await waitUntil(() => (collector.spans.includes('execute_tool uuid_generate') ? true : undefined), 15_000, 'the span to reach the collector');

      // Down again: a new outage is a new warning.
      await collector.close();
      await call();
      await waitUntil(() => (warnings().length === 2 ? true : undefined), 15_000, 'a second warning');
    } finally {
      await agent.stop('SIGKILL');
    }
  });
});

describe('a task its client cancels, in /metrics and in its trace', () => {
  it('counts its turn and its model call as canceled, not as errors an alert would fire on; its invoke_agent span is no error, and says canceled', async () => {
    const token = 'operator-token';
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const collectorPort = await freePort();
    const collector = await startCollector(collectorPort);
    const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collectorPort}`, OTEL_BSP_SCHEDULE_DELAY: '50' };
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: token, OPENAI_API_KEY: 'k', ...tracing } });
    try {
      const before = asked;
      const message = { kind: 'message', role: 'user', messageId: 'cancel-me', parts: [{ kind: 'text', text: 'hang' }] };
      const sent = await fetch(`${agent.url}/a2a`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message, configuration: { blocking: false } } }) });
      const task = ((await sent.json()) as { result: { id: string } }).result;
      await waitUntil(() => (asked > before ? true : undefined), 15_000, 'the turn to reach the model');
      const canceled = await fetch(`${agent.url}/a2a`, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/cancel', params: { id: task.id } }) });
      expect(((await canceled.json()) as { result: { status: { state: string } } }).result.status.state).toBe('canceled');
      const scraped = await waitUntil(async () => {
        const text = await (await fetch(`${agent.url}/metrics`, { headers })).text();
        return /^forge_turns_total\{/m.test(text) ? text : undefined;
      }, 15_000, 'the turn to be counted');
      const samples = scraped.split('\n').filter((line) => /^forge_(turns_total|model_calls_total)\{/.test(line));
      expect(samples).toEqual(['forge_model_calls_total{model="openai:scripted",outcome="canceled"} 1', 'forge_turns_total{status="canceled"} 1']);

      const turn = await waitUntil(() => collector.received.find((span) => span.name.startsWith('invoke_agent ')), 15_000, 'the turn span to reach the collector');
      expect(turn.status.code ?? 0).toBe(0); // unset: no error
      expect(turn.attributes).toContainEqual({ key: 'forge.turn.status', value: { stringValue: 'canceled' } });
      expect(turn.events.map((e) => e.name)).toEqual(['forge.turn.canceled']);
      // Its model call too, as forge_model_calls_total counts it.
      const chat = await waitUntil(() => collector.received.find((span) => span.name.startsWith('chat ')), 15_000, 'the model span to reach the collector');
      expect(chat.status.code ?? 0).toBe(0);
      expect(chat.events.map((e) => e.name)).toEqual(['forge.model.canceled']);
    } finally {
      await agent.stop('SIGKILL');
      await collector.close();
    }
  });
});

describe('a replica that refuses to start', () => {
  it('says why with FORGE_SERVE_CONFIG and a hint, as fields of their own in JSON: a shared store without a public URL or a token, --no-auth off loopback', async () => {
    const stateUrl = await postgres.createDatabase(`refusals_${process.pid}`);
    const serve = (env: NodeJS.ProcessEnv, args: string[] = []) => runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0', ...args], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: undefined, FORGE_PUBLIC_URL: undefined, FORGE_STATE_URL: undefined, ...env } });
    const refusals = [
      { env: { FORGE_STATE_URL: stateUrl, FORGE_AUTH_TOKEN: 'tok' }, says: 'needs FORGE_PUBLIC_URL', hint: /^set FORGE_PUBLIC_URL \(the same for every replica\)/, exit: 1 },
      { env: { FORGE_STATE_URL: stateUrl, FORGE_PUBLIC_URL: 'https://agent.example.com' }, says: 'needs one token for every replica', hint: /^give every replica the same token/, exit: 1 },
      { env: { FORGE_HOST: '0.0.0.0' }, args: ['--no-auth'], says: '--no-auth is only allowed on a loopback host', hint: /^serve on 127\.0\.0\.1/, exit: 2 },
    ];
    for (const { env, args, says, hint, exit } of refusals) {
      const json = await serve({ ...env, FORGE_LOG_FORMAT: 'json' }, args);
      expect(json.code, json.stderr).toBe(exit);
      const line = json.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).find((l) => l.level === 'error');
      expect(line, json.stderr).toMatchObject({ code: 'FORGE_SERVE_CONFIG', hint: expect.stringMatching(hint), msg: expect.stringContaining(says) });
    }
    // In text, the code and the hint on lines of their own.
    const text = await serve(refusals[0].env);
    expect(text.code).toBe(1);
    expect(text.stderr).toMatch(/^error: FORGE_SERVE_CONFIG a shared state store \(replicas\) needs FORGE_PUBLIC_URL.*\nhint: set FORGE_PUBLIC_URL/m);
  });
});

describe("a call still running when a stop's grace period ends", () => {
  it('is answered before its connection closes: REST with 503, Retry-After and why, MCP with an error result', async () => {
    const token = 'operator-token';
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const cwd = tempDir();
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd, env: { FORGE_AUTH_TOKEN: token, FORGE_SHUTDOWN_GRACE: '1s' } });
    const rest = fetch(`${agent.url}/tools/wait_rest`, { method: 'POST', headers, body: '{}' });
    const mcp = fetch(`${agent.url}/mcp`, { method: 'POST', headers: { ...headers, accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'wait_mcp', arguments: {} } }) });
    await waitUntil(() => (existsSync(join(cwd, 'started-rest')) && existsSync(join(cwd, 'started-mcp')) ? true : undefined), 20_000, 'both calls to start');
    const exit = agent.stop('SIGTERM');
    const restAnswer = await rest;
    expect(restAnswer.status).toBe(503);
    expect(restAnswer.headers.get('retry-after')).toBe('1');
    expect(await restAnswer.json()).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_CANCELLED', message: 'tool "wait_rest" was stopped: the agent is shutting down and the call did not finish within its grace period', hint: 'send the call again' } });
    expect(await (await mcp).json()).toMatchObject({ jsonrpc: '2.0', id: 7, result: { isError: true, content: [{ type: 'text', text: expect.stringContaining('FORGE_TOOL_CANCELLED') }] } });
    expect(await exit).toBe(0);
  });
});
