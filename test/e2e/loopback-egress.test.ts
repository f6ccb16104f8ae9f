/**
 * A model (or MCP server) on loopback, written in forge.yaml, allows that
 * endpoint — not the whole machine. An attacker who steers the agent's
 * http_request (a prompt injection, a REST or MCP caller) aims it at another
 * loopback port: an admin server beside the model, or the agent's own port.
 * Every front end is tried against the built bundle; the admin server must
 * never see a request, while the model's own endpoint stays reachable.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.ts';
import { startServer, type TestServer } from '../helpers/http-server.ts';
import { forge, tempDir, writeProject } from '../helpers/project.ts';
import { startScriptedOpenAI, type ScriptedServer } from '../helpers/scripted-llm.ts';

const TOKEN = 'loopback-token';
const auth = { authorization: `Bearer ${TOKEN}` };
let llm: ScriptedServer;
let admin: TestServer;
let agent: AgentProcess;
let bundle: string;

beforeAll(async () => {
  admin = await startServer((_req, res) => res.end('admin secret'));
  // The model asks for the admin server, then reports what the tool answered.
  llm = await startScriptedOpenAI([
    { toolCalls: [{ name: 'http_request', arguments: { url: `http://127.0.0.1:${admin.port}/secret` } }] },
    (body) => ({ text: `tool said: ${body.messages.at(-1).content}` }),
  ]);
  const project = writeProject({
    'forge.yaml': `agent_id: loopback\nversion: 1.0.0\ndescription: x\nmodel: { provider: openai, name: scripted, base_url: "${llm.url}/v1" }\ntools:\n  - http_request\napproval:\n  auto_approve: ["name:http_request"]\n`,
  });
  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stderr).toBe(0);
  bundle = join(project, '.forge-output');
  agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: tempDir(), env: { FORGE_AUTH_TOKEN: TOKEN } });
}, 120_000);

afterAll(async () => {
  await agent?.stop();
});

const restCall = async (url: string) => (await fetch(`${agent.url}/tools/http_request`, { method: 'POST', headers: auth, body: JSON.stringify({ url }) })).json() as Promise<any>;

describe("a loopback endpoint written in forge.yaml opens that endpoint's port only", () => {
  it('agent.json allows the address on the model port, not the address alone', () => {
    const egress = JSON.parse(readFileSync(join(bundle, 'agent.json'), 'utf8')).egress;
    expect(egress.allowed_addresses).toEqual([`127.0.0.1:${llm.port}`]);
  });

  it('REST: another loopback port (an admin server, the agent itself) is refused; the model port is reached', async () => {
    for (const url of [`http://127.0.0.1:${admin.port}/secret`, `http://2130706433:${admin.port}/secret`, `http://[::ffff:127.0.0.1]:${admin.port}/secret`, `${agent.url.replace('localhost', '127.0.0.1')}/healthz`]) {
      const answer = await restCall(url);
      expect(answer, url).toMatchObject({ ok: false, error: { code: 'FORGE_EGRESS_REFUSED', message: expect.stringContaining('allowed only on port') } });
    }
    // The endpoint itself: the scripted model answers 404 to a GET, which http_request reports as a response.
    expect(await restCall(`${llm.url}/v1/models`)).toMatchObject({ ok: true, value: { status: 404 } });
    expect(admin.requests).toHaveLength(0);
  });

  it('MCP: the same call from an MCP client is an error result', async () => {
    const client = new Client({ name: 'attacker', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), { requestInit: { headers: auth } }));
    try {
      const result = (await client.callTool({ name: 'http_request', arguments: { url: `http://127.0.0.1:${admin.port}/secret` } })) as { isError?: boolean; content: { text: string }[] };
      expect(result.isError).toBe(true);
      expect(result.content[0].text).toContain('FORGE_EGRESS_REFUSED');
    } finally {
      await client.close();
    }
    expect(admin.requests).toHaveLength(0);
  });

  it('A2A: a model steered to the admin server gets a refusal as its tool result', async () => {
    const response = await fetch(`${agent.url}/a2a`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', role: 'user', messageId: 'm-1', parts: [{ kind: 'text', text: 'fetch the admin page' }] } } }),
    });
    const answer = (await response.json()) as any;
    expect(answer.result.status.state).toBe('completed');
    expect(answer.result.artifacts[0].parts[0].text).toContain('FORGE_EGRESS_REFUSED');
    expect(llm.bodies).toHaveLength(2);
    expect(admin.requests).toHaveLength(0);
  });
});
