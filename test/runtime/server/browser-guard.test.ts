/**
 * A web page cannot drive an agent served without a token (--no-auth, on
 * loopback) through its visitor's browser: a cross-origin "simple" request,
 * a rebound DNS name and a text/plain body are refused before any tool
 * runs, while the SDK clients, curl-style scripts and the agent's own pages
 * are served. With a token, /mcp still checks Origin (MCP's spec asks it).
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { isLoopbackHost } from '../../../runtime/server/browser-guard.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { ok } from '../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';

const TOKEN = 'guard-token';
let open: RunningAgent;
let guarded: RunningAgent;
const writes: unknown[] = [];

async function start(noAuth: boolean): Promise<RunningAgent> {
  const dir = tempDir();
  const registry = new ToolRegistry({ workDir: dir });
  registry.register({ name: 'writer', description: 'Writes.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async (args) => (writes.push(args), ok('written')) }, 'test');
  const manifest = { agent_id: 'guarded', version: '1.0.0', description: '', tools: registry.list(), approval: { auto_approve: [], auto_deny: [] } } as unknown as AgentManifest;
  return serveAgent({ manifest, registry, workDir: dir, host: '127.0.0.1', port: 0, noAuth, env: noAuth ? {} : { FORGE_AUTH_TOKEN: TOKEN }, http: new HttpClient(), log: silentLogger });
}

beforeAll(async () => {
  open = await start(true);
  guarded = await start(false);
});

afterAll(async () => {
  await open?.stop(100);
  await guarded?.stop(100);
});

/** node:http, since fetch will not send a Host header of our choosing. */
function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; json: any; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: { ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, json: /json/.test(res.headers['content-type'] ?? '') ? JSON.parse(text) : undefined, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const MCP_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('an agent without a token', () => {
  it('refuses a cross-origin simple request before the tool runs, and serves scripts, the SDK client and its own pages', async () => {
    writes.length = 0;
    const own = `127.0.0.1:${open.port}`;
    const res = await send(open.port, 'POST', '/tools/writer', { host: own, origin: 'https://evil.example', 'content-type': 'text/plain' }, '{"path":"x"}');
    expect(res.status).toBe(403);
    expect(res.json.error).toMatchObject({ code: 'FORGE_ORIGIN_REFUSED', hint: expect.any(String) });
    // The same page with a JSON body (preflighted in a browser, but sent anyway): still refused.
    expect((await send(open.port, 'POST', '/tools/writer', { host: own, origin: 'https://evil.example', 'content-type': 'application/json' }, '{}')).status).toBe(403);
    expect(writes).toEqual([]);

    const script = await send(open.port, 'POST', '/tools/writer', { 'content-type': 'application/json; charset=utf-8' }, '{"by":"script"}');
    expect(script.status).toBe(200);
    // Other spellings of a JSON content type are JSON too.
    expect((await send(open.port, 'POST', '/tools/writer', { 'content-type': 'Application/JSON; charset=UTF8' }, '{"by":"other spelling"}')).status).toBe(200);
    const ownPage = await send(open.port, 'POST', '/tools/writer', { host: `localhost:${open.port}`, origin: `http://localhost:${open.port}`, 'content-type': 'application/json' }, '{"by":"page"}');
    expect(ownPage.status).toBe(200);
    const noArgs = await send(open.port, 'POST', '/tools/writer', {});
    expect(noArgs.status).toBe(200);
    expect(writes).toEqual([{ by: 'script' }, { by: 'other spelling' }, { by: 'page' }, {}]);
    expect((await send(open.port, 'GET', '/tools', { host: `[::1]:${open.port}` })).status).toBe(200);

    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${open.url}/mcp`)));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['writer']);
    } finally {
      await client.close();
    }
  });

  it('refuses a text/plain body without an Origin (415), on REST and A2A', async () => {
    writes.length = 0;
    const rest = await send(open.port, 'POST', '/tools/writer', { 'content-type': 'text/plain' }, '{"path":"x"}');
    expect(rest.status).toBe(415);
    expect(rest.json.error.code).toBe('FORGE_CONTENT_TYPE');
    const a2a = await send(open.port, 'POST', '/a2a', { 'content-type': 'text/plain' }, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } }));
    expect(a2a.status).toBe(415);
    expect(a2a.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { data: { code: 'FORGE_CONTENT_TYPE' } } });
    // A form with no fields posts an empty body, typed as a form: a tool called with no arguments is still a call.
    const emptyForm = await send(open.port, 'POST', '/tools/writer', { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '0' });
    expect(emptyForm.status).toBe(415);
    expect(writes).toEqual([]);
  });

  it('refuses a cross-origin EventSource or fetch of a stream or a listing (GET with a foreign Origin)', async () => {
    const own = `127.0.0.1:${open.port}`;
    for (const [path, accept] of [['/mcp', 'text/event-stream'], ['/tools', 'application/json'], ['/.well-known/agent-card.json', 'application/json']]) {
      const res = await send(open.port, 'GET', path, { host: own, origin: 'https://evil.example', accept });
      expect(res.status, path).toBe(403);
      expect(res.json.error.data?.code ?? res.json.error.code, path).toBe('FORGE_ORIGIN_REFUSED');
    }
  });

  it('refuses a rebound DNS name on every endpoint, /mcp included', async () => {
    const rebound = { host: `evil.example:${open.port}`, origin: `http://evil.example:${open.port}` };
    const mcp = await send(open.port, 'POST', '/mcp', { ...rebound, ...MCP_HEADERS }, MCP_LIST);
    expect(mcp.status).toBe(403);
    expect(mcp.json).toMatchObject({ jsonrpc: '2.0', error: { data: { code: 'FORGE_HOST_REFUSED' } } });
    // Without an Origin too (a rebound page's GET carries none).
    for (const path of ['/tools', '/.well-known/agent-card.json', '/healthz']) {
      const res = await send(open.port, 'GET', path, { host: `evil.example:${open.port}` });
      expect(res.status).toBe(403);
      expect(res.json.error.code).toBe('FORGE_HOST_REFUSED');
    }
  });
});

describe('an agent with a token', () => {
  it('checks Origin on /mcp, and leaves the rest to the token', async () => {
    const auth = { authorization: `Bearer ${TOKEN}` };
    const mcp = await send(guarded.port, 'POST', '/mcp', { ...auth, ...MCP_HEADERS, origin: 'https://evil.example' }, MCP_LIST);
    expect(mcp.status).toBe(403);
    expect(mcp.json.error.data.code).toBe('FORGE_ORIGIN_REFUSED');
    expect((await send(guarded.port, 'POST', '/mcp', { ...auth, ...MCP_HEADERS, origin: `http://127.0.0.1:${guarded.port}` }, MCP_LIST)).status).toBe(200);
    // REST with the token: a browser never sends it on its own, so the token is the proof.
    expect((await send(guarded.port, 'POST', '/tools/writer', { ...auth, origin: 'https://tools.example', host: 'agent.example', 'content-type': 'text/plain' }, '{}')).status).toBe(200);
  });
});

describe('CORS', () => {
  it('no answer lets another origin read it or send more: no Access-Control-* header, to a preflight or a request, with a token or without', async () => {
    const paths = ['/tools', '/tools/writer', '/mcp', '/a2a', '/', '/.well-known/agent-card.json', '/healthz', '/readyz', '/metrics', '/studio'];
    for (const agent of [open, guarded]) {
      const own = { host: `127.0.0.1:${agent.port}` };
      for (const path of paths) {
        const preflight = await send(agent.port, 'OPTIONS', path, { ...own, origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' });
        const request = await send(agent.port, 'GET', path, { ...own, origin: 'https://evil.example', ...(agent === guarded ? { authorization: `Bearer ${TOKEN}` } : {}) });
        for (const answer of [preflight, request]) {
          expect(Object.keys(answer.headers).filter((h) => h.startsWith('access-control-')), `${answer === preflight ? 'OPTIONS' : 'GET'} ${path}`).toEqual([]);
          expect(answer.status, path).not.toBe(204);
        }
      }
    }
  });
});

it('knows loopback hosts', () => {
  for (const host of ['localhost', 'LOCALHOST:8080', '127.0.0.1', '127.3.2.1:80', '[::1]', '[::1]:9000']) expect(isLoopbackHost(host)).toBe(true);
  for (const host of ['evil.example', 'localhost.evil.example', '127.0.0.1.nip.io', '0.0.0.0', '[::]', 'evil.example/x@127.0.0.1', '']) expect(isLoopbackHost(host)).toBe(false);
});
