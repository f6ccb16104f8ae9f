/**
 * MCP discovery at build time: live against a real server, and from the
 * tools the last build recorded when a server is down or the build is
 * offline — under the allow/deny that forge.yaml says today.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import type { McpServerSettings } from '../../../runtime/tools/adapters/settings.ts';
import type { ToolSpec } from '../../../runtime/tools/model.ts';
import { silentLogger } from '../../../runtime/tools/registry.ts';
import { discoverMcpTools } from '../../../stages/adapters/discover-mcp.ts';
import { readRecordedAdapters } from '../../../stages/adapters/recorded-manifest.ts';
import type { McpServerConfig } from '../../../stages/config/adapter-config.ts';
import { everythingStdioServer } from '../../helpers/mcp-servers.ts';
import { tempDir } from '../../helpers/project.ts';

const at = { file: 'forge.yaml', line: 4, column: 7 };
const ctx = () => ({ http: new HttpClient(), env: process.env, log: silentLogger, workDir: tempDir() });
const config = (settings: McpServerSettings, tools?: McpServerSettings['tools']): McpServerConfig => ({ ...settings, ...(tools ? { tools } : {}), at });

/** An agent.json whose last build recorded these tools of server "everything" (under `server`'s settings, when given). */
function recordedWith(...tools: string[]) {
  return recordedUnder({ name: 'everything' }, ...tools);
}

function recordedUnder(server: object, ...tools: string[]) {
  const spec = (tool: string): ToolSpec => ({ name: `everything__${tool}`, description: tool, category: 'adapter', inputSchema: { type: 'object' }, tags: ['read'], adapter: { kind: 'mcp', server: 'everything', tool } });
  const file = join(tempDir(), 'agent.json');
  writeFileSync(file, JSON.stringify({ tools: tools.map(spec), mcp: { servers: [server] } }));
  return readRecordedAdapters(file);
}

const found = (discovery: { tools: { spec: { name: string } }[] }) => discovery.tools.map((t) => t.spec.name).sort();

describe('discoverMcpTools', () => {
  it('lists a live server\'s tools under tools.allow, and warns about a pattern that matches none', async () => {
    const server = config(everythingStdioServer(), { allow: ['echo', 'get-sum', 'no-such-tool'] });
    const found = await discoverMcpTools([server], 'live', undefined, ctx());
    expect(found.tools.map((t) => t.spec.name)).toEqual(['everything__echo', 'everything__get-sum']);
    expect(found.contacted).toEqual(['everything']);
    expect(found.diagnostics).toMatchObject([{ severity: 'warning', code: 'FORGE_MCP_FILTER', message: expect.stringContaining('"no-such-tool"') }]);
  });

  it('warns of a tools.deny pattern that matches no tool, naming the tool it likely meant, which stays in', async () => {
    const server = config(everythingStdioServer(), { allow: ['echo', 'get-sum'], deny: ['ecoh'] });
    const live = await discoverMcpTools([server], 'live', undefined, ctx());
    expect(live.tools.map((t) => t.spec.name)).toEqual(['everything__echo', 'everything__get-sum']);
    expect(live.diagnostics).toMatchObject([{ severity: 'warning', code: 'FORGE_MCP_FILTER', message: 'tools.deny pattern "ecoh" matches no tool of MCP server "everything", so "echo" is not left out', hint: 'did you mean "echo"?' }]);
  });

  it('builds offline from the recorded tools, under today\'s tools.deny', async () => {
    const server = config(everythingStdioServer({ command: '/nonexistent/mcp-server' }), { deny: ['get-*'] });
    const found = await discoverMcpTools([server], 'offline', recordedWith('echo', 'get-sum'), ctx());
    expect(found.tools.map((t) => t.spec.name)).toEqual(['everything__echo']);
    expect(found.contacted).toEqual([]);
    expect(found.diagnostics).toEqual([]);
  });

  it('falls back on the recorded tools of an optional server that is down, under today\'s tools.deny', async () => {
    const server = config(everythingStdioServer({ command: '/nonexistent/mcp-server', required: false }), { deny: ['get-*'] });
    const found = await discoverMcpTools([server], 'live', recordedWith('echo', 'get-sum'), ctx());
    expect(found.tools.map((t) => t.spec.name)).toEqual(['everything__echo']);
    expect(found.diagnostics).toMatchObject([{ severity: 'warning', code: 'FORGE_MCP_CONNECT', message: expect.stringContaining('using the tools recorded by the last build') }]);
  });

  it("a source command (recorded-or-live) takes the recorded list only when it was recorded under today's settings", async () => {
    const { at: _at, ...settings } = config(everythingStdioServer(), { deny: ['get-*'] });
    // Recorded under today's settings: the list stands, and nothing is started (the server's command is one).
    const same = await discoverMcpTools([config({ ...settings, command: settings.command }, { deny: ['get-*'] })], 'recorded-or-live', recordedUnder(settings, 'echo', 'only-recorded'), ctx());
    expect(found(same)).toEqual(['everything__echo', 'everything__only-recorded']);
    expect(same.contacted).toEqual([]);
    // The deny taken away since: the recorded list (which it kept out) is not today's; the server is asked.
    const widened = await discoverMcpTools([config(everythingStdioServer(), { allow: ['echo', 'get-sum'] })], 'recorded-or-live', recordedUnder(settings, 'echo', 'only-recorded'), ctx());
    expect(found(widened)).toEqual(['everything__echo', 'everything__get-sum']);
    expect(widened.contacted).toEqual(['everything']);
    // Another command or argument: asked again too.
    const moved = await discoverMcpTools([config({ ...settings, args: [...(settings.args ?? []), '--changed'] }, { deny: ['get-*'] })], 'recorded-or-live', recordedUnder(settings, 'only-recorded'), ctx());
    expect(moved.contacted).toEqual(['everything']);
  });

  it('reports a required server that is down as an error at its line, with no tools', async () => {
    const server = config(everythingStdioServer({ command: '/nonexistent/mcp-server' }));
    const found = await discoverMcpTools([server], 'live', recordedWith('echo'), ctx());
    expect(found.tools).toEqual([]);
    expect(found.diagnostics).toMatchObject([{ severity: 'error', code: 'FORGE_MCP_CONNECT', line: 4, message: 'MCP server "everything": cannot start "/nonexistent/mcp-server": command not found' }]);
  });
});
