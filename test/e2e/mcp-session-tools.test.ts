/**
 * The session-tier tools a stateful MCP session forged go when the session
 * ends: a built bundle served with FORGE_MCP_SESSIONS=stateful on the
 * `file:` store, the SDK's MCP client over Streamable HTTP. The session
 * forges a tool, ends (DELETE), and the tool is gone from .forge/forged/
 * and from the tools served: its name is free again for another session.
 * Nothing else could ever call it (no later session has its owner); it
 * stayed, counted against max_tools.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentProcess, type AgentProcess } from '../helpers/agent-process.ts';
import { waitUntil } from '../helpers/fleet.ts';
import { addNumbers } from '../helpers/forge-requests.ts';
import { deployBundle, forge, minimalConfig, tempDir, writeProject } from '../helpers/project.ts';

const TOKEN = 'mcp-session-tools-token';
let agent: AgentProcess;
let workDir: string;

beforeAll(async () => {
  const project = writeProject({ 'forge.yaml': minimalConfig('tools: [math_calculate]\nemergent: { timeout: 5 }\napproval:\n  auto_approve: ["name:forge_tool"]\n') });
  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stderr).toBe(0);
  const { bundle } = deployBundle(project);
  workDir = tempDir();
  agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: workDir, env: { FORGE_AUTH_TOKEN: TOKEN, FORGE_MCP_SESSIONS: 'stateful' } });
}, 120_000);

afterAll(async () => {
  await agent?.stop();
});

async function mcpSession(): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client({ name: 'forge-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${agent.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } });
  await client.connect(transport);
  return { client, transport };
}

describe('the session tools of an MCP session that ended', () => {
  it('are removed from .forge/forged/ and no longer served once the session ends', async () => {
    const stored = join(workDir, '.forge', 'forged', 'session_add', 'tool.json');
    const first = await mcpSession();
    const forged = await first.client.callTool({ name: 'forge_tool', arguments: { ...addNumbers, name: 'session_add' } });
    expect(forged.structuredContent, JSON.stringify(forged.content)).toMatchObject({ success: true, tier: 'session' });
    expect(existsSync(stored)).toBe(true);
    const other = await mcpSession();
    try {
      // Served in its session only: another session's forge of the name is refused while it is there.
      const taken = await other.client.callTool({ name: 'forge_tool', arguments: { ...addNumbers, name: 'session_add' } });
      expect(JSON.stringify(taken.content)).toContain('FORGE_TOOL_COLLISION');

      await first.transport.terminateSession();
      await first.client.close();
      await waitUntil(() => (existsSync(stored) ? undefined : true), 20_000, 'session_add taken out of .forge/forged/');
      await agent.waitFor('forged tool session_add');
      expect(agent.output()).toContain('MCP session ended: removed the 1 session tool forged in it');

      // No longer served: the name is free, and the other session forges its own.
      const again = await other.client.callTool({ name: 'forge_tool', arguments: { ...addNumbers, name: 'session_add' } });
      expect(again.structuredContent, JSON.stringify(again.content)).toMatchObject({ success: true, tier: 'session' });
      expect((await other.client.callTool({ name: 'session_add', arguments: { a: 2, b: 3 } })).structuredContent).toEqual({ sum: 5 });
    } finally {
      await other.client.close();
    }
  });
});
