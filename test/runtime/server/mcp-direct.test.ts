/**
 * Stateless MCP over HTTP (the default), answered without an SDK server per
 * request: the SDK client works against it as against the SDK's own
 * transport, and the wire answers the same statuses for bad requests.
 */
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { fail, ok, type Tool } from '../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';
import { waitUntil } from '../../helpers/fleet.ts';

const running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop(100)));
});

function slowEcho(): Tool {
  return {
    name: 'echo',
    description: 'Echoes after a short wait.',
    category: 'custom',
    tags: ['read'],
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    execute: async (args) => {
      await new Promise((r) => setTimeout(r, 5));
      return ok({ echoed: (args as { text: string }).text });
    },
  };
}

async function agentUrl(extra: Tool[] = [], limits?: { maxConnections: number }): Promise<string> {
  const registry = new ToolRegistry({ workDir: tempDir() });
  registry.register(slowEcho(), 'echo');
  for (const tool of extra) registry.register(tool, tool.name);
  const manifest = { agent_id: 'direct', version: '2.0.0', description: '', tools: registry.list() } as unknown as AgentManifest;
  const agent = await serveAgent({ manifest, registry, workDir: registry.workDir, host: '127.0.0.1', port: 0, noAuth: true, http: new HttpClient(), log: silentLogger, limits });
  running.push(agent);
  return `${agent.url}/mcp`;
}

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const post = (url: string, body: unknown, headers: Record<string, string> = HEADERS, signal?: AbortSignal) => fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal });

describe('stateless MCP over HTTP', () => {
  it('serves the SDK client: initialize, list, calls from many clients at once, errors as results', async () => {
    const url = await agentUrl();
    const clients = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const client = new Client({ name: 'test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(url)));
        return client;
      }),
    );
    try {
      expect(clients[0].getServerVersion()).toEqual({ name: 'direct', version: '2.0.0' });
      expect((await clients[0].listTools()).tools.map((t) => t.name)).toEqual(['echo']);
      const results = await Promise.all(clients.flatMap((client, c) => Array.from({ length: 5 }, (_, i) => client.callTool({ name: 'echo', arguments: { text: `${c}-${i}` } }))));
      expect(results.map((r) => (r.structuredContent as { echoed: string }).echoed)).toEqual(clients.flatMap((_, c) => Array.from({ length: 5 }, (_, i) => `${c}-${i}`)));
      const invalid = await clients[0].callTool({ name: 'echo', arguments: {} });
      expect(invalid.isError).toBe(true);
      expect(JSON.stringify(invalid.content)).toContain('FORGE_TOOL_ARGS');
      const unknown = await clients[0].callTool({ name: 'nope', arguments: {} });
      expect(unknown.isError).toBe(true);
      expect(await clients[0].ping()).toEqual({});
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('answers bad requests with the statuses of the SDK transport', async () => {
    const url = await agentUrl();
    const get = await fetch(url, { headers: { accept: 'application/json' } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('GET, POST');
    expect((await fetch(url, { method: 'DELETE' })).status).toBe(405);
    expect((await post(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'content-type': 'application/json', accept: 'application/json' })).status).toBe(406);
    expect((await post(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { ...HEADERS, 'content-type': 'text/plain' })).status).toBe(415);
    expect((await post(url, { jsonrpc: '2.0', id: 1, method: 'ping' }, { ...HEADERS, 'mcp-protocol-version': '1999-01-01' })).status).toBe(400);
    const notRpc = await post(url, { hello: 'world' });
    expect(notRpc.status).toBe(400);
    expect(await notRpc.json()).toMatchObject({ error: { code: -32700 } });
    const parse = await fetch(url, { method: 'POST', headers: HEADERS, body: '{not json' });
    expect(parse.status).toBe(400);
    expect((await post(url, Array.from({ length: 101 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })))).status).toBe(400);
  });

  it('keeps at most 256 standing event streams (the oldest closed first), so GET streams never take every connection', async () => {
    // Room for the streams and a few more: without the cap, streams alone fill the server's connections for good.
    const url = await agentUrl([], { maxConnections: MAX_MCP_STREAMS + 4 });
    const sockets: (Socket & { ended: boolean })[] = [];
    try {
      for (let i = 0; i < MAX_MCP_STREAMS + 4; i++) sockets.push(await openStandingStream(url));
      // The four oldest are closed, connection and all; the newest stay open.
      await waitUntil(() => (sockets.slice(0, 4).every((s) => s.ended) ? true : undefined), 5000, 'the oldest streams to be closed');
      expect(sockets.slice(4).some((s) => s.ended)).toBe(false);
      const ping = await post(url, { jsonrpc: '2.0', id: 1, method: 'ping' });
      expect(await ping.json()).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it('runs at most 8 calls of one batch at once, and answers all 100 in the batch\'s order', async () => {
    let now = 0;
    let most = 0;
    const counted: Tool = {
      name: 'counted', description: 'Counts the calls running with it.', category: 'custom', tags: ['read'], inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
      execute: async (args) => {
        most = Math.max(most, ++now);
        // Every call of the batch has been started by now if they all run together.
        await new Promise((resolve) => setImmediate(resolve));
        await new Promise((resolve) => setTimeout(resolve, 5));
        now--;
        return ok({ n: (args as { n: number }).n });
      },
    };
    const url = await agentUrl([counted]);
    const response = await post(url, Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'counted', arguments: { n: i } } })));
    const answers = (await response.json()) as { id: number; result: { structuredContent: { n: number } } }[];
    expect(answers.map((a) => [a.id, a.result.structuredContent.n])).toEqual(Array.from({ length: 100 }, (_, i) => [i, i]));
    expect(most).toBeLessThanOrEqual(8);
  });

  it('does not start the calls of a batch still waiting their turn when its client goes away', async () => {
    const started: number[] = [];
    let stopped = 0;
    const held: Tool = {
      name: 'held', description: 'Runs until its call is cancelled.', category: 'custom', tags: ['read'], inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
      execute: async (args, ctx) => {
        started.push((args as { n: number }).n);
        await new Promise((resolve) => ctx.signal?.addEventListener('abort', resolve, { once: true }));
        stopped++;
        return ok({});
      },
    };
    const url = await agentUrl([held]);
    const hangUp = new AbortController();
    const batch = post(url, Array.from({ length: 30 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'held', arguments: { n: i } } })), HEADERS, hangUp.signal);
    await waitUntil(() => (started.length === 8 ? true : undefined), 5000, 'the first turns to start');
    hangUp.abort();
    await batch.catch(() => {});
    // The server saw the hang-up when the running calls are cancelled; their turns are then free, and none of the waiting calls may take one.
    await waitUntil(() => (stopped === 8 ? true : undefined), 5000, 'the running calls to be cancelled');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('answers a batch in one body, a notification with 202, an unknown method with -32601', async () => {
    const url = await agentUrl();
    const notice = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(notice.status).toBe(202);
    expect(await notice.text()).toBe('');
    const batch = await post(url, [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'a' } } },
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } },
      { jsonrpc: '2.0', id: 'two', method: 'resources/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { arguments: {} } },
    ]);
    expect(batch.status).toBe(200);
    expect(await batch.json()).toEqual([
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: '{\n  "echoed": "a"\n}' }], structuredContent: { echoed: 'a' } } },
      { jsonrpc: '2.0', id: 'two', error: { code: -32601, message: 'Method not found' } },
      { jsonrpc: '2.0', id: 3, error: { code: -32602, message: 'Invalid params: tools/call needs a tool name' } },
    ]);
    const init = await post(url, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'old', version: '1' } } });
    expect(init.headers.get('mcp-session-id')).toBeNull();
    expect(await init.json()).toMatchObject({ result: { protocolVersion: '2024-11-05', capabilities: { tools: { listChanged: true } } } });
  });

  it('answers a cancelled call\'s POST with -32800, so a call a cancel reached by mistake (one proxy address) never hangs', async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const waits: Tool = {
      name: 'wait_for_cancel', description: 'Runs until it is cancelled.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' },
      execute: (_args, ctx) => {
        started();
        return new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(fail('FORGE_TOOL_FAILED', 'cancelled')), { once: true }));
      },
    };
    const url = await agentUrl([waits]);
    const call = fetch(url, { method: 'POST', headers: HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'wait_for_cancel', arguments: {} } }) });
    await running;
    // Another client behind the same address, whose own request 5 is long done, cancels "its" call.
    expect(await postFrom('127.0.0.1', url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } })).toBe(202);
    const answered = await call;
    expect(answered.status).toBe(200);
    expect(JSON.parse(await answered.text())).toMatchObject({ jsonrpc: '2.0', id: 5, error: { code: -32800 } });
  });

  it('stops a call its SDK client cancelled, and ignores a cancel for that id from another address', async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    let aborted = false;
    const waits: Tool = {
      name: 'wait_for_cancel', description: 'Runs until it is cancelled.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' },
      execute: (_args, ctx) => {
        started();
        return new Promise((resolve) => ctx.signal.addEventListener('abort', () => ((aborted = true), resolve(fail('FORGE_TOOL_FAILED', 'cancelled'))), { once: true }));
      },
    };
    const url = await agentUrl([waits]);
    // The client's own request ids, to send a cancel for the same id from elsewhere.
    const callIds: unknown[] = [];
    const recording: typeof fetch = (input, init) => {
      const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
      if (body?.method === 'tools/call') callIds.push(body.id);
      return fetch(input, init);
    };
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recording }));
    try {
      const controller = new AbortController();
      const call = client.callTool({ name: 'wait_for_cancel', arguments: {} }, undefined, { signal: controller.signal }).catch((e: Error) => e);
      await running;
      expect(await postFrom('127.0.0.2', url, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: callIds[0] } })).toBe(202);
      for (let i = 0; i < 20; i++) await client.ping();
      expect(aborted).toBe(false);

      controller.abort('the user changed their mind');
      expect(String(await call)).toContain('the user changed their mind');
      // The cancel notice goes out on its own POST: a few requests later it has surely arrived.
      for (let i = 0; i < 50 && !aborted; i++) await client.ping();
      expect(aborted).toBe(true);
    } finally {
      await client.close();
    }
  });
});

/** How many standing event streams one process keeps (mcp-direct.ts), as many as MCP sessions (mcp-http.ts). */
const MAX_MCP_STREAMS = 256;

/** A raw client that opens GET /mcp's event stream and never sends or reads anything more; resolves once the 200 came. */
function openStandingStream(url: string): Promise<Socket & { ended: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = Object.assign(connect(Number(port), hostname), { ended: false });
    socket.on('error', reject);
    socket.on('close', () => (socket.ended = true));
    socket.once('data', (chunk) => (String(chunk).startsWith('HTTP/1.1 200') ? resolve(socket) : reject(new Error(String(chunk)))));
    socket.write(`GET /mcp HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAccept: text/event-stream\r\n\r\n`);
  });
}

/** A POST from another loopback address (another client host, as far as the server can tell); its status. */
function postFrom(localAddress: string, url: string, body: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', localAddress, headers: HEADERS }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
