/**
 * tools/list over MCP with the SDK's client: each tool's outputSchema, a
 * result that breaks it, and notifications/tools/list_changed when the
 * registry's tool set changes (hot reload, a forged tool).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ToolListChangedNotificationSchema, type McpError } from '@modelcontextprotocol/sdk/types.js';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { ok, type Tool } from '../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';

const running: RunningAgent[] = [];
const clients: Client[] = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(running.splice(0).map((r) => r.stop(100)));
});

const OUTPUT = { type: 'object', properties: { total: { type: 'integer' } }, required: ['total'] };

function inProcessTool(name: string, value: unknown, outputSchema?: Record<string, unknown>): Tool {
  return { name, description: `${name} tool`, category: 'custom', tags: ['read'], inputSchema: { type: 'object', properties: {} }, ...(outputSchema ? { outputSchema } : {}), execute: async () => ok(value) };
}

async function serveWith(registry: ToolRegistry) {
  const workDir = registry.workDir;
  const manifest = { agent_id: 'listing', version: '1.0.0', description: '', tools: registry.list() } as unknown as AgentManifest;
  const agent = await serveAgent({ manifest, registry, workDir, host: '127.0.0.1', port: 0, noAuth: true, http: new HttpClient(), log: silentLogger });
  running.push(agent);
  const client = new Client({ name: 'test', version: '1.0.0' });
  clients.push(client);
  await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`)));
  return client;
}

describe.each(['stateless', 'stateful'])('MCP tools/list (%s)', (mode) => {
  const sessions = () => vi.stubEnv('FORGE_MCP_SESSIONS', mode);

  it("sends each tool's outputSchema, and the SDK client accepts a result that matches it", async () => {
    sessions();
    const registry = new ToolRegistry({ workDir: tempDir() });
    registry.register(inProcessTool('count', { total: 3 }, OUTPUT), 'count');
    registry.register(inProcessTool('plain', 'text'), 'plain');
    const client = await serveWith(registry);
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'count')?.outputSchema).toEqual(OUTPUT);
    expect(tools.find((t) => t.name === 'plain')).not.toHaveProperty('outputSchema');
    const called = await client.callTool({ name: 'count', arguments: {} });
    expect(called.isError).toBeFalsy();
    expect(called.structuredContent).toEqual({ total: 3 });
  });

  it('annotates a composed tool with what everything it reaches does: a "read" tool whose steps write is destructive', async () => {
    sessions();
    const registry = new ToolRegistry({ workDir: tempDir() });
    const tool = (name: string, tags: string[], composedOf?: string[]): Tool => ({ ...inProcessTool(name, 'x'), tags, ...(composedOf ? { composedOf } : {}) });
    registry.register(tool('writer', ['write']), 'x');
    registry.register(tool('fetcher', ['read', 'network']), 'x');
    registry.register(tool('reader', ['read']), 'x');
    registry.register(tool('combo', ['read'], ['reader', 'writer']), 'x');
    registry.register(tool('deep', ['read'], ['combo']), 'x');
    registry.register(tool('looks', ['read'], ['reader', 'fetcher']), 'x');
    registry.register(tool('loop_a', ['read'], ['loop_b']), 'x');
    registry.register(tool('loop_b', ['read'], ['loop_a']), 'x');
    const client = await serveWith(registry);
    const annotations = Object.fromEntries((await client.listTools()).tools.map((t) => [t.name, t.annotations]));
    for (const name of ['combo', 'deep']) expect(annotations[name], name).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(annotations.looks).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: true });
    expect(annotations.loop_a).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(annotations.reader).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
  });

  it('answers a result that breaks the declared output with an error result naming why, not one the client rejects', async () => {
    sessions();
    const registry = new ToolRegistry({ workDir: tempDir() });
    registry.register(inProcessTool('wrong', { total: 'three' }, OUTPUT), 'wrong');
    registry.register(inProcessTool('not_object', 'three', OUTPUT), 'not_object');
    const client = await serveWith(registry);
    await client.listTools();
    const wrong = await client.callTool({ name: 'wrong', arguments: {} });
    expect(wrong.isError).toBe(true);
    expect(JSON.stringify(wrong.content)).toContain('FORGE_TOOL_OUTPUT');
    expect(JSON.stringify(wrong.content)).toContain('total');
    const notObject = await client.callTool({ name: 'not_object', arguments: {} });
    expect(notObject.isError).toBe(true);
    expect(JSON.stringify(notObject.content)).toContain('declares an object output');
  });
});

describe.each(['stateless', 'stateful'])('MCP list_changed notices (%s)', (mode) => {
  it('declares listChanged and notifies the client once per change, which then lists the new tool set', async () => {
    // Stateless: the client's standing GET stream, tied to no session; stateful: the session's.
    vi.stubEnv('FORGE_MCP_SESSIONS', mode);
    const registry = new ToolRegistry({ workDir: tempDir() });
    registry.register(inProcessTool('first', 1), 'first');
    const client = await serveWith(registry);
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    let notified = 0;
    let wake: () => void = () => {};
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      notified++;
      wake();
    });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['first']);

    // The client's standalone event stream may still be opening: change until the first notice arrives.
    const arrived = new Promise<void>((resolve) => (wake = resolve));
    for (let i = 0; notified === 0 && i < 200; i++) {
      registry.unregister('second');
      registry.register(inProcessTool('second', 2), 'second');
      await Promise.race([arrived, new Promise((r) => setTimeout(r, 50))]);
    }
    expect(notified).toBeGreaterThan(0);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['first', 'second']);

    // A reload that changes several tools at once is told once.
    const before = notified;
    const next = new Promise<void>((resolve) => (wake = resolve));
    registry.replace(inProcessTool('first', 10), 'first');
    registry.unregister('second');
    registry.register(inProcessTool('third', 3), 'third');
    await next;
    await new Promise((r) => setTimeout(r, 200));
    expect(notified - before).toBe(1);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['first', 'third']);
  });
});

describe('MCP sessions (stateful) refused at initialize', () => {
  it('keeps no server subscribed to tool changes for an initialize the transport refused', async () => {
    vi.stubEnv('FORGE_MCP_SESSIONS', 'stateful');
    const registry = new ToolRegistry({ workDir: tempDir() });
    registry.register(inProcessTool('first', 1), 'first');
    // Each MCP server subscribes to the registry's tool changes: count the subscriptions alive.
    let subscribed = 0;
    const subscribe = registry.onToolsChanged.bind(registry);
    registry.onToolsChanged = (listener) => {
      const unsubscribe = subscribe(listener);
      subscribed++;
      let once = true;
      return () => {
        if (once) subscribed--;
        once = false;
        return unsubscribe();
      };
    };
    const client = await serveWith(registry);
    expect(subscribed).toBe(1);
    const url = `${running[0].url}/mcp`;
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
    const refused = [
      { accept: 'application/json', 'content-type': 'application/json' },
      { accept: 'application/json, text/event-stream', 'content-type': 'text/plain' },
    ];
    for (let i = 0; i < 20; i++) {
      const response = await fetch(url, { method: 'POST', headers: refused[i % 2], body: initialize });
      expect([406, 415]).toContain(response.status);
      await response.arrayBuffer();
    }
    expect(subscribed).toBe(1);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['first']);
  });
});

describe('MCP tools/call with arguments that are not an object (stateful)', () => {
  // Stateless HTTP answers these words already (mcp-direct.test.ts); stdio: bundle-server.test.ts.
  it('answers -32602 with the message stateless HTTP answers', async () => {
    vi.stubEnv('FORGE_MCP_SESSIONS', 'stateful');
    const registry = new ToolRegistry({ workDir: tempDir() });
    registry.register(inProcessTool('first', 1), 'first');
    const client = await serveWith(registry);
    for (const args of [['an', 'array'], 'text', 7]) {
      const error = await client.request({ method: 'tools/call', params: { name: 'first', arguments: args as unknown as Record<string, unknown> } }, CallToolResultSchema).catch((e: McpError) => e);
      expect(error).toMatchObject({ code: -32602, message: 'MCP error -32602: Invalid params: arguments must be an object' });
    }
    const unnamed = await client.request({ method: 'tools/call', params: {} as { name: string } }, CallToolResultSchema).catch((e: McpError) => e);
    expect(unnamed).toMatchObject({ code: -32602, message: 'MCP error -32602: Invalid params: tools/call needs a tool name' });
  });
});
