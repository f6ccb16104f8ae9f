/**
 * The HTTP server against a hostile client on raw sockets: headers and
 * bodies that trickle or stall are cut off, connections past the cap are
 * dropped, malformed paths and over-deep JSON are 400s (never a 500 or a
 * misleading 422), on every front end that parses JSON (REST, MCP, A2A).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { jsonNestsDeeperThan } from '../../../runtime/server/http-limits.ts';
import { ok } from '../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { waitUntil } from '../../helpers/fleet.ts';
import { tempDir } from '../../helpers/project.ts';

const TOKEN = 'edge-token';
let agent: RunningAgent;
let port: number;

/** An agent on loopback with the token, these limits, and (optionally) one echo tool and extra routes. */
async function serveWith(limits: { headersTimeoutMs: number; bodyIdleTimeoutMs: number; bodyTimeoutMs: number }, options: { echo?: boolean; extraRoutes?: Parameters<typeof serveAgent>[0]['extraRoutes'] } = {}): Promise<RunningAgent> {
  const dir = tempDir();
  const registry = new ToolRegistry({ workDir: dir });
  if (options.echo) registry.register({ name: 'echo', description: 'Echo.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async (args) => ok(args) }, 'test');
  const manifest = { agent_id: 'edges', version: '1.0.0', description: '', tools: registry.list(), approval: { auto_approve: [], auto_deny: [] } } as unknown as AgentManifest;
  return serveAgent({
    manifest,
    registry,
    workDir: dir,
    host: '127.0.0.1',
    port: 0,
    env: { FORGE_AUTH_TOKEN: TOKEN },
    http: new HttpClient(),
    log: silentLogger,
    limits: { ...limits, maxConnections: 8, maxJsonDepth: 64 },
    extraRoutes: options.extraRoutes,
  });
}

beforeAll(async () => {
  agent = await serveWith({ headersTimeoutMs: 1000, bodyIdleTimeoutMs: 800, bodyTimeoutMs: 2000 }, { echo: true });
  port = agent.port;
});

afterAll(async () => {
  await agent?.stop(100);
});

interface RawConnection {
  socket: Socket;
  received(): string;
  /** Resolves with what the server sent once it closed the connection (rejects after `ms`). */
  closed(ms?: number): Promise<string>;
}

function open(): Promise<RawConnection> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    let isClosed = false;
    const waiters: (() => void)[] = [];
    socket.on('data', (d) => (data += d.toString()));
    socket.on('error', () => {});
    socket.on('close', () => {
      isClosed = true;
      for (const w of waiters) w();
    });
    socket.on('connect', () =>
      resolve({
        socket,
        received: () => data,
        closed: (ms = 10_000) =>
          new Promise((res, rej) => {
            if (isClosed) return res(data);
            const timer = setTimeout(() => rej(new Error(`still open after ${ms} ms; received: ${data}`)), ms);
            waiters.push(() => {
              clearTimeout(timer);
              res(data);
            });
          }),
      }),
    );
    socket.on('error', reject);
  });
}

/** Resolves once the server holds no connection (kept-alive ones expire within node's 5 s). */
async function noConnections(): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 8000; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const count = await new Promise<number>((resolve) => agent.server.getConnections((_err, n) => resolve(n)));
    if (count === 0) return;
  }
  throw new Error('the server still holds connections after 8 s');
}

/** Writes one byte at a time every `everyMs` until the socket closes (or `max` bytes). */
function trickle(socket: Socket, text: string, everyMs: number): void {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || i >= text.length) return clearInterval(timer);
    socket.write(text[i++]);
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
}

async function request(method: string, path: string, body?: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

describe('slow clients', () => {
  it('closes a connection whose headers trickle in (no token needed to try)', async () => {
    const conn = await open();
    conn.socket.write('POST /tools/echo HTTP/1.1\r\nHost: agent\r\n');
    trickle(conn.socket, 'X-Slow: ' + 'a'.repeat(500), 150);
    const got = await conn.closed();
    expect(got === '' || got.startsWith('HTTP/1.1 408')).toBe(true);
  });

  it('answers 408 and closes a connection whose body trickles in', async () => {
    const conn = await open();
    conn.socket.write(`POST /tools/echo HTTP/1.1\r\nHost: agent\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`);
    trickle(conn.socket, '{"a":"' + 'x'.repeat(990) + '"}', 100);
    const got = await conn.closed();
    expect(got).toMatch(/^HTTP\/1\.1 408 /);
    expect(got).toContain('FORGE_BODY_TIMEOUT');
  });

  it('answers 408 and closes a connection whose body stalls', async () => {
    const conn = await open();
    conn.socket.write(`POST /mcp HTTP/1.1\r\nHost: agent\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc":`);
    const got = await conn.closed();
    expect(got).toMatch(/^HTTP\/1\.1 408 /);
    expect(got).toContain('stalled');
    expect(got).toMatch(/"jsonrpc":"2\.0".*"code":"FORGE_BODY_TIMEOUT"/);
  });

  it('closes an unauthenticated connection with its 401, without waiting for its body', async () => {
    const conn = await open();
    conn.socket.write('POST /tools/echo HTTP/1.1\r\nHost: agent\r\nContent-Length: 100000\r\n\r\n{');
    trickle(conn.socket, 'x'.repeat(1000), 100);
    const got = await conn.closed();
    expect(got).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('still serves others while slow clients are cut off', async () => {
    const slow = await Promise.all([open(), open(), open()]);
    for (const c of slow) c.socket.write('GET /healthz HTTP/1.1\r\n');
    expect((await request('GET', '/healthz')).status).toBe(200);
    expect((await request('POST', '/tools/echo', '{"still":"served"}')).json).toMatchObject({ ok: true, value: { still: 'served' } });
    await Promise.all(slow.map((c) => c.closed()));
  });
});

describe('bodies a route never reads', () => {
  const slowBody = (method: string, path: string, auth: boolean) => `${method} ${path} HTTP/1.1\r\nHost: agent\r\n${auth ? `Authorization: Bearer ${TOKEN}\r\n` : ''}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n`;

  // node:http would drain such a body after the answer, at the client's pace, on a kept-alive
  // connection: the answer must close it instead (these trickle far longer than the 2 s body limit).
  it.each([
    ['GET', '/healthz', false],
    ['GET', '/readyz', false],
    ['GET', '/.well-known/agent-card.json', false],
    ['GET', '/metrics', false],
    ['POST', '/tools/echo', false],
    ['GET', '/nowhere', true],
    ['PUT', '/tools/echo', true],
  ] as const)('%s %s (token: %s) answers and closes while the body still trickles', async (method, path, auth) => {
    const conn = await open();
    conn.socket.write(slowBody(method, path, auth));
    trickle(conn.socket, 'x'.repeat(1000), 100);
    const got = await conn.closed(1500);
    expect(got).toMatch(/^HTTP\/1\.1 \d{3} /);
    expect(got.toLowerCase()).toContain('connection: close');
  });

  it('a 401 closes its connection even without a body', async () => {
    for (const path of ['/metrics', '/tools']) {
      const conn = await open();
      conn.socket.write(`GET ${path} HTTP/1.1\r\nHost: agent\r\n\r\n`);
      const got = await conn.closed(1500);
      expect(got).toMatch(/^HTTP\/1\.1 401 /);
    }
  });

  it('keeps serving fresh clients while every connection slot trickles a body to /healthz, and keeps a connection whose body was read', async () => {
    const slow = await Promise.all(Array.from({ length: 8 }, () => open()));
    for (const c of slow) {
      c.socket.write(slowBody('GET', '/healthz', false));
      trickle(c.socket, 'x'.repeat(1000), 100);
    }
    await Promise.all(slow.map((c) => c.closed(1500)));
    expect((await request('GET', '/healthz')).status).toBe(200);

    const conn = await open();
    const body = '{"kept":"alive"}';
    conn.socket.write(`POST /tools/echo HTTP/1.1\r\nHost: agent\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    await waitUntil(() => ((conn.received().match(/HTTP\/1\.1 200 /g) ?? []).length === 1 ? true : undefined), 10_000, 'the first answer');
    conn.socket.write('GET /healthz HTTP/1.1\r\nHost: agent\r\n\r\n');
    await waitUntil(() => ((conn.received().match(/HTTP\/1\.1 200 /g) ?? []).length === 2 ? true : undefined), 10_000, 'the second answer');
    expect(conn.received().match(/HTTP\/1\.1 200 /g)).toHaveLength(2);
    expect(conn.received().toLowerCase()).not.toContain('connection: close');
    conn.socket.destroy();
  });
});

describe('a route that neither reads the body nor answers', () => {
  it('loses the connection once the whole request is overdue (headers + body deadlines)', async () => {
    const stuck = await serveWith({ headersTimeoutMs: 400, bodyIdleTimeoutMs: 400, bodyTimeoutMs: 800 }, { extraRoutes: (_req, _res, path) => path === '/stuck' && new Promise<boolean>(() => {}) });
    try {
      const socket = connect(stuck.port, '127.0.0.1');
      socket.on('error', () => {});
      const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
      const started = Date.now();
      socket.write('GET /stuck HTTP/1.1\r\nHost: agent\r\nContent-Length: 100000\r\n\r\n');
      trickle(socket, 'x'.repeat(1000), 100);
      const at = await Promise.race([closed, new Promise<number>((resolve) => setTimeout(() => resolve(-1), 4000))]);
      socket.destroy();
      expect(at).toBeGreaterThan(0);
      expect(at - started).toBeLessThan(3000);
    } finally {
      await stuck.stop(100);
    }
  });
});

describe('the connection cap', () => {
  it('drops connections past the cap and accepts again once one closes', async () => {
    // A kept-alive connection of an earlier test (fetch pools them) would take a slot and expire mid-test.
    await noConnections();
    const held = await Promise.all(Array.from({ length: 8 }, () => open()));
    // Each held connection is mid-request, so none is idle.
    for (const c of held) c.socket.write('GET /healthz HTTP/1.1\r\nHost: agent\r\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const extra = await open();
    extra.socket.write('GET /healthz HTTP/1.1\r\nHost: agent\r\n\r\n');
    expect(await extra.closed(5000)).toBe('');
    for (const c of held) c.socket.destroy();
    await Promise.all(held.map((c) => c.closed()));
    expect((await request('GET', '/healthz')).status).toBe(200);
  });
});

describe('request heads an attacker sends', () => {
  it('closes a connection that sends nothing at the header deadline', async () => {
    const idle = await open();
    const started = Date.now();
    await idle.closed(5000);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it.each([
    ['a 100 kB header', `GET /healthz HTTP/1.1\r\nHost: agent\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`, 431],
    ['5000 headers', `GET /healthz HTTP/1.1\r\nHost: agent\r\n${Array.from({ length: 5000 }, (_, i) => `X-${i}: y\r\n`).join('')}\r\n`, 431],
    ['Content-Length beside Transfer-Encoding (request smuggling)', 'POST /tools/echo HTTP/1.1\r\nHost: agent\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400],
    ['no Host', 'GET /healthz HTTP/1.1\r\n\r\n', 400],
  ])('%s is refused and its connection closed', async (_name, head, status) => {
    const conn = await open();
    conn.socket.write(head);
    expect(await conn.closed(3000)).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  });
});

describe('bodies over the size limit', () => {
  it.each([
    ['MCP', '/mcp', (json: any) => expect(json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'FORGE_BODY_TOO_LARGE' } } })],
    ['A2A', '/a2a', (json: any) => expect(json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'FORGE_BODY_TOO_LARGE' } } })],
  ])('are a 413 with a JSON-RPC error over %s (REST: bundle-server.test.ts)', async (_front, path, check) => {
    const conn = await open();
    conn.socket.write(`POST ${path} HTTP/1.1\r\nHost: agent\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${2 * 1024 * 1024}\r\n\r\n{"a":`);
    const got = await conn.closed(3000);
    expect(got).toMatch(/^HTTP\/1\.1 413 /);
    check(JSON.parse(got.slice(got.indexOf('\r\n\r\n') + 4)));
  });
});

describe('malformed paths', () => {
  it.each(['/tools/%E0%A4%A', '/tools/%', '/tools/%zz', '/tools/abc%FF', '//:', '//[::1/tools/echo'])('%s is a 400, not a 500', async (path) => {
    for (const method of ['GET', 'POST']) {
      const { status, json } = await request(method, path, method === 'POST' ? '{}' : undefined);
      expect(status).toBe(400);
      expect(json.error.code).toBe('FORGE_BAD_PATH');
    }
  });
});

describe('over-deep JSON', () => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
  const deepObject = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

  it('is a 400 over REST', async () => {
    const { status, json } = await request('POST', '/tools/echo', `{"x":${deep(10_000)}}`);
    expect(status).toBe(400);
    expect(json.error.code).toBe('FORGE_JSON_TOO_DEEP');
  });

  // A JSON-RPC client reads a JSON-RPC error object, as it gets for a parse error there.
  it.each([
    ['MCP', '/mcp', () => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":${deepObject(5000)}}}`],
    ['A2A', '/a2a', () => `{"jsonrpc":"2.0","id":1,"method":"message/send","params":${deep(100_000)}}`],
  ])('is a 400 with a JSON-RPC error over %s', async (_front, path, body) => {
    const { status, json } = await request('POST', path, body());
    expect(status).toBe(400);
    expect(json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('deeper than 64'), data: { code: 'FORGE_JSON_TOO_DEEP' } } });
  });

  it('lets JSON at the depth limit through', async () => {
    const { status, json } = await request('POST', '/tools/echo', `{"x":${deep(63)}}`);
    expect(status).toBe(200);
    expect(json.ok).toBe(true);
  });

  it('counts brackets inside strings as text', () => {
    expect(jsonNestsDeeperThan(Buffer.from(`{"a":"${'['.repeat(1000)}\\"["}`), 2)).toBe(false);
    expect(jsonNestsDeeperThan(Buffer.from('[[[]]]'), 2)).toBe(true);
    expect(jsonNestsDeeperThan(Buffer.from('[[]]'), 2)).toBe(false);
  });
});

