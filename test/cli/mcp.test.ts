/**
 * `forge mcp list` and `forge mcp test` around what can go wrong before and
 * while connecting (the happy paths run against real servers in
 * test/e2e/adapters.test.ts).
 */
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { everythingServerScript } from '../helpers/mcp-servers.ts';
import { forge, minimalConfig, repoRoot, runProcess, tempDir, writeProject } from '../helpers/project.ts';

const servers = `mcp:
  servers:
    - { name: gone, transport: stdio, command: /nonexistent/mcp-server }
    - { name: maybe, transport: stdio, command: /nonexistent/other-server, required: false }
    - { name: everything, transport: stdio, command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(everythingServerScript)}, stdio], tools: { allow: [echo] } }
`;

describe("a server that cannot start: its stderr's error line is shown, not only the lines after it", () => {
  // Node's own failure to find the script: "Error: Cannot find module …", then a stack, an object and "Node.js v20".
  const missing = () => writeProject({ 'forge.yaml': minimalConfig(`mcp:\n  servers:\n    - { name: fs, transport: stdio, command: ${JSON.stringify(process.execPath)}, args: [/nonexistent/indx.js] }\n`) });

  it('in forge build, forge mcp list and forge mcp test; and mcp test does not send the user to itself', async () => {
    const project = missing();
    const built = await forge(['build'], project);
    expect(built.code).toBe(1);
    expect(built.stderr).toContain('FORGE_MCP_CONNECT');
    expect(built.stderr).toMatch(/Error: Cannot find module '\/nonexistent\/indx\.js'/);
    expect(built.stderr).toContain('Node.js v');
    const listed = await forge(['mcp', 'list'], project);
    expect(listed.stdout).toMatch(/\| Error: Cannot find module '\/nonexistent\/indx\.js'/);
    const tested = await forge(['mcp', 'test', 'fs'], project);
    expect(tested.code).toBe(1);
    expect(tested.stderr).toContain("Cannot find module '/nonexistent/indx.js'");
    expect(tested.stderr).not.toContain('forge mcp test fs');
    expect(tested.stderr).toContain('hint: its stderr, in full, is below');
  }, 60_000);
});

describe('a command written with its arguments', () => {
  it('is said to be one program, with the command: and args: to write instead', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(`mcp:\n  servers:\n    - { name: fs, transport: stdio, command: "node /srv/index.js /tmp" }\n`) });
    const { code, stdout } = await forge(['mcp', 'list', '--json'], project);
    expect(code).toBe(1);
    expect(JSON.parse(stdout).servers[0].error).toMatchObject({ message: 'MCP server "fs": cannot start "node /srv/index.js /tmp": command not found', hint: 'command: is one program, started without a shell: write command: node and args: [/srv/index.js, /tmp]' });
  });
});

describe('forge mcp', () => {
  it('reports a missing forge.yaml as a diagnostic, in text and in JSON', async () => {
    const dir = tempDir();
    const text = await forge(['mcp', 'list'], dir);
    expect(text.code).toBe(1);
    expect(text.stderr).toContain('FORGE_CONFIG_NOT_FOUND no forge.yaml in this directory or any parent');
    const json = await forge(['mcp', 'list', '--json'], dir);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, errors: [{ code: 'FORGE_CONFIG_NOT_FOUND', hint: 'run `forge init` to create a project' }] });
  });

  it('list shows every server\'s state, and exits 1 when one could not be reached', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(servers) });
    const { code, stdout } = await forge(['mcp', 'list', '--json'], project);
    expect(code).toBe(1);
    const { ok, servers: rows } = JSON.parse(stdout);
    expect(ok).toBe(false);
    expect(rows).toMatchObject([
      { name: 'gone', required: true, ok: false, error: { message: 'MCP server "gone": cannot start "/nonexistent/mcp-server": command not found', hint: expect.stringContaining('mcp.servers[].command') } },
      { name: 'maybe', required: false, ok: false },
      { name: 'everything', ok: true, tools: { used: ['echo'], total: expect.any(Number) } },
    ]);
  });

  it('test reports a server that cannot start, with the hint', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(servers) });
    const { code, stderr } = await forge(['mcp', 'test', 'gone'], project);
    expect(code).toBe(1);
    expect(stderr).toContain('✘ MCP server "gone": cannot start "/nonexistent/mcp-server": command not found');
    expect(stderr).toContain('hint: install it, or give its full path in mcp.servers[].command');
  });

  it.each([
    ['no server name', ['mcp', 'test'], 'missing server name'],
    ['--args without --call', ['mcp', 'test', 'everything', '--args', '{}'], '--args needs --call'],
    ['--args that are not JSON', ['mcp', 'test', 'everything', '--call', 'echo', '--args', '{nope'], '--args is not valid JSON'],
  ])('test refuses %s as a usage error', async (_what, args, message) => {
    const project = writeProject({ 'forge.yaml': minimalConfig(servers) });
    const { code, stderr } = await forge(args, project);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
  });

  it('test names a tool the server does not have, with a suggestion', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(servers) });
    const { code, stderr } = await forge(['mcp', 'test', 'everything', '--call', 'ecko'], project);
    expect(code).toBe(2);
    expect(stderr).toContain('MCP server "everything" has no tool "ecko" (did you mean "echo"?)');
  });
});

describe('forge mcp test --call', () => {
  it('calls a tool only as the agent would: one left out by tools.allow/deny, or refused by an auto_deny rule, is not called', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(servers) });
    const leftOut = await forge(['mcp', 'test', 'everything', '--call', 'get-sum', '--args', '{"a": 1, "b": 2}', '--json'], project);
    expect(leftOut.code).toBe(1);
    expect(JSON.parse(leftOut.stdout)).toMatchObject({ ok: false, tool: 'everything__get-sum', result: { ok: false, error: { code: 'FORGE_TOOL_DENIED', message: 'everything__get-sum is left out by mcp.servers[everything].tools (allow/deny), so the agent never calls it' } } });
    const allowed = await forge(['mcp', 'test', 'everything', '--call', 'echo', '--args', '{"message": "hi"}'], project);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toContain('hi');
    const denying = writeProject({ 'forge.yaml': minimalConfig(`${servers}approval:\n  auto_deny: ["name:everything__echo"]\n`) });
    const denied = await forge(['mcp', 'test', 'everything', '--call', 'echo', '--args', '{"message": "hi"}'], denying);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toContain('FORGE_TOOL_DENIED tool "everything__echo" is refused by the approval rule "name:everything__echo"');
  });
});

describe('forge mcp test carries forge.yaml\'s warnings, as forge mcp list does', () => {
  it('--json: `warnings` in the listing, the call and a failure; text mode prints them on stderr', async () => {
    const project = writeProject({ 'forge.yaml': `agent_id: test-agent\nversion: 1.0.0\ndescription: !custom A test agent.\n${servers}` });
    const yamlWarning = [{ severity: 'warning', code: 'FORGE_YAML_WARNING', file: 'forge.yaml', line: 3 }];
    const listed = await forge(['mcp', 'test', 'everything', '--json'], project);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ ok: true, tools: expect.any(Array), warnings: yamlWarning });
    expect(listed.stderr).toBe('');
    const called = await forge(['mcp', 'test', 'everything', '--call', 'echo', '--args', '{"message": "hi"}', '--json'], project);
    expect(called.code, called.stderr).toBe(0);
    expect(JSON.parse(called.stdout)).toMatchObject({ ok: true, result: { ok: true }, warnings: yamlWarning });
    const failed = await forge(['mcp', 'test', 'gone', '--json'], project);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_MCP_CONNECT' }, warnings: yamlWarning });
    const text = await forge(['mcp', 'test', 'everything'], project);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain('FORGE_YAML_WARNING');
  });

  // The usage errors failed in the shared shape with `warnings: []`.
  it.each([
    { what: 'a server forge.yaml does not have', args: ['mcp', 'test', 'nowhere', '--json'], message: 'no MCP server named "nowhere"' },
    { what: 'a tool the server does not have', args: ['mcp', 'test', 'everything', '--call', 'nope', '--json'], message: 'MCP server "everything" has no tool "nope"' },
  ])('--json: a usage error ($what) keeps them too', async ({ args, message }) => {
    const project = writeProject({ 'forge.yaml': `agent_id: test-agent\nversion: 1.0.0\ndescription: !custom A test agent.\n${servers}` });
    const refused = await forge(args, project);
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_USAGE', message: expect.stringContaining(message) }, warnings: [{ severity: 'warning', code: 'FORGE_YAML_WARNING', file: 'forge.yaml', line: 3 }] });
  });
});

describe('forge mcp shows what a server chose, and does not obey it', () => {
  // A server's name, version and tool descriptions, and what a failing one prints to stderr, are its own text.
  const hostile = `import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
const server = new McpServer({ name: 'evil\\x1b]0;owned\\x07', version: '1.0\\u009b2J' });
server.registerTool('echo', { description: 'Echo.\\x1b]8;;http://evil.example\\x07click\\x1b]8;;\\x07 \\u202etxt.exe' }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
await server.connect(new StdioServerTransport());
`;
  const failing = `process.stderr.write('boom \\x1b[2J\\x1b]0;owned\\x07 \\u009b2J\\n'); process.exit(1);\n`;
  const project = () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(`mcp:
  servers:
    - { name: hostile, transport: stdio, command: ${JSON.stringify(process.execPath)}, args: [hostile.mjs] }
    - { name: failing, transport: stdio, command: ${JSON.stringify(process.execPath)}, args: [failing.mjs] }
`), 'hostile.mjs': hostile, 'failing.mjs': failing });
    // The server imports the SDK from Forge's own node_modules.
    symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
    return dir;
  };
  const raw = /[\x1b\x07\u0080-\u009f\u202e]/;

  it('list and test show escape sequences, C1 controls and bidi overrides escaped', async () => {
    const dir = project();
    const listed = await forge(['mcp', 'list'], dir);
    expect(listed.stdout).toContain('evil\\x1b]0;owned\\x07 1.0\\x9b2J');
    expect(listed.stdout).toContain('| boom \\x1b[2J\\x1b]0;owned\\x07 \\x9b2J');
    const tested = await forge(['mcp', 'test', 'hostile'], dir);
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.stdout).toContain('server  evil\\x1b]0;owned\\x07 1.0\\x9b2J');
    expect(tested.stdout).toContain('Echo.\\x1b]8;;http://evil.example\\x07click\\x1b]8;;\\x07 \\u{202e}txt.exe');
    const failed = await forge(['mcp', 'test', 'failing'], dir);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('| boom \\x1b[2J\\x1b]0;owned\\x07 \\x9b2J');
    for (const out of [listed, tested, failed]) expect(out.stdout + out.stderr).not.toMatch(raw);
  });

  it('forge tool list and describe, and the bundle\'s tools, show an adapter tool\'s description escaped', async () => {
    const dir = project();
    writeFileSync(join(dir, 'forge.yaml'), readFileSync(join(dir, 'forge.yaml'), 'utf8').replace(/\n.*name: failing.*\n/, '\n'));
    const description = 'Echo.\\x1b]8;;http://evil.example\\x07click\\x1b]8;;\\x07 \\u{202e}txt.exe';
    const listed = await forge(['tool', 'list'], dir);
    expect(listed.stdout, listed.stderr).toContain(description);
    const described = await forge(['tool', 'describe', 'hostile__echo'], dir);
    expect(described.stdout, described.stderr).toContain(`  ${description}`);
    const built = await forge(['build'], dir);
    expect(built.code, built.stderr).toBe(0);
    const tools = await runProcess(process.execPath, [join(dir, '.forge-output', 'runtime.mjs'), 'tools'], { cwd: dir });
    expect(tools.stdout, tools.stderr).toContain(description);
    for (const out of [listed, described, tools]) expect(out.stdout + out.stderr).not.toMatch(raw);
  });
});
