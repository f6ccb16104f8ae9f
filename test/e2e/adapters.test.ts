/**
 * Adapter tools end to end: a project with real MCP servers (filesystem and
 * everything over stdio, everything over Streamable HTTP), the Petstore
 * served on loopback and a pinned webhook is built; the bundle is copied
 * into an empty directory and its adapter tools run from there with plain
 * node. Then the CLI around them: forge mcp, forge tool, --offline.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../runtime/manifest.ts';
import { startServer, type TestServer } from '../helpers/http-server.ts';
import { everythingServerScript, filesystemServerScript, startEverythingHttp } from '../helpers/mcp-servers.ts';
import { startPetstore } from '../helpers/petstore-server.ts';
import { bundleCodeSize, fixturesDir, forge, runProcess, tempDir } from '../helpers/project.ts';

const MAX_RUNTIME_BYTES = 1.5 * 1024 * 1024;

let project: string;
let dataDir: string;
let bundleDir: string;
let deployDir: string;
let petstore: Awaited<ReturnType<typeof startPetstore>>;
let webhook: TestServer;
let buildOutput: string;

function forgeYaml(fsCommand = process.execPath, httpUrl = ''): string {
  return `agent_id: adapters-e2e
version: 1.0.0
description: Reaches MCP servers, the Petstore and a webhook.
mcp:
  servers:
    - name: fs
      transport: stdio
      command: ${JSON.stringify(fsCommand)}
      args: [${JSON.stringify(filesystemServerScript)}, ${JSON.stringify(dataDir)}]
      tools: { deny: [write_file, edit_file, move_file, create_directory] }
    - name: everything
      transport: stdio
      command: ${JSON.stringify(process.execPath)}
      args: [${JSON.stringify(everythingServerScript)}, stdio]
      tools: { allow: [echo, get-sum, get-tiny-image, get-resource-reference] }
    - name: remote
      transport: http
      url: ${JSON.stringify(httpUrl)}
      tools: { allow: [echo, get-tiny-image] }
apis:
  - name: petstore
    spec: specs/petstore.json
    base_url: ${JSON.stringify(petstore.baseUrl)}
    auth: { type: bearer, token_env: PETSTORE_TOKEN }
    exclude: [uploadFile]
tools:
  - name: webhook_call
    config: { webhooks: { notify: ${JSON.stringify(`${webhook.url}/notify`)} } }
egress: { mode: allowlist, allowed_domains: [api.github.com] }
`;
}

let httpUrl: string;

beforeAll(async () => {
  ({ url: httpUrl } = await startEverythingHttp());
  petstore = await startPetstore();
  webhook = await startServer((req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ accepted: JSON.parse(req.body) })));
  project = tempDir('forge-adapters-');
  dataDir = join(project, 'data');
  mkdirSync(join(dataDir, 'reports'), { recursive: true });
  writeFileSync(join(dataDir, 'reports', 'q3.txt'), 'revenue up 12%\n');
  mkdirSync(join(project, 'specs'));
  cpSync(join(fixturesDir, 'openapi', 'petstore-openapi3.json'), join(project, 'specs', 'petstore.json'));
  writeFileSync(join(project, 'forge.yaml'), forgeYaml(process.execPath, httpUrl));

  const built = await forge(['build', '--prod'], project);
  expect(built.code, built.stderr).toBe(0);
  buildOutput = built.stdout;
  deployDir = tempDir('forge-adapters-deploy-');
  cpSync(join(project, '.forge-output'), join(deployDir, '.forge-output'), { recursive: true });
  bundleDir = join(deployDir, '.forge-output');
  expect(readdirSync(deployDir)).toEqual(['.forge-output']);
}, 120_000);

const runtime = (args: string[], env: NodeJS.ProcessEnv = {}, dir = bundleDir) => runProcess(process.execPath, [join(dir, 'runtime.mjs'), ...args], { cwd: deployDir, env });
const manifest = (dir = bundleDir) => JSON.parse(readFileSync(join(dir, 'agent.json'), 'utf8')) as AgentManifest;

describe('forge build with adapters', () => {
  it('records every adapter tool in agent.json with category adapter, and leaves out denied ones', () => {
    const m = manifest();
    expect(m.categories.adapter).toEqual(expect.arrayContaining(['fs__read_text_file', 'fs__list_directory', 'everything__get-tiny-image', 'remote__echo', 'petstore__getPetById', 'petstore__addPet', 'webhook_call']));
    expect(m.categories.adapter).not.toContain('fs__write_file');
    expect(m.categories.adapter).not.toContain('everything__get-env');
    expect(m.categories.adapter).not.toContain('petstore__uploadFile');
    expect(m.tools.find((t) => t.name === 'fs__read_text_file')).toMatchObject({ category: 'adapter', adapter: { kind: 'mcp', server: 'fs', tool: 'read_text_file' } });
    expect(m.tools.find((t) => t.name === 'petstore__getPetById')).toMatchObject({ category: 'adapter', adapter: { kind: 'openapi', api: 'petstore', path: '/pet/{petId}' } });
    expect(m.mcp!.servers.map((s) => s.name)).toEqual(['fs', 'everything', 'remote']);
    expect(m.apis).toMatchObject([{ name: 'petstore', base_url: petstore.baseUrl, auth: { type: 'bearer', token_env: 'PETSTORE_TOKEN' } }]);
  });

  it('derives the egress section and prints it', () => {
    // Each loopback endpoint written in forge.yaml on its own port: the MCP server, the API, the webhook.
    const ports = [httpUrl, petstore.baseUrl, webhook.url].map((url) => `127.0.0.1:${new URL(url).port}`);
    const addresses = [...new Set(ports)].sort();
    expect(manifest().egress).toEqual({ mode: 'allowlist', allowed_domains: ['api.github.com'], allowed_addresses: addresses });
    expect(buildOutput).toMatch(/egress\s+allowlist: api\.github\.com/);
    expect(buildOutput).toContain(`non-public addresses allowed: ${addresses.join(', ')}`);
    expect(buildOutput).toMatch(/tools\s+\d+\s+\(adapter \d+\)/);
  });

  it('keeps the bundle\'s code (runtime.mjs, the core, vendor/) within 1.5 MB with the MCP SDK inside', () => {
    expect(bundleCodeSize(bundleDir)).toBeLessThan(MAX_RUNTIME_BYTES);
  });
});

describe('adapter tools from the built bundle, in an empty directory', () => {
  it('lists them', async () => {
    const { code, stdout, stderr } = await runtime(['tools']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^fs__read_text_file\s+adapter/m);
    expect(stdout).toMatch(/^remote__echo\s+adapter/m);
    expect(stdout).toMatch(/^petstore__getPetById\s+adapter/m);
  });

  it.each<[string, () => [string, object], unknown]>([
    ['fs__read_text_file (MCP, stdio)', () => ['fs__read_text_file', { path: join(dataDir, 'reports', 'q3.txt') }], { content: 'revenue up 12%\n' }],
    ['everything__get-sum (MCP, stdio)', () => ['everything__get-sum', { a: 2, b: 3 }], 'The sum of 2 and 3 is 5.'],
    ['remote__echo (MCP, Streamable HTTP)', () => ['remote__echo', { message: 'from the bundle' }], 'Echo: from the bundle'],
    ['petstore__getPetById (OpenAPI)', () => ['petstore__getPetById', { petId: 1 }], { status: 200, body: { id: 1, name: 'doggie' } }],
    ['webhook_call (a pinned webhook)', () => ['webhook_call', { webhook: 'notify', payload: { done: true } }], { status: 200, body: { accepted: { done: true } } }],
  ])('runs %s', async (_what, call, expected) => {
    const [name, args] = call();
    const { code, stdout, stderr } = await runtime(['call', name, JSON.stringify(args), '--json'], { PETSTORE_TOKEN: 'inventory-token' });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ ok: true, value: expected });
  });

  it('marks the image an MCP tool returns', async () => {
    const { code, stdout } = await runtime(['call', 'remote__get-tiny-image', '{}']);
    expect(code).toBe(0);
    expect(stdout).toContain('[image: image/png,');
  });

  it('sends the API token from the environment, and fails clearly without it', async () => {
    const withToken = await runtime(['call', 'petstore__getInventory', '{}', '--json'], { PETSTORE_TOKEN: 'inventory-token' });
    expect(JSON.parse(withToken.stdout)).toMatchObject({ ok: true, value: { status: 200 } });
    expect(petstore.requests.at(-1)!.headers.authorization).toBe('Bearer inventory-token');
    const without = await runtime(['call', 'petstore__getInventory', '{}']);
    expect(without.code).toBe(1);
    expect(without.stderr).toContain('environment variable PETSTORE_TOKEN is not set (auth of API "petstore")');
  });

  it('exits 1 with the error an MCP tool returned', async () => {
    const { code, stderr } = await runtime(['call', 'everything__get-resource-reference', '{"resourceId": 0}']);
    expect(code).toBe(1);
    expect(stderr).toContain('error: FORGE_MCP_TOOL_ERROR everything__get-resource-reference: Invalid resourceId: 0. Must be a finite positive integer.');
  });

  it("says a tool forge.yaml's tools.deny leaves out is left out, never suggesting another of the server's tools, from the bundle and from sources", async () => {
    const said = 'no tool named "fs__write_file": mcp.servers[fs].tools in forge.yaml leaves "write_file" out';
    const fromBundle = await runtime(['call', 'fs__write_file', '{"path": "x", "content": "y"}', '--json']);
    expect(fromBundle.code).toBe(1);
    expect(JSON.parse(fromBundle.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_UNKNOWN', message: said, hint: 'allow it there, and build again' } });
    const fromSources = await forge(['tool', 'run', 'fs__write_file', '{"path": "x", "content": "y"}'], project);
    expect(fromSources.code).toBe(1);
    expect(fromSources.stderr).toContain(said);
    expect(fromSources.stderr).not.toContain('did you mean');
    // A name the server never had is answered as any unknown one.
    expect((await runtime(['call', 'fs__read_text_fil', '{}'])).stderr).toContain('did you mean "fs__read_text_file"?');
  });

  it('stops at start-up when a required server cannot start, and skips an optional one with a warning; call needs only the servers its tool reaches', async () => {
    const broken = join(tempDir('forge-broken-bundle-'), '.forge-output');
    cpSync(bundleDir, broken, { recursive: true });
    const m = manifest(broken);
    m.mcp!.servers[0].command = '/nonexistent/mcp-server';
    writeFileSync(join(broken, 'agent.json'), JSON.stringify(m));
    const env = { PETSTORE_TOKEN: 'inventory-token' };
    const listed = await runtime(['tools'], env, broken);
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain('FORGE_MCP_CONNECT MCP server "fs": cannot start "/nonexistent/mcp-server": command not found (a required server)');
    const required = await runtime(['call', 'fs__list_allowed_directories', '{}'], env, broken);
    expect(required.code).toBe(1);
    expect(required.stderr).toContain('FORGE_MCP_CONNECT MCP server "fs": cannot start "/nonexistent/mcp-server": command not found (a required server)');
    // A tool that never reaches the broken server runs, and nothing is said about it.
    const unrelated = await runtime(['call', 'everything__echo', '{"message": "still here"}'], env, broken);
    expect(unrelated.stdout + unrelated.stderr).toContain('still here');
    expect(unrelated.code).toBe(0);
    expect(unrelated.stderr).not.toContain('FORGE_MCP');

    m.mcp!.servers[0].required = false;
    writeFileSync(join(broken, 'agent.json'), JSON.stringify(m));
    const optional = await runtime(['tools'], env, broken);
    expect(optional.stderr).toContain('FORGE_MCP_SKIPPED');
    expect(optional.code).toBe(0);
    expect(optional.stdout).not.toContain('fs__read_text_file');
    expect(optional.stdout).toContain('everything__echo');
  });
});

describe('the CLI around adapters', () => {
  it('forge mcp list connects to every server and shows what it offers', async () => {
    const { code, stdout } = await forge(['mcp', 'list'], project);
    expect(code).toBe(0);
    expect(stdout).toMatch(/✓ fs\s+stdio/);
    expect(stdout).toMatch(/secure-filesystem-server .* · 10 of 14 tools used, 4 left out by tools\.allow\/deny/);
    expect(stdout).toMatch(/✓ remote\s+http\s+http:\/\/127\.0\.0\.1:\d+\/mcp/);
  });

  it('forge mcp test calls a tool the way the agent does', async () => {
    const ok = await forge(['mcp', 'test', 'everything', '--call', 'get-sum', '--args', '{"a": 20, "b": 22}'], project);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('The sum of 20 and 22 is 42.');
    expect(ok.stdout).toMatch(/everything__get-env .*\(left out\)/);

    const failed = await forge(['mcp', 'test', 'everything', '--call', 'everything__get-resource-reference', '--args', '{"resourceId": 0}', '--json'], project);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ ok: false, tool: 'everything__get-resource-reference', result: { ok: false, error: { code: 'FORGE_MCP_TOOL_ERROR' } } });
  });

  it('forge mcp test names an unknown server with a suggestion', async () => {
    const { code, stderr } = await forge(['mcp', 'test', 'everythin'], project);
    expect(code).toBe(2);
    expect(stderr).toContain('no MCP server named "everythin" in forge.yaml (did you mean "everything"?)');
  });

  it('forge tool run runs adapter tools from sources, under the same egress rules', async () => {
    const mcpRun = await forge(['tool', 'run', 'fs__list_directory', '--param', `path=${join(dataDir, 'reports')}`], project);
    expect(mcpRun.code, mcpRun.stderr).toBe(0);
    expect(mcpRun.stdout).toContain('[FILE] q3.txt');
    const apiRun = await forge(['tool', 'run', 'petstore__getPetById', '--param', 'petId=1', '--json'], project, { PETSTORE_TOKEN: 'inventory-token' });
    expect(JSON.parse(apiRun.stdout)).toMatchObject({ ok: true, value: { body: { name: 'doggie' } } });
  });

  it('describes an MCP tool after a build without reaching the server, and --offline builds from the recorded list', async () => {
    const copy = tempDir('forge-adapters-offline-');
    cpSync(project, copy, { recursive: true });
    // The fs server started through a program of the copy's own, recorded by a build under that entry.
    const launcher = join(copy, 'fs-server');
    writeFileSync(launcher, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} "$@"\n`, { mode: 0o755 });
    writeFileSync(join(copy, 'forge.yaml'), forgeYaml(launcher, httpUrl));
    const recorded = await forge(['build', '--prod'], copy);
    expect(recorded.code, recorded.stderr).toBe(0);
    // Then it can no longer start, forge.yaml unchanged: only the recorded list can answer.
    writeFileSync(launcher, '#!/bin/sh\necho "the fs server is gone" >&2\nexit 1\n', { mode: 0o755 });

    const described = await forge(['tool', 'describe', 'fs__read_text_file'], copy);
    expect(described.code, described.stderr).toBe(0);
    expect(described.stdout).toContain('calls     tool "read_text_file" of MCP server "fs"');

    const live = await forge(['build', '--prod'], copy);
    expect(live.code).toBe(1);
    expect(live.stderr).toMatch(/forge\.yaml:6:\d+ FORGE_MCP_CONNECT MCP server "fs": the server process exited before it answered/);
    expect(live.stderr).toContain('the fs server is gone');

    const offline = await forge(['build', '--prod', '--offline'], copy);
    expect(offline.code, offline.stderr).toBe(0);
    expect(manifest(join(copy, '.forge-output')).categories.adapter).toEqual(manifest().categories.adapter);
    const again = await forge(['build', '--prod', '--offline'], copy);
    expect(again.stdout).toContain('up to date (cached)');

    // Once forge.yaml's entry for the server changes, the recorded list (another entry's) no longer answers for it.
    writeFileSync(join(copy, 'forge.yaml'), forgeYaml('/nonexistent/mcp-server', httpUrl));
    const changed = await forge(['tool', 'describe', 'fs__read_text_file'], copy);
    expect(changed.code).toBe(1);
    expect(changed.stderr).toContain('cannot start "/nonexistent/mcp-server": command not found');
  });

  it('asks the servers again on every build without --offline: no cache hit', async () => {
    const { code, stdout } = await forge(['build', '--prod', '--verbose'], project);
    expect(code).toBe(0);
    expect(stdout).not.toContain('(cached)');
  });
});
