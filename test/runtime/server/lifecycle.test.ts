/**
 * How a serving agent stops and what MCP mode it serves: a drain keeps
 * serving while /readyz says 503; MCP over HTTP keeps no session unless
 * FORGE_MCP_SESSIONS=stateful asks for one.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { Agent as HttpAgent, get, request, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { stopTiming } from '../../../runtime/server/lifecycle.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { ok } from '../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';
import { startScriptedOpenAI } from '../../helpers/scripted-llm.ts';

const running: RunningAgent[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((r) => r.stop(100)));
});

async function serve(env: NodeJS.ProcessEnv = {}, setUp?: (registry: ToolRegistry) => void, model?: AgentManifest['model']): Promise<RunningAgent> {
  const dir = tempDir();
  const registry = new ToolRegistry({ workDir: dir });
  setUp?.(registry);
  const manifest = { agent_id: 'stopping', version: '1.0.0', description: '', tools: [], model } as unknown as AgentManifest;
  const agent = await serveAgent({ manifest, registry, workDir: dir, host: '127.0.0.1', port: 0, noAuth: true, http: new HttpClient(), log: silentLogger, env: { ...env } });
  running.push(agent);
  return agent;
}

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('stopping', () => {
  it('answers /readyz 503 during the drain delay while still serving requests, then stops', async () => {
    const agent = await serve();
    const stopped = agent.stop(1000, 800);
    const ready = await fetch(`${agent.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ ready: false, reason: 'shutting down' });
    expect((await fetch(`${agent.url}/tools`)).status).toBe(200);
    await stopped;
    await expect(fetch(`${agent.url}/healthz`)).rejects.toThrow();
  });

  it('keeps no connection alive once the drain begins: idle ones are closed, and every answer says Connection: close', async () => {
    const agent = await serve();
    const { port } = new URL(agent.url);
    // A client's keep-alive connection, waiting idle after its first answer.
    const idle = connect(Number(port), '127.0.0.1');
    let idleEnded = false;
    idle.on('end', () => (idleEnded = true));
    const firstAnswer = await new Promise<string>((resolve) => {
      let text = '';
      idle.on('data', (chunk) => {
        text += chunk;
        if (text.includes('\r\n\r\n')) resolve(text);
      });
      idle.write('GET /healthz HTTP/1.1\r\nHost: agent\r\n\r\n');
    });
    expect(firstAnswer).toMatch(/^connection: keep-alive\r$/im);

    agent.drain(); // what SIGTERM does first
    const pooled = new HttpAgent({ keepAlive: true });
    const headersOf = (path: string) => new Promise<IncomingHttpHeaders>((resolve, reject) => get(`${agent.url}${path}`, { agent: pooled }, (res) => (res.resume(), resolve(res.headers))).on('error', reject));
    expect((await headersOf('/healthz')).connection).toBe('close');
    expect((await headersOf('/readyz')).connection).toBe('close');
    // Closed by the server within a turn of its event loop, before either of those was answered: its end has reached this side by now.
    expect(idleEnded).toBe(true);
    pooled.destroy();
    idle.destroy();
  });

  it('answers Connection: close to a call that was running when the drain began', async () => {
    let release!: () => void;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const agent = await serve({}, (registry) =>
      registry.register({ name: 'slow', description: 'Waits.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async () => (started(), await new Promise<void>((resolve) => (release = resolve)), ok('done')) }, 'test'),
    );
    const pooled = new HttpAgent({ keepAlive: true });
    const answered = new Promise<IncomingHttpHeaders>((resolve, reject) => {
      const req = request(`${agent.url}/tools/slow`, { method: 'POST', agent: pooled, headers: { 'content-type': 'application/json' } }, (res) => (res.resume(), resolve(res.headers)));
      req.on('error', reject).end('{}');
    });
    await running;
    agent.drain();
    release();
    expect((await answered).connection).toBe('close');
    pooled.destroy();
  });

  it('answers Connection: close to an A2A message stream begun during the drain', async () => {
    const llm = await startScriptedOpenAI([{ text: 'streamed' }]);
    const agent = await serve({ OPENAI_API_KEY: 'k' }, undefined, { provider: 'openai', name: 'scripted', base_url: `${llm.url}/v1` } as AgentManifest['model']);
    agent.drain();
    const message = { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'hello' }] };
    const response = await fetch(`${agent.url}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: { message } }) });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('connection')).toBe('close');
    expect(await response.text()).toContain('streamed');
  });

  it("answers Connection: close to an MCP session's event stream begun during the drain", async () => {
    const agent = await serve({ FORGE_MCP_SESSIONS: 'stateful' });
    agent.drain();
    const response = await fetch(`${agent.url}/mcp`, { method: 'POST', headers: mcpHeaders, body: JSON.stringify(initialize) });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('connection')).toBe('close');
    await response.body?.cancel();
  });

  // quietMs 0: a stop without a drain delay (forge run) waits for no lull, and still takes what waits in the queue.
  it.each([[undefined], [0]])('closes its listener only once connections stop coming (quietMs %s): those waiting in its accept queue while its event loop was busy are answered, not reset', async (quietMs) => {
    const agent = await serve();
    const flag = join(tempDir(), 'queued');
    // Another process's client (this one's event loop is about to be busy): fresh connections whose handshake the
    // kernel completes, each with its request sent, then one fresh connection after another once those are answered.
    const client = spawn(process.execPath, ['-e', QUEUED_CLIENT, new URL(agent.url).port, flag], { stdio: ['ignore', 'pipe', 'inherit'] });
    let said = '';
    client.stdout.on('data', (chunk) => (said += chunk));
    const clientDone = new Promise((resolve) => client.on('exit', resolve));
    agent.drain();
    await new Promise<void>((resolve, reject) =>
      setImmediate(() => {
        // Busy until they all wait in the accept queue (as a load balancer's do when its probe was late), then the
        // stop goes on to close the listener, as it does at the end of the drain delay.
        const bound = performance.now() + 20_000;
        while (!existsSync(flag)) if (performance.now() > bound) return reject(new Error('the client did not connect'));
        void agent.close(20_000, quietMs).then(resolve, reject);
      }),
    );
    await clientDone;
    const { queued, later } = JSON.parse(said) as { queued: string[]; later: string[] };
    const answered = /^HTTP\/1\.1 200 OK\r\n[^]*^connection: close\r$[^]*\r\n\r\n\{"status":"ok"\}$/im;
    expect(queued).toHaveLength(QUEUED);
    for (const answer of queued) expect(answer).toMatch(answered);
    // Answered while they keep coming; refused once the listener closed (the client paused long enough, on a loaded machine).
    // Between the two, at most one connection that raced the close: the kernel completed it before the listener closed,
    // but its client (another process, on a loaded machine) had not written its request by the time the stop took the
    // connections waiting, so it was closed as carrying none (an empty reply, or a reset if the request came after).
    expect(later).toHaveLength(10);
    const outcome = (answer: string) => (answered.test(answer) ? 'answered' : /^ECONNREFUSED after ""$/.test(answer) ? 'refused' : /^(ECONNRESET after "")?$/.test(answer) ? 'raced' : answer);
    expect(later.map(outcome).join(' ')).toMatch(/^(answered ?)*(raced ?)?(refused ?)*$/);
  });

  it('answers the requests already sent on idle keep-alive connections when the drain begins with its event loop busy, rather than reset them', async () => {
    const agent = await serve();
    const dir = tempDir();
    const client = spawn(process.execPath, ['-e', KEPT_ALIVE_CLIENT, new URL(agent.url).port, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let said = '';
    client.stdout.on('data', (chunk) => (said += chunk));
    const clientDone = new Promise((resolve) => client.on('exit', resolve));
    while (!existsSync(join(dir, 'idle'))) await new Promise((resolve) => setTimeout(resolve, 10));
    setImmediate(() => {
      // Busy while the client sends its next requests on its idle connections (as a load balancer's pool does
      // before its probe sees the 503), then the drain begins, as SIGTERM begins it.
      writeFileSync(join(dir, 'go'), '');
      const bound = performance.now() + 20_000;
      while (!existsSync(join(dir, 'sent')) && performance.now() < bound);
      agent.drain();
    });
    await clientDone;
    const { first, second } = JSON.parse(said) as { first: string[]; second: string[] };
    for (const answer of first) expect(answer).toMatch(/^connection: keep-alive\r$/im);
    expect(second).toHaveLength(KEPT_ALIVE);
    for (const answer of second) expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*^connection: close\r$[^]*\r\n\r\n\{"status":"ok"\}$/im);
  });

  it('drains by default only in a cluster or with a shared store', () => {
    expect(stopTiming({}, false)).toEqual({ drainMs: 0, graceMs: 20_000 });
    expect(stopTiming({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, false).drainMs).toBe(5000);
    expect(stopTiming({}, true).drainMs).toBe(5000);
    expect(stopTiming({ FORGE_DRAIN_DELAY: '250ms', FORGE_SHUTDOWN_GRACE: '2s' }, true)).toEqual({ drainMs: 250, graceMs: 2000 });
    expect(() => stopTiming({ FORGE_DRAIN_DELAY: 'soon' }, true)).toThrow('FORGE_DRAIN_DELAY="soon" is not a duration');
  });
});

describe('MCP over HTTP', () => {
  it('keeps no session by default: no session id, and a request needs no initialize before it', async () => {
    const agent = await serve();
    const init = await fetch(`${agent.url}/mcp`, { method: 'POST', headers: mcpHeaders, body: JSON.stringify(initialize) });
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeNull();
    await init.text();
    // Nothing is remembered between requests: any replica could answer this one.
    const list = await fetch(`${agent.url}/mcp`, { method: 'POST', headers: { ...mcpHeaders, 'mcp-protocol-version': '2025-06-18' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    expect(await list.text()).toContain('"tools"');
    expect((await fetch(`${agent.url}/mcp`, { method: 'DELETE' })).status).toBe(405);
  });

  it('keeps sessions in the process with FORGE_MCP_SESSIONS=stateful', async () => {
    const agent = await serve({ FORGE_MCP_SESSIONS: 'stateful' });
    const init = await fetch(`${agent.url}/mcp`, { method: 'POST', headers: mcpHeaders, body: JSON.stringify(initialize) });
    expect(init.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
    await init.text();
    const unknown = await fetch(`${agent.url}/mcp`, { method: 'POST', headers: { ...mcpHeaders, 'mcp-session-id': 'not-a-session' }, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) });
    expect(unknown.status).toBe(404);
  });
});

const QUEUED = 16;

/** Opens QUEUED connections to the port in argv[1], sends GET /healthz on each, creates the file argv[2], then asks 10 more times on fresh connections one after another; prints the answers (or how each broke) as JSON. */
const QUEUED_CLIENT = `
const { connect } = require('node:net');
const { writeFileSync } = require('node:fs');
const [port, flag] = process.argv.slice(1);
const ask = (socket) => new Promise((resolve) => {
  let text = '';
  socket.on('connect', () => socket.write('GET /healthz HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n'));
  socket.on('data', (chunk) => (text += chunk));
  socket.on('end', () => resolve(text));
  socket.on('error', (err) => resolve(err.code + ' after ' + JSON.stringify(text)));
});
const queued = Array.from({ length: ${QUEUED} }, () => connect(Number(port), '127.0.0.1'));
const connected = queued.map((socket) => new Promise((resolve) => socket.once('connect', resolve)));
const answers = queued.map(ask);
Promise.all(connected).then(async () => {
  writeFileSync(flag, '');
  const queued = await Promise.all(answers);
  const later = [];
  for (let i = 0; i < 10; i++) later.push(await ask(connect(Number(port), '127.0.0.1')));
  process.stdout.write(JSON.stringify({ queued, later }));
});
`;

const KEPT_ALIVE = 8;

/**
 * Asks GET /healthz on KEPT_ALIVE connections to the port in argv[1] and keeps them; creates `idle` in the
 * directory argv[2], waits for `go` there, asks again on each, creates `sent`; prints the answers as JSON.
 */
const KEPT_ALIVE_CLIENT = `
const { connect } = require('node:net');
const { existsSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const [port, dir] = process.argv.slice(1);
const sockets = Array.from({ length: ${KEPT_ALIVE} }, () => connect(Number(port), '127.0.0.1'));
const ask = (socket) => new Promise((resolve) => {
  let text = '';
  const onData = (chunk) => {
    text += chunk;
    if (/\\r\\n\\r\\n[^]*"}$/.test(text)) done(text);
  };
  const done = (answer) => (socket.off('data', onData), resolve(answer));
  socket.on('data', onData);
  socket.once('end', () => done(text));
  socket.once('error', (err) => done(err.code + ' after ' + JSON.stringify(text)));
  socket.write('GET /healthz HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n\\r\\n');
});
(async () => {
  await Promise.all(sockets.map((socket) => new Promise((resolve) => socket.once('connect', resolve))));
  const first = await Promise.all(sockets.map(ask));
  writeFileSync(join(dir, 'idle'), '');
  while (!existsSync(join(dir, 'go'))) await new Promise((resolve) => setTimeout(resolve, 5));
  const second = Promise.all(sockets.map(ask));
  writeFileSync(join(dir, 'sent'), '');
  process.stdout.write(JSON.stringify({ first, second: await second }));
  for (const socket of sockets) socket.destroy();
})();
`;
