/**
 * MCP servers as tools, against real servers from npm: server-filesystem
 * over stdio, server-everything over stdio and over Streamable HTTP. Calls
 * go through the registry, as in the agent.
 */
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEgressPolicy } from '../../../../runtime/guard/egress.ts';
import { HttpClient } from '../../../../runtime/net/http-client.ts';
import { createAdapterRuntime, startAdapterTools } from '../../../../runtime/tools/adapters/adapter-runtime.ts';
import * as mcp from '../../../../runtime/tools/adapters/mcp/index.ts';
import { McpConnections } from '../../../../runtime/tools/adapters/mcp/connections.ts';
import { createMcpTool } from '../../../../runtime/tools/adapters/mcp/mcp-tool.ts';
import { remoteToolSpec } from '../../../../runtime/tools/adapters/mcp/remote-tool.ts';
import type { McpServerSettings } from '../../../../runtime/tools/adapters/settings.ts';
import type { ToolSpec } from '../../../../runtime/tools/model.ts';
import { silentLogger, ToolRegistry } from '../../../../runtime/tools/registry.ts';
import { everythingStdioServer, filesystemServer, startEverythingHttp } from '../../../helpers/mcp-servers.ts';
import { repoRoot, tempDir } from '../../../helpers/project.ts';
import { startServer } from '../../../helpers/http-server.ts';

const loopbackOnly = () => new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: [], allowed_addresses: ['127.0.0.1'] }));

/** A registry holding every tool of the given servers, connected through one McpConnections that closes with it (as assembleRuntime's). */
async function registryFor(servers: McpServerSettings[], http = loopbackOnly()) {
  const workDir = tempDir('forge-mcp-work-');
  const connections = new McpConnections(servers, { http, env: process.env, log: silentLogger, workDir });
  const registry = new ToolRegistry({ workDir });
  registry.own(connections);
  const specs: ToolSpec[] = [];
  for (const server of servers) {
    const session = await connections.session(server.name);
    for (const tool of session.tools) {
      const spec = remoteToolSpec(server, tool);
      specs.push(spec);
      expect(registry.register(createMcpTool(spec, connections), server.name)).toBeUndefined();
    }
  }
  return { registry, connections, specs };
}

describe('server-filesystem over stdio', () => {
  let dir: string;
  let setup: Awaited<ReturnType<typeof registryFor>>;
  beforeAll(async () => {
    dir = tempDir('forge-fs-data-');
    mkdirSync(join(dir, 'notes'));
    writeFileSync(join(dir, 'notes', 'today.txt'), 'buy milk\nship forge\n');
    writeFileSync(join(dir, 'readme.md'), '# data\n');
    setup = await registryFor([filesystemServer(dir)]);
  });
  afterAll(() => setup.registry.close());

  it('names its tools <server>__<tool>, category adapter, bound to the remote tool', () => {
    const read = setup.specs.find((s) => s.name === 'fs__read_text_file');
    expect(read).toMatchObject({ category: 'adapter', adapter: { kind: 'mcp', server: 'fs', tool: 'read_text_file' }, inputSchema: { type: 'object' } });
    expect(read!.description).toMatch(/contents of a file/i);
    expect(setup.specs.map((s) => s.name)).toEqual(expect.arrayContaining(['fs__list_directory', 'fs__write_file', 'fs__directory_tree']));
  });

  it('reads a file through the server', async () => {
    const result = await setup.registry.execute('fs__read_text_file', { path: join(dir, 'notes', 'today.txt') });
    expect(result).toMatchObject({ ok: true, value: { content: 'buy milk\nship forge\n' } });
  });

  it('lists a directory through the server', async () => {
    const result = await setup.registry.execute('fs__list_directory', { path: dir });
    expect(result.ok).toBe(true);
    const text = JSON.stringify((result as { value: unknown }).value);
    expect(text).toContain('[DIR] notes');
    expect(text).toContain('[FILE] readme.md');
  });

  it('turns the server\'s refusal of a path outside its directory into a tool error', async () => {
    const result = await setup.registry.execute('fs__read_text_file', { path: '/etc/hostname' });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_MCP_TOOL_ERROR', message: expect.stringMatching(/^fs__read_text_file: .*Access denied/) } });
  });

  it('checks arguments against the tool\'s schema before calling the server', async () => {
    const result = await setup.registry.execute('fs__read_text_file', { file: 'x' });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_ARGS', message: expect.stringContaining('missing required argument "path"') } });
  });

  it('connects again after the connection went away', async () => {
    const first = await setup.connections.session('fs');
    await first.close();
    const result = await setup.registry.execute('fs__read_text_file', { path: join(dir, 'readme.md') });
    expect(result).toMatchObject({ ok: true, value: { content: '# data\n' } });
    expect(await setup.connections.session('fs')).not.toBe(first);
  });

  it('does not connect again when the agent shuts down while a call finds its connection gone', async () => {
    const connections = new McpConnections([filesystemServer(dir)], { http: loopbackOnly(), env: process.env, log: silentLogger, workDir: tempDir() });
    const gone = await connections.session('fs');
    await gone.close();
    // The call looks at its old connection (a turn later), and the agent shuts down in between.
    const asked = connections.session('fs');
    const closing = connections.close();
    const outcome = await asked.then((session) => session, (err: Error) => err);
    await closing;
    if (!(outcome instanceof Error)) await outcome.close();
    expect(outcome).toBeInstanceOf(Error);
    expect((outcome as Error).message).toContain('the agent is shutting down');
  });
});

describe('server-everything over stdio', () => {
  let setup: Awaited<ReturnType<typeof registryFor>>;
  beforeAll(async () => {
    setup = await registryFor([everythingStdioServer()]);
  });
  afterAll(() => setup.registry.close());

  it.each([
    ['everything__echo', { message: 'hello forge' }, 'Echo: hello forge'],
    ['everything__get-sum', { a: 19, b: 23 }, 'The sum of 19 and 23 is 42.'],
  ])('calls %s', async (name, args, expected) => {
    expect(await setup.registry.execute(name, args)).toMatchObject({ ok: true, value: expected });
  });

  it('marks an image in the result with its type and size, and keeps the text around it', async () => {
    const result = await setup.registry.execute('everything__get-tiny-image', {});
    expect(result.ok).toBe(true);
    expect((result as { value: string }).value).toMatch(/^Here's the image you requested:\n\[image: image\/png, \d+\.\d KB\]\nThe image above is the MCP logo\.$/);
  });

  it('marks resource links and embedded resources', async () => {
    const links = await setup.registry.execute('everything__get-resource-links', { count: 2 });
    expect((links as { value: string }).value).toMatch(/\[resource link: .*Resource 1 <demo:\/\/resource\/.+>/);
    const blob = await setup.registry.execute('everything__get-resource-reference', { resourceType: 'Blob', resourceId: 3 });
    expect((blob as { value: string }).value).toMatch(/\[resource demo:\/\/resource\/.*: binary, not shown\]/);
    const text = await setup.registry.execute('everything__get-resource-reference', { resourceType: 'Text', resourceId: 2 });
    expect((text as { value: string }).value).toMatch(/\[resource demo:\/\/resource\/.+, text\/plain\]\n/);
  });

  it('returns structured content as the value when the server sends it', async () => {
    const result = await setup.registry.execute('everything__get-structured-content', { location: 'New York' });
    expect(result).toMatchObject({ ok: true, value: { temperature: expect.any(Number), conditions: expect.any(String) } });
  });

  it('turns an error result into a tool error', async () => {
    const result = await setup.registry.execute('everything__get-resource-reference', { resourceId: 0 });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_MCP_TOOL_ERROR', message: 'everything__get-resource-reference: Invalid resourceId: 0. Must be a finite positive integer.' } });
  });

  it('stops a call at the timeout, and the server still answers the next one', async () => {
    const started = Date.now();
    const result = await setup.registry.execute('everything__trigger-long-running-operation', { duration: 20, steps: 2 }, { timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_TIMEOUT' } });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await setup.registry.execute('everything__echo', { message: 'still here' })).toMatchObject({ ok: true, value: 'Echo: still here' });
  });
});

describe('server-everything over Streamable HTTP', () => {
  let url: string;
  beforeAll(async () => {
    ({ url } = await startEverythingHttp());
  });

  const httpServer = (): McpServerSettings => ({ name: 'remote', transport: 'http', url, timeout_ms: 20_000, required: true });

  // Closing once crashed the process: node's `signal` request option had put an
  // abort listener on a pooled socket with nobody listening for its error.
  it('calls tools over HTTP through the egress-checked client, and closes cleanly', async () => {
    const { registry } = await registryFor([httpServer()]);
    try {
      expect(await registry.execute('remote__echo', { message: 'over http' })).toMatchObject({ ok: true, value: 'Echo: over http' });
      expect(await registry.execute('remote__get-sum', { a: 1, b: 2 })).toMatchObject({ ok: true, value: 'The sum of 1 and 2 is 3.' });
      const image = await registry.execute('remote__get-tiny-image', {});
      expect((image as { value: string }).value).toContain('[image: image/png,');
      expect(await registry.execute('remote__get-resource-reference', { resourceId: -1 })).toMatchObject({ ok: false, error: { code: 'FORGE_MCP_TOOL_ERROR' } });
    } finally {
      await registry.close();
    }
  });

  it('cannot connect when the egress policy refuses the server\'s address, and says which rule', async () => {
    const strict = new HttpClient(createEgressPolicy({ mode: 'allowlist', allowed_domains: ['127.0.0.1'] }));
    const connections = new McpConnections([httpServer()], { http: strict, env: process.env, log: silentLogger, workDir: tempDir() });
    const error = await connections.session('remote').catch((e: unknown) => e);
    expect((error as Error).message).toContain('MCP server "remote": egress to 127.0.0.1 refused: 127.0.0.1 is a loopback address');
    expect(error).toMatchObject({ hint: expect.stringContaining('egress.allowed_addresses') });
    await connections.close();
  });

  it('sends the configured headers, with ${VAR} read from the environment', async () => {
    const server = { ...httpServer(), headers: { 'X-Missing': '${FORGE_TEST_UNSET_TOKEN}' } };
    const connections = new McpConnections([server], { http: loopbackOnly(), env: {}, log: silentLogger, workDir: tempDir() });
    await expect(connections.session('remote')).rejects.toMatchObject({
      message: 'MCP server "remote": environment variable FORGE_TEST_UNSET_TOKEN is not set (used in mcp.servers[remote].headers.X-Missing)',
      hint: 'set the variable in the environment forge runs in',
    });
    await connections.close();
  });

  it('names the url template when its variables do not make a URL, without the values', async () => {
    const server = { ...httpServer(), url: 'http://${FORGE_TEST_MCP_HOST}/mcp' };
    const connections = new McpConnections([server], { http: loopbackOnly(), env: { FORGE_TEST_MCP_HOST: 'not a host' }, log: silentLogger, workDir: tempDir() });
    await expect(connections.session('remote')).rejects.toMatchObject({
      message: 'MCP server "remote": mcp.servers[remote].url "http://${FORGE_TEST_MCP_HOST}/mcp" does not make a valid URL',
      hint: 'check its url in forge.yaml and the variables it uses',
    });
    await connections.close();
  });
});

describe('start-up', () => {
  const missing = (extra: Partial<McpServerSettings>): McpServerSettings => ({ name: 'gone', transport: 'stdio', command: '/nonexistent/mcp-server', timeout_ms: 5_000, required: true, ...extra });
  const spec = (server: string, tool: string): ToolSpec => ({ name: `${server}__${tool}`, description: 'x', category: 'adapter', inputSchema: { type: 'object' }, tags: ['read'], adapter: { kind: 'mcp', server, tool } });
  const runtimeFor = (servers: McpServerSettings[]) =>
    createAdapterRuntime({ mcp: { servers } }, { mcp }, { http: loopbackOnly(), env: process.env, log: silentLogger, workDir: tempDir() });

  it('reports a required server that cannot start as an error naming it', async () => {
    const runtime = runtimeFor([missing({})]);
    const started = await startAdapterTools(runtime, [spec('gone', 'x')]);
    expect(started.diagnostics).toMatchObject([{ severity: 'error', code: 'FORGE_MCP_CONNECT', message: 'MCP server "gone": cannot start "/nonexistent/mcp-server": command not found (a required server)' }]);
    await runtime.close();
  });

  it('skips an optional server that cannot start, with a warning, and keeps the other tools', async () => {
    const runtime = runtimeFor([missing({ required: false }), everythingStdioServer()]);
    const other = { ...spec('x', 'y'), adapter: undefined, name: 'uuid_generate', category: 'builtin' as const };
    const started = await startAdapterTools(runtime, [spec('gone', 'x'), spec('everything', 'echo'), other]);
    expect(started.diagnostics).toMatchObject([{ severity: 'warning', code: 'FORGE_MCP_SKIPPED' }]);
    expect(started.specs.map((s) => s.name)).toEqual(['everything__echo', 'uuid_generate']);
    await runtime.close();
  });

  it("masks the credential forge.yaml passes in a stdio server's env when the failing server prints it on stderr", async () => {
    const token = 'svc-token-0123456789abcdef';
    // A server that quotes its credential in its last words, as many do ("invalid token ghp_...").
    const server: McpServerSettings = {
      name: 'docs', transport: 'stdio', command: process.execPath, args: ['-e', 'console.error(`401: token ${process.env.SVC_TOKEN} is revoked`); process.exit(1)'],
      env: { SVC_TOKEN: '${DOCS_SVC_TOKEN}' }, timeout_ms: 10_000, required: true,
    };
    const runtime = createAdapterRuntime({ mcp: { servers: [server] } }, { mcp }, { http: loopbackOnly(), env: { ...process.env, DOCS_SVC_TOKEN: token }, log: silentLogger, workDir: tempDir() });
    const started = await startAdapterTools(runtime, [spec('docs', 'search')]);
    await runtime.close();
    expect(started.diagnostics).toMatchObject([{ code: 'FORGE_MCP_CONNECT', message: expect.stringContaining('401: token [REDACTED] is revoked') }]);
    expect(JSON.stringify(started.diagnostics)).not.toContain(token);
  });

  it("masks a key forge.yaml puts in an HTTP server's URL, or in a stdio server's args, when the server quotes it back", async () => {
    const urlKey = 'url-key-0123456789abcdef';
    const argKey = 'arg-key-fedcba9876543210';
    // A hosted server that takes its key in the query, and answers a bad one quoting the request.
    const hosted = await startServer((req, res) => res.writeHead(401, { 'content-type': 'text/plain' }).end(`denied: ${req.url}`));
    const servers: McpServerSettings[] = [
      { name: 'hosted', transport: 'http', url: `${hosted.url}/mcp?api_key=\${HOSTED_KEY}`, timeout_ms: 10_000, required: true },
      { name: 'search', transport: 'stdio', command: process.execPath, args: ['-e', 'console.error(`key ${process.argv[1]} is revoked`); process.exit(1)', '--', '${SEARCH_API_KEY}'], timeout_ms: 10_000, required: true },
    ];
    const runtime = createAdapterRuntime({ mcp: { servers } }, { mcp }, { http: loopbackOnly(), env: { ...process.env, HOSTED_KEY: urlKey, SEARCH_API_KEY: argKey }, log: silentLogger, workDir: tempDir() });
    const started = await startAdapterTools(runtime, [spec('hosted', 'search'), spec('search', 'find')]);
    await runtime.close();
    expect(hosted.requests[0].url).toBe(`/mcp?api_key=${urlKey}`);
    expect(started.diagnostics).toMatchObject([
      { code: 'FORGE_MCP_CONNECT', message: expect.stringContaining('denied: /mcp?api_key=[REDACTED]') },
      { code: 'FORGE_MCP_CONNECT', message: expect.stringContaining('key [REDACTED] is revoked') },
    ]);
    for (const key of [urlKey, argKey]) expect(JSON.stringify(started.diagnostics)).not.toContain(key);
  });

  it('quotes whole lines of a long stderr, so a token the 4000-character tail cuts through does not show its end', async () => {
    const token = 'tail-token-0123456789abcdef';
    // The token ends its line; what follows is just short of the tail, so the cut falls inside the token.
    const server: McpServerSettings = {
      name: 'noisy', transport: 'stdio', command: process.execPath, args: ['-e', `console.error('using token ' + process.env.NOISY_TOKEN + '\\n' + 'b'.repeat(3990)); process.exit(1)`],
      env: { NOISY_TOKEN: '\${NOISY_SECRET}' }, timeout_ms: 10_000, required: true,
    };
    const runtime = createAdapterRuntime({ mcp: { servers: [server] } }, { mcp }, { http: loopbackOnly(), env: { ...process.env, NOISY_SECRET: token }, log: silentLogger, workDir: tempDir() });
    const started = await startAdapterTools(runtime, [spec('noisy', 'x')]);
    await runtime.close();
    expect(JSON.stringify(started.diagnostics)).not.toContain(token.slice(-8));
    expect(started.diagnostics).toMatchObject([{ code: 'FORGE_MCP_CONNECT', message: expect.stringContaining(`\n    …${'b'.repeat(3990)}`) }]);
  });

  it('leaves out, with a warning, a recorded tool the server no longer offers', async () => {
    const runtime = runtimeFor([everythingStdioServer()]);
    const started = await startAdapterTools(runtime, [spec('everything', 'echo'), spec('everything', 'retired-tool')]);
    expect(started.specs.map((s) => s.name)).toEqual(['everything__echo']);
    expect(started.diagnostics).toMatchObject([{ severity: 'warning', code: 'FORGE_MCP_TOOL_GONE', message: expect.stringContaining('"retired-tool"') }]);
    await runtime.close();
  });
});

describe('a server the build pinned (npx PACKAGE), started from the installed package', () => {
  const pinnedFilesystem = (dir: string): McpServerSettings => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'node_modules/@modelcontextprotocol/server-filesystem/package.json'), 'utf8')) as { version: string };
    return {
      name: 'fs', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', dir], timeout_ms: 20_000, required: true,
      package: { name: '@modelcontextprotocol/server-filesystem', version, bin: 'dist/index.js', args: [dir] },
    };
  };
  const failureOf = async (server: McpServerSettings, env: NodeJS.ProcessEnv) => {
    const connections = new McpConnections([server], { http: loopbackOnly(), env, log: silentLogger, workDir: tempDir(), inBundle: true });
    try {
      return await connections.session('fs').then(() => undefined, (err: unknown) => err as { message: string; hint?: string });
    } finally {
      await connections.close();
    }
  };

  it('says an installed server that exits at start stopped by itself (its arguments), not that the network or FORGE_MCP_PACKAGES is to blame', async () => {
    const missing = join(tempDir('forge-pinned-'), 'not-there');
    const installed = await failureOf(pinnedFilesystem(missing), { ...process.env, FORGE_MCP_PACKAGES: join(repoRoot, 'node_modules') });
    expect(installed?.hint).toMatch(/the installed @modelcontextprotocol\/server-filesystem@[\d.]+ started and exited: look at its arguments in forge\.yaml/);
    expect(installed?.hint).not.toContain('FORGE_MCP_PACKAGES');
  });

  it("reads the ${VAR}s of its arguments when it starts, as an unpinned server's", async () => {
    const data = tempDir('forge-pinned-data-');
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'node_modules/@modelcontextprotocol/server-filesystem/package.json'), 'utf8')) as { version: string };
    const server: McpServerSettings = {
      name: 'fs', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '${PINNED_DATA_DIR}'], timeout_ms: 20_000, required: true,
      package: { name: '@modelcontextprotocol/server-filesystem', version, bin: 'dist/index.js', args: ['${PINNED_DATA_DIR}'] },
    };
    const env = { ...process.env, PINNED_DATA_DIR: data, FORGE_MCP_PACKAGES: join(repoRoot, 'node_modules') };
    const connections = new McpConnections([server], { http: loopbackOnly(), env, log: silentLogger, workDir: tempDir() });
    try {
      const session = await connections.session('fs');
      const listed = await session.client.callTool({ name: 'list_allowed_directories', arguments: {} });
      expect(JSON.stringify(listed.content)).toContain(realpathSync(data));
    } finally {
      await connections.close();
    }
  });
});
