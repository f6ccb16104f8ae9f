/**
 * The SDK's MCP server object that serves one client (a stateful session over
 * HTTP, stdio): its tool calls wait their turn past MCP_CALLS_AT_ONCE, as a
 * stateless batch's do, however they arrive.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer } from '../../../runtime/server/mcp-server.ts';
import { MCP_CALLS_AT_ONCE } from '../../../runtime/server/mcp-tool-calls.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { ok, type Tool } from '../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { waitUntil } from '../../helpers/fleet.ts';
import { tempDir } from '../../helpers/project.ts';

const running: RunningAgent[] = [];
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(running.splice(0).map((r) => r.stop(100)));
});

/** A tool that counts how many of its calls run together. */
function countedTool() {
  const seen = { now: 0, most: 0 };
  const tool: Tool = {
    name: 'counted', description: 'Counts the calls running with it.', category: 'custom', tags: ['read'], inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
    execute: async (args) => {
      seen.most = Math.max(seen.most, ++seen.now);
      // Every call that was let through together has started by now.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen.now--;
      return ok({ n: (args as { n: number }).n });
    },
  };
  return { tool, seen };
}

async function statefulAgent(tool: Tool): Promise<string> {
  const registry = new ToolRegistry({ workDir: tempDir() });
  registry.register(tool, tool.name);
  const manifest = { agent_id: 'sessions', version: '1.0.0', description: '', tools: registry.list() } as unknown as AgentManifest;
  const agent = await serveAgent({ manifest, registry, workDir: registry.workDir, host: '127.0.0.1', port: 0, noAuth: true, http: new HttpClient(), log: silentLogger, mcpSessions: true });
  running.push(agent);
  return `${agent.url}/mcp`;
}

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('one MCP client (a stateful session, stdio)', () => {
  it(`runs at most ${MCP_CALLS_AT_ONCE} calls of a batch of 100 at once, and answers all of them`, async () => {
    const { tool, seen } = countedTool();
    const url = await statefulAgent(tool);
    const init = await fetch(url, { method: 'POST', headers: HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'batch', version: '1' } } }) });
    const session = init.headers.get('mcp-session-id')!;
    expect(session).toBeTruthy();
    await init.text();
    const batch = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'counted', arguments: { n: i } } }));
    const response = await fetch(url, { method: 'POST', headers: { ...HEADERS, 'mcp-session-id': session }, body: JSON.stringify(batch) });
    expect(response.status).toBe(200);
    // The SDK's transport answers a batch as an event stream, one event per answer.
    const answers = (await response.text()).split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as { id: number; result: { structuredContent: { n: number } } });
    expect(answers.map((a) => [a.id, a.result.structuredContent.n]).sort((a, b) => a[0] - b[0])).toEqual(Array.from({ length: 100 }, (_, i) => [i + 1, i]));
    expect(seen.most).toBe(MCP_CALLS_AT_ONCE);
  });

  it('counts calls that arrive as separate requests the same way, and a call cancelled while it waits never runs', async () => {
    // Messages arrive in order here (as on stdio), so once a later ping is answered every call has been received.
    const ran: number[] = [];
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const held: Tool = {
      name: 'held', description: 'Waits for the test to let it go.', category: 'custom', tags: ['read'], inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
      execute: async (args) => {
        ran.push((args as { n: number }).n);
        await gate;
        return ok({ n: (args as { n: number }).n });
      },
    };
    const registry = new ToolRegistry({ workDir: tempDir() });
    registry.register(held, held.name);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = createMcpServer({ name: 'one-client', version: '1.0.0' }, registry);
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    clients.push(client);
    await client.connect(clientSide);

    const cancel = new AbortController();
    const calls = Array.from({ length: 40 }, (_, n) => client.callTool({ name: 'held', arguments: { n } }, undefined, { signal: n === 20 ? cancel.signal : undefined, timeout: 30_000 }));
    await client.ping();
    await waitUntil(() => (ran.length >= MCP_CALLS_AT_ONCE ? true : undefined), 5000, 'the first calls to start');
    // Time for any call let through to reach the tool: none is.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ran).toHaveLength(MCP_CALLS_AT_ONCE);
    cancel.abort();
    await expect(calls[20]).rejects.toThrow();
    open();
    const results = await Promise.all(calls.filter((_, n) => n !== 20));
    expect(results.map((r) => (r.structuredContent as { n: number }).n)).toEqual(Array.from({ length: 40 }, (_, n) => n).filter((n) => n !== 20));
    expect(ran).not.toContain(20);
    await server.close();
  });
});
