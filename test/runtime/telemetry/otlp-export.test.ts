/**
 * Traces of a real turn reach a real OTLP/HTTP receiver on loopback: the
 * A2A request, the turn, each model call and the tool call, with the
 * incoming W3C traceparent honoured, the parent/child links intact, the
 * context sent on to the model server, and content only when asked for.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { configureTraceContent } from '../../../runtime/telemetry/trace-content.ts';
import { ok } from '../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { startServer } from '../../helpers/http-server.ts';
import { tempDir } from '../../helpers/project.ts';
import { startScriptedOpenAI } from '../../helpers/scripted-llm.ts';

const TOKEN = 'otlp-test-token';
const running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop(100)));
  configureTraceContent(process.env);
});

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
  status: { code: number };
}

async function startReceiver() {
  const batches: any[] = [];
  const server = await startServer((req, res) => {
    if (req.url === '/v1/traces' && req.method === 'POST') batches.push({ headers: req.headers, body: JSON.parse(req.body) });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  const spans = (): OtlpSpan[] => batches.flatMap((b) => b.body.resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans)));
  return { server, batches, spans };
}

function attr(span: OtlpSpan, key: string): unknown {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value && Object.values(value)[0];
}

async function until<T>(read: () => T | undefined, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function startTracedAgent(extraEnv: Record<string, string> = {}) {
  const receiver = await startReceiver();
  const llm = await startScriptedOpenAI([
    { toolCalls: [{ id: 'call_lookup', name: 'lookup', arguments: { city: 'Lyon', api_key: 'sk-should-not-appear' } }] },
    { text: 'Lyon has 522,000 people.', cachedTokens: 256 },
  ]);
  const registry = new ToolRegistry({ workDir: process.cwd() });
  registry.register({ name: 'lookup', description: 'Looks a city up.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async () => ok({ population: 522000 }) }, 'test');
  const manifest = { agent_id: 'traced-agent', version: '0.3.0', description: 'Traced.', tools: registry.list(), model: { provider: 'openai', name: 'scripted', base_url: `${llm.url}/v1` } } as unknown as AgentManifest;
  const env = { FORGE_AUTH_TOKEN: TOKEN, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.server.url, OTEL_EXPORTER_OTLP_HEADERS: 'x-team=forge%20dev', OTEL_SERVICE_NAME: 'forge-under-test', OTEL_BSP_SCHEDULE_DELAY: '50', ...extraEnv };
  const agent = await serveAgent({ manifest, registry, workDir: tempDir(), host: '127.0.0.1', port: 0, http: new HttpClient(), log: silentLogger, env });
  running.push(agent);
  return { agent, llm, receiver };
}

const INCOMING_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const INCOMING_SPAN = '00f067aa0ba902b7';

async function sendMessage(url: string, text: string) {
  const response = await fetch(`${url}/a2a`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', traceparent: `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text }] } } }),
  });
  expect(response.status).toBe(200);
  return response.json();
}

describe('OTLP/HTTP trace export', () => {
  it('sends the spans of a turn with the incoming traceparent honoured and parent/child links intact', async () => {
    const { agent, llm, receiver } = await startTracedAgent();
    await sendMessage(agent.url, 'How many people live in Lyon?');
    const spans = await until(() => {
      const all = receiver.spans();
      return all.some((s) => s.name.startsWith('POST /a2a')) && all.filter((s) => s.name.startsWith('chat ')).length === 2 ? all : undefined;
    }, 'the request span and both model calls');

    const byName = (prefix: string) => spans.filter((s) => s.name.startsWith(prefix));
    const [request] = byName('POST /a2a');
    const [turn] = byName('invoke_agent traced-agent');
    const models = byName('chat scripted');
    const [tool] = byName('execute_tool lookup');
    for (const span of spans) expect(span.traceId).toBe(INCOMING_TRACE);
    expect(request.parentSpanId).toBe(INCOMING_SPAN);
    expect(request.kind).toBe(2); // SERVER
    expect(attr(request, 'http.response.status_code')).toBe('200');
    expect(turn.parentSpanId).toBe(request.spanId);
    expect(attr(turn, 'gen_ai.operation.name')).toBe('invoke_agent');
    for (const model of models) {
      expect(model.parentSpanId).toBe(turn.spanId);
      expect(model.kind).toBe(3); // CLIENT
      expect(attr(model, 'gen_ai.request.model')).toBe('scripted');
      expect(attr(model, 'gen_ai.provider.name')).toBe('openai');
      expect(Number(attr(model, 'gen_ai.usage.input_tokens'))).toBeGreaterThan(0);
      expect(Number(attr(model, 'gen_ai.usage.output_tokens'))).toBeGreaterThan(0);
    }
    // What the provider's prompt cache served, on the call it served.
    expect(models.map((m) => attr(m, 'gen_ai.usage.cache_read.input_tokens')).sort()).toEqual(['256', undefined]);
    expect(tool.parentSpanId).toBe(turn.spanId);
    expect(attr(tool, 'gen_ai.tool.name')).toBe('lookup');
    expect(attr(tool, 'gen_ai.tool.call.id')).toBe('call_lookup');
    expect(attr(tool, 'forge.tool.category')).toBe('custom');
    expect(attr(tool, 'forge.approval.decision')).toBe('allow');
    // Content is off by default: no arguments, no results, no messages.
    expect(JSON.stringify(spans)).not.toContain('Lyon');

    // The model server was called with the model span's context.
    const sent = llm.requests.map((r) => r.headers.traceparent);
    expect(sent).toEqual(models.map((m) => `00-${INCOMING_TRACE}-${m.spanId}-01`));
    // The standard variables: headers and the service name.
    expect(receiver.batches[0].headers['x-team']).toBe('forge dev');
    const resource = receiver.batches[0].body.resourceSpans[0].resource.attributes;
    expect(resource).toContainEqual({ key: 'service.name', value: { stringValue: 'forge-under-test' } });
  });

  it('records arguments and results with FORGE_TRACE_CONTENT=1, with secrets masked', async () => {
    const { agent, receiver } = await startTracedAgent({ FORGE_TRACE_CONTENT: '1', MY_SERVICE_TOKEN: 'tok-super-secret-value' });
    await sendMessage(agent.url, 'Lyon? my token is tok-super-secret-value');
    const tool = await until(() => receiver.spans().find((s) => s.name === 'execute_tool lookup'), 'the tool span');
    expect(attr(tool, 'gen_ai.tool.call.arguments')).toBe('{"city":"Lyon","api_key":"[REDACTED]"}');
    expect(attr(tool, 'gen_ai.tool.call.result')).toBe('{"population":522000}');
    const model = await until(() => receiver.spans().find((s) => s.name.startsWith('chat ')), 'a model span');
    expect(String(attr(model, 'gen_ai.input.messages'))).toContain('my token is [REDACTED]');
    expect(JSON.stringify(receiver.batches.map((b) => b.body))).not.toContain('tok-super-secret-value');
    expect(JSON.stringify(receiver.batches.map((b) => b.body))).not.toContain('sk-should-not-appear');
  });

  it('masks the model keys of a custom api_key_env and of a _FILE variable in spans, logs and the task status', async () => {
    // Names no name-based rule recognises as secret: only the runtime knows they hold keys.
    const mainKey = 'fk-main-0123456789abcdef';
    const fileKey = 'fk-file-9876543210fedcba';
    const keyFile = join(tempDir(), 'fallback-key');
    writeFileSync(keyFile, `${fileKey}\n`);
    const receiver = await startReceiver();
    // The main model gets the tool's result holding both keys, then its gateway echoes the key it was sent; so does the fallback's.
    // Each failure three times: asked again twice (at once, as it says) before the next model.
    const thrice = (text: string) => Array.from({ length: 3 }, () => ({ status: 500, text, headers: { 'retry-after-ms': '0' } }));
    const main = await startScriptedOpenAI([{ toolCalls: [{ id: 'call_notes', name: 'read_notes', arguments: {} }] }, ...thrice(`invalid x-api-key: Bearer ${mainKey}`)]);
    const fallback = await startScriptedOpenAI(thrice(`key ${fileKey} is revoked`));
    const registry = new ToolRegistry({ workDir: process.cwd() });
    registry.register({ name: 'read_notes', description: 'Reads notes.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async () => ok({ text: `FAKE=${mainKey}\nFILE=${fileKey}` }) }, 'test');
    const model = { provider: 'openai', name: 'scripted', base_url: `${main.url}/v1`, api_key_env: 'FAKE_KEY', fallbacks: [{ provider: 'openai', name: 'backup', base_url: `${fallback.url}/v1`, api_key_env: 'BACKUP_CREDS' }] };
    const manifest = { agent_id: 'traced-agent', version: '0.3.0', description: 'Traced.', tools: registry.list(), model } as unknown as AgentManifest;
    const logs: string[] = [];
    const log = { debug: (m: string) => logs.push(m), info: (m: string) => logs.push(m), warn: (m: string) => logs.push(m) };
    const env = { FORGE_AUTH_TOKEN: TOKEN, FORGE_TRACE_CONTENT: '1', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.server.url, OTEL_BSP_SCHEDULE_DELAY: '50', FAKE_KEY: mainKey, BACKUP_CREDS_FILE: keyFile };
    const agent = await serveAgent({ manifest, registry, workDir: tempDir(), host: '127.0.0.1', port: 0, http: new HttpClient(), log, env });
    running.push(agent);

    const answer = await sendMessage(agent.url, 'read my notes');
    // The keys did reach the models (the runtime read them), so their absence below is masking.
    expect(main.requests[0].headers.authorization).toBe(`Bearer ${mainKey}`);
    expect(fallback.requests[0].headers.authorization).toBe(`Bearer ${fileKey}`);
    const status = JSON.stringify(answer);
    expect(status).toContain('every model failed');
    expect(status).toContain('invalid x-api-key: Bearer [REDACTED]');
    const tool = await until(() => receiver.spans().find((s) => s.name === 'execute_tool read_notes'), 'the tool span');
    expect(attr(tool, 'gen_ai.tool.call.result')).toBe(JSON.stringify({ text: 'FAKE=[REDACTED]\nFILE=[REDACTED]' }));
    await until(() => (receiver.spans().filter((s) => s.name.startsWith('chat ')).length === 7 ? true : undefined), 'the seven model spans');
    const exported = JSON.stringify(receiver.batches.map((b) => b.body));
    expect(exported).toContain('[REDACTED]');
    expect(logs.join('\n')).toMatch(/failed for task \S+ \(context \S+\), trying the next/);
    expect(logs.join('\n')).toMatch(/failed for task \S+ \(context \S+\), asking it again in 0\.0 s/);
    for (const key of [mainKey, fileKey]) {
      expect(status).not.toContain(key);
      expect(exported).not.toContain(key);
      expect(logs.join('\n')).not.toContain(key);
    }
  });

  it('starts a new trace when the incoming traceparent is malformed', async () => {
    const { agent, receiver } = await startTracedAgent();
    const response = await fetch(`${agent.url}/tools/lookup`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, traceparent: '00-zz-bad-01' }, body: '{}' });
    expect(response.status).toBe(200);
    const request = await until(() => receiver.spans().find((s) => s.name === 'POST /tools/{name}'), 'the REST span');
    expect(request.parentSpanId).toBeUndefined();
    const tool = await until(() => receiver.spans().find((s) => s.name === 'execute_tool lookup'), 'the tool span');
    expect(tool.parentSpanId).toBe(request.spanId);
    expect(attr(tool, 'forge.frontend')).toBe('rest');
  });

  it('traces an MCP tool call from the SDK client as a server span with the tool call under it', async () => {
    const { agent, receiver } = await startTracedAgent();
    const client = new Client({ name: 'trace-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}`, traceparent: `00-${INCOMING_TRACE}-${INCOMING_SPAN}-01` } } }));
    const result = await client.callTool({ name: 'lookup', arguments: {} });
    expect(result.isError).toBeFalsy();
    await client.close();
    const tool = await until(() => receiver.spans().find((s) => s.name === 'execute_tool lookup'), 'the tool span');
    const request = await until(() => receiver.spans().find((s) => s.spanId === tool.parentSpanId), 'its request span');
    expect(request.name).toBe('POST /mcp');
    expect(request.parentSpanId).toBe(INCOMING_SPAN);
    expect(tool.traceId).toBe(INCOMING_TRACE);
    expect(attr(tool, 'forge.frontend')).toBe('mcp');
    expect(attr(request, 'rpc.system')).toBe('jsonrpc');
  });
});
