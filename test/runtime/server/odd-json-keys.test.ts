/**
 * What an attacker sends to find prototype pollution: `__proto__`,
 * `constructor` and `prototype` as argument keys, tool names, JSON-RPC
 * methods, A2A ids and metadata keys, over REST, MCP and A2A to a real
 * server. JSON.parse makes `__proto__` an own key; nothing on the way to a
 * tool may turn it into a prototype (Object.assign, a key-by-key copy),
 * let it past the argument schema, or read an inherited member as a tool.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { ok } from '../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';
import { startScriptedOpenAI } from '../../helpers/scripted-llm.ts';

const TOKEN = 'odd-keys-token';
const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
let agent: RunningAgent;
const received: { args: Record<string, unknown>; proto: unknown }[] = [];

beforeAll(async () => {
  const llm = await startScriptedOpenAI(Array.from({ length: 10 }, () => ({ text: 'ok' })));
  const registry = new ToolRegistry({ workDir: tempDir() });
  // An open schema (no additionalProperties: false), as many custom tools have; `mode` defaults to "safe".
  registry.register({
    name: 'open_tool', description: 'Open.', category: 'custom', tags: ['read'],
    inputSchema: { type: 'object', properties: { mode: { type: 'string', enum: ['safe', 'unsafe'], default: 'safe' } } },
    execute: async (args) => (received.push({ args: args as Record<string, unknown>, proto: Object.getPrototypeOf(args) }), ok({ mode: (args as { mode: string }).mode })),
  }, 'test');
  registry.register({
    name: 'strict_tool', description: 'Strict.', category: 'custom', tags: ['read'],
    inputSchema: { type: 'object', required: ['path'], additionalProperties: false, properties: { path: { type: 'string' } } },
    execute: async (args) => ok(args),
  }, 'test');
  // A schema (an MCP server's, an OpenAPI document's, a forged tool's) may name its arguments so too.
  registry.register({
    name: 'odd_names', description: 'Odd names.', category: 'custom', tags: ['read'],
    inputSchema: JSON.parse('{"type":"object","required":["__proto__","constructor"],"properties":{"__proto__":{"type":"object"},"constructor":{}}}'),
    execute: async (args) => ok({ own: Object.keys(args as object) }),
  }, 'test');
  const manifest = { agent_id: 'odd-keys', version: '1.0.0', description: '', tools: registry.list(), model: { provider: 'openai', name: 'scripted', base_url: `${llm.url}/v1` } } as unknown as AgentManifest;
  agent = await serveAgent({ manifest, registry, workDir: tempDir(), host: '127.0.0.1', port: 0, env: { FORGE_AUTH_TOKEN: TOKEN }, http: new HttpClient(), log: silentLogger });
});

afterAll(async () => {
  await agent?.stop(100);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
});

const post = async (path: string, body: string, headers: Record<string, string> = auth) => {
  const res = await fetch(`${agent.url}${path}`, { method: 'POST', headers, body });
  return { status: res.status, json: (await res.json()) as any };
};
const mcp = (body: unknown) => post('/mcp', JSON.stringify(body), { ...auth, accept: 'application/json, text/event-stream' });

describe('odd JSON keys', () => {
  it('a __proto__ argument stays an own key: it sets no prototype, fills no default and reaches no other argument', async () => {
    received.length = 0;
    const rest = await post('/tools/open_tool', '{"__proto__": {"mode": "unsafe", "polluted": true}, "constructor": {"prototype": {"polluted": true}}}');
    expect(rest).toMatchObject({ status: 200, json: { ok: true, value: { mode: 'safe' } } });
    const viaMcp = await mcp({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'open_tool', arguments: JSON.parse('{"__proto__": {"mode": "unsafe"}}') } });
    expect(viaMcp.json.result.structuredContent).toEqual({ mode: 'safe' });
    expect(received).toHaveLength(2);
    for (const { args, proto } of received) {
      expect(proto).toBe(Object.prototype);
      expect(Object.hasOwn(args, '__proto__')).toBe(true);
      expect((args as { polluted?: unknown }).polluted).toBeUndefined();
    }
  });

  it('a __proto__ key does not get past a strict schema, nor supply a required argument', async () => {
    const res = await post('/tools/strict_tool', '{"__proto__": {"path": "/etc/passwd"}}');
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('FORGE_TOOL_ARGS');
    expect(res.json.error.message).toMatch(/path|__proto__/);
  });

  it('a required argument named __proto__ or constructor is required of the call, not found on Object.prototype', async () => {
    const missing = await post('/tools/odd_names', '{}');
    expect(missing.status).toBe(400);
    expect(missing.json.error.message).toMatch(/missing required argument "(__proto__|constructor)"/);
    expect((await post('/tools/odd_names', '{"__proto__": {}}')).status).toBe(400);
    const given = await post('/tools/odd_names', '{"__proto__": {"a": 1}, "constructor": "Ada"}');
    expect(given).toMatchObject({ status: 200, json: { value: { own: ['__proto__', 'constructor'] } } });
  });

  it.each(['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__'])('the tool name %s is no tool, over REST and MCP', async (name) => {
    const rest = await post(`/tools/${name}`, '{}');
    expect(rest.status).toBe(404);
    expect(rest.json.error.code).toBe('FORGE_TOOL_UNKNOWN');
    expect((await fetch(`${agent.url}/tools/${name}`, { headers: auth })).status).toBe(404);
    const call = await mcp({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: {} } });
    expect(call.json.result).toMatchObject({ isError: true });
    expect(call.json.result.content[0].text).toMatch(/^FORGE_TOOL_UNKNOWN/);
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])('the JSON-RPC method %s is not found on MCP and A2A', async (method) => {
    expect((await mcp({ jsonrpc: '2.0', id: 3, method })).json.error.code).toBe(-32601);
    const a2a = await post('/a2a', JSON.stringify({ jsonrpc: '2.0', id: 4, method, params: {} }));
    expect(a2a.json.error.code).toBe(-32601);
  });

  it('A2A ids and metadata named __proto__ or constructor are plain data', async () => {
    for (const id of ['__proto__', 'constructor', 'toString']) {
      const get = await post('/a2a', JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tasks/get', params: { id } }));
      expect(get.json.error.code).toBe(-32001); // task not found
    }
    const message = JSON.parse(`{"kind":"message","role":"user","messageId":"${randomUUID()}","contextId":"__proto__","parts":[{"kind":"text","text":"hi"}],"metadata":{"__proto__":{"polluted":true}}}`);
    const sent = await post('/a2a', JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'message/send', params: { message } }));
    expect(sent.json.error).toBeUndefined();
    const again = { ...message, messageId: randomUUID(), contextId: 'constructor' };
    expect((await post('/a2a', JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'message/send', params: { message: again } }))).json.error).toBeUndefined();
  });
});
