/**
 * What an attacker tries against the bearer token, on a real server over
 * raw sockets: a prefix, a longer token, the token in another scheme or the
 * query string, an empty or bare "Bearer", two Authorization headers (the
 * right one second). Only the exact token, in the one Authorization header,
 * with the Bearer scheme in any case (RFC 9110), is let in; a token set as
 * empty or blank in the environment is no token (one is generated).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../../runtime/manifest.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { resolveAuth } from '../../../runtime/server/auth.ts';
import { serveAgent, type RunningAgent } from '../../../runtime/server/serve.ts';
import { ok } from '../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';

const TOKEN = 'tok-Secret-0123456789';
let agent: RunningAgent;
let calls = 0;

beforeAll(async () => {
  const dir = tempDir();
  const registry = new ToolRegistry({ workDir: dir });
  registry.register({ name: 'echo', description: 'Echo.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async (args) => (calls++, ok(args)) }, 'test');
  const manifest = { agent_id: 'bearer', version: '1.0.0', description: '', tools: registry.list() } as unknown as AgentManifest;
  agent = await serveAgent({ manifest, registry, workDir: dir, host: '127.0.0.1', port: 0, env: { FORGE_AUTH_TOKEN: TOKEN }, http: new HttpClient(), log: silentLogger });
});

afterAll(async () => {
  await agent?.stop(100);
});

/** The status of GET /tools sent with these raw header lines. */
function statusWith(headerLines: string[], path = '/tools'): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(agent.port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('error', reject);
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)));
    socket.write([`GET ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...headerLines, '', ''].join('\r\n'));
  });
}

describe('the bearer token', () => {
  it.each([
    ['the token', [`Authorization: Bearer ${TOKEN}`], 200],
    ['the scheme in lower case', [`Authorization: bearer ${TOKEN}`], 200],
    ['spaces around the token', [`Authorization: Bearer   ${TOKEN}  `], 200],
    ['no header', [], 401],
    ['an empty header', ['Authorization:'], 401],
    ['a bare scheme', ['Authorization: Bearer'], 401],
    ['a scheme and blanks', ['Authorization: Bearer    '], 401],
    ['a prefix of the token', [`Authorization: Bearer ${TOKEN.slice(0, -1)}`], 401],
    ['the token and more', [`Authorization: Bearer ${TOKEN}x`], 401],
    ['the token in another case', [`Authorization: Bearer ${TOKEN.toUpperCase()}`], 401],
    ['the token as Basic', [`Authorization: Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`], 401],
    ['the token without a scheme', [`Authorization: ${TOKEN}`], 401],
    ['the token in another header', [`X-Authorization: Bearer ${TOKEN}`, `Proxy-Authorization: Bearer ${TOKEN}`], 401],
    ['the token after a wrong one, comma-joined', [`Authorization: Bearer wrong, Bearer ${TOKEN}`], 401],
    ['a wrong header first, the right one second', ['Authorization: Bearer wrong', `Authorization: Bearer ${TOKEN}`], 401],
  ])('%s: %s', async (_name, lines, status) => {
    expect(await statusWith(lines)).toBe(status);
  });

  it('is not taken from the query string', async () => {
    expect(await statusWith([], `/tools?token=${TOKEN}&access_token=${TOKEN}`)).toBe(401);
  });

  it('no call runs without it, over REST, MCP and A2A', async () => {
    calls = 0;
    for (const [path, body] of [['/tools/echo', '{}'], ['/mcp', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {} } })], ['/a2a', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } })]]) {
      const res = await fetch(`${agent.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer ' }, body });
      expect(res.status, path).toBe(401);
    }
    expect(calls).toBe(0);
  });

  it('set empty or blank in the environment is no token: one is generated', () => {
    for (const value of ['', '   ', '\t\n']) {
      const auth = resolveAuth({ workDir: tempDir(), env: { FORGE_AUTH_TOKEN: value, FORGE_STATE_DIR: tempDir() }, noAuth: false, host: '127.0.0.1' });
      expect(auth.token).toMatch(/^[\w-]{40,}$/);
      expect(auth.generatedAt).toBeDefined();
    }
  });
});
