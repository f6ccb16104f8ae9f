/**
 * The runtime core's code cache (runtime/core-loader.ts) in a built bundle:
 * written by the first start, used by the next, and never the bytecode of
 * other bytes than the core's own. Each start is a process of its own: in
 * one process V8 reuses what it compiled and never reads the cache.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleCodeSource } from '../../runtime/bundle-code.ts';
import { CODE_CACHE_DIR, CORE_FILE, type CoreCodeCache, NO_CODE_CACHE_ARG } from '../../runtime/core-loader.ts';
import type { ToolSpec } from '../../runtime/tools/model.ts';
import { startAgentProcess } from '../helpers/agent-process.ts';
import { filesystemServerScript } from '../helpers/mcp-servers.ts';
import { deployBundle, forge, minimalConfig, runProcess, tempDir, writeProject } from '../helpers/project.ts';

const SHOUT = '/**\n * Tool: shout\n * Description: Shouts.\n * Tags: read\n *\n * Input:\n *   text (str): The text.\n */\nexport function execute({ text }: { text: string }) {\n  return `shouted: ${text.toUpperCase()}`;\n}\n';

let project: string;
beforeAll(async () => {
  project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n'), 'tools/shout.ts': SHOUT });
  expect((await forge(['build', '--prod'], project)).code).toBe(0);
});

/** Runs the bundle's command with FORGE_VERBOSE=1; `cache` is what the core's code cache did, as the runtime says. */
async function bundleRun(bundle: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; cache: string | undefined }> {
  const result = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), ...args], { cwd: bundle, env: { ...process.env, FORGE_VERBOSE: '1', ...env } });
  return { code: result.code, stdout: result.stdout, cache: /\[forge\] code cache: (\w+)/.exec(result.stderr)?.[1] };
}

/** An Ed25519 public key in PEM form, as FORGE_VERIFY_KEY takes it. */
function verifyKey(): string {
  const key = execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519'], { encoding: 'utf8' });
  return execFileSync('openssl', ['pkey', '-pubout'], { input: key, encoding: 'utf8' });
}

/** Everything in the bundle's cache folder. */
const allCacheFiles = (bundle: string) => (existsSync(join(bundle, CODE_CACHE_DIR)) ? readdirSync(join(bundle, CODE_CACHE_DIR)) : []);
/** The caches of one file: the core's, or a prebuilt vendor module's (`ajv.cjs`). */
const cacheFiles = (bundle: string, file = CORE_FILE) => allCacheFiles(bundle).filter((name) => name.startsWith(`${file}-`));
/** What each prebuilt vendor module's cache did in a run, as FORGE_VERBOSE says it. */
const vendorCaches = (stderr: string) => Object.fromEntries([...stderr.matchAll(/\[forge\] code cache of vendor\/(\S+): (\w+)/g)].map((m) => [m[1], m[2]]));

describe("the runtime core's code cache", () => {
  it('is written by the first start and used by the next, which works as the first did (the core and a TS tool worker)', async () => {
    const { bundle } = deployBundle(project);
    expect(cacheFiles(bundle)).toEqual([]);
    const first = await bundleRun(bundle, ['call', 'shout', '{"text": "hi"}']);
    expect(first).toMatchObject({ code: 0, stdout: 'shouted: HI\n', cache: 'missing' });
    expect(cacheFiles(bundle)).toHaveLength(1);
    expect(cacheFiles(bundle)[0]).toMatch(/^forge-runtime\.cjs-.*\.v8cache$/);
    const again = await bundleRun(bundle, ['call', 'shout', '{"text": "again"}']);
    expect(again).toMatchObject({ code: 0, stdout: 'shouted: AGAIN\n', cache: 'used' });
    expect(cacheFiles(bundle)).toHaveLength(1);
  });

  it('is not written by a TS tool worker: its agent, started before it, writes one', async () => {
    const { bundle } = deployBundle(project);
    // The worker serves calls on stdin until it closes (here at once), as its agent starts it.
    const worker = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), '__worker', 'shout'], { cwd: bundle, env: { ...process.env, FORGE_VERBOSE: '1' }, input: '' });
    expect(worker.code).toBe(0);
    expect(cacheFiles(bundle)).toEqual([]);
    expect((await bundleRun(bundle, ['tools'])).cache).toBe('missing');
    expect(cacheFiles(bundle)).toHaveLength(1);
  });

  it('is written by serve once it listens, while it serves', async () => {
    const { bundle } = deployBundle(project);
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0', '--no-auth'], { cwd: bundle, env: { ...process.env, FORGE_VERBOSE: '1' } });
    try {
      // Said once the write is done.
      await agent.waitFor('[forge] code cache: missing');
      expect(cacheFiles(bundle)).toHaveLength(1);
      const res = await fetch(`${agent.url}/tools/shout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text": "served"}' });
      expect(await res.json()).toMatchObject({ value: 'shouted: SERVED' });
    } finally {
      await agent.stop();
    }
    expect((await bundleRun(bundle, ['tools'])).cache).toBe('used');
  });

  it('never runs the bytecode cached for other bytes of the same length', async () => {
    const { bundle } = deployBundle(project);
    expect((await bundleRun(bundle, ['help'])).cache).toBe('missing');
    expect((await bundleRun(bundle, ['help'])).stdout).toContain('usage: node runtime.mjs <command>');
    // An edit that keeps the core's length: V8 itself compares no more than that with its cached data.
    const core = join(bundle, CORE_FILE);
    const text = readFileSync(core, 'latin1');
    expect(text).toContain('usage: node runtime.mjs <command>');
    writeFileSync(core, text.replace('usage: node runtime.mjs <command>', 'USAGE: NODE RUNTIME.MJS <COMMAND>'), 'latin1');
    const edited = await bundleRun(bundle, ['help']);
    expect(edited.stdout).toContain('USAGE: NODE RUNTIME.MJS <COMMAND>');
    expect(edited.cache).toBe('missing');
    // The edited core's own cache replaces the old one (same file, same Node): one left.
    expect(cacheFiles(bundle)).toHaveLength(1);
    expect((await bundleRun(bundle, ['help'])).stdout).toContain('USAGE: NODE RUNTIME.MJS <COMMAND>');
  });

  it('is refused when it is not V8 data, and written anew', async () => {
    const { bundle } = deployBundle(project);
    await bundleRun(bundle, ['tools']);
    const [name] = cacheFiles(bundle);
    writeFileSync(join(bundle, CODE_CACHE_DIR, name), 'not a code cache');
    const refused = await bundleRun(bundle, ['call', 'shout', '{"text": "hi"}']);
    expect(refused).toMatchObject({ code: 0, stdout: 'shouted: HI\n', cache: 'refused' });
    expect((await bundleRun(bundle, ['tools'])).cache).toBe('used');
  });

  it('is neither read nor written with FORGE_VERIFY_KEY set (signed bytes only) or FORGE_CODE_CACHE=off', async () => {
    const { bundle } = deployBundle(project);
    const publicKey = verifyKey();
    // `call` does not check the signature (serve and verify do): what matters here is that the key is set.
    expect(await bundleRun(bundle, ['call', 'shout', '{"text": "hi"}'], { FORGE_VERIFY_KEY: publicKey })).toMatchObject({ code: 0, stdout: 'shouted: HI\n', cache: 'off' });
    expect(await bundleRun(bundle, ['call', 'shout', '{"text": "hi"}'], { FORGE_CODE_CACHE: 'off' })).toMatchObject({ code: 0, stdout: 'shouted: HI\n', cache: 'off' });
    // Nor the vendor modules' (the call's arguments went through ajv).
    expect(allCacheFiles(bundle)).toEqual([]);
    // A cache that is there is not read either.
    await bundleRun(bundle, ['tools']);
    expect(cacheFiles(bundle)).toHaveLength(1);
    expect((await bundleRun(bundle, ['tools'], { FORGE_VERIFY_KEY: publicKey })).cache).toBe('off');
  });

  it("runs the core's own bytes under FORGE_VERIFY_KEY, whatever cache was planted for them", async () => {
    const { bundle } = deployBundle(project);
    const core = join(bundle, CORE_FILE);
    const original = readFileSync(core, 'latin1');
    // A cache V8 would take for the core as it is (same length), made from other code, under the core's own cache name.
    await bundleRun(bundle, ['help']);
    const [ownName] = cacheFiles(bundle);
    writeFileSync(core, original.replace('usage: node runtime.mjs <command>', 'PLANTED NODE RUNTIME.MJS COMMAND!'), 'latin1');
    await bundleRun(bundle, ['help']);
    const [plantedName] = cacheFiles(bundle);
    expect(plantedName).not.toBe(ownName);
    renameSync(join(bundle, CODE_CACHE_DIR, plantedName), join(bundle, CODE_CACHE_DIR, ownName));
    writeFileSync(core, original, 'latin1');
    const signedOnly = await bundleRun(bundle, ['help'], { FORGE_VERIFY_KEY: verifyKey() });
    expect(signedOnly.stdout).toContain('usage: node runtime.mjs <command>');
    expect(signedOnly.cache).toBe('off');
  });

  it("tells its TS tool workers to do without it when the agent does (a worker's environment is the tool's, not the agent's)", async () => {
    const { bundle } = deployBundle(project);
    await bundleRun(bundle, ['tools']);
    const worker = (args: string[]) => runProcess(process.execPath, [join(bundle, 'runtime.mjs'), '__worker', 'shout', ...args], { cwd: bundle, env: { ...process.env, FORGE_VERBOSE: '1' }, input: '' });
    expect((await worker([])).stderr).toContain('[forge] code cache: used');
    expect((await worker([NO_CODE_CACHE_ARG])).stderr).toContain('[forge] code cache: off');
    const spec = { name: 'shout' } as ToolSpec;
    const launch = (cache: CoreCodeCache['cache']) => bundleCodeSource({ builtins: {}, nodeTools: {}, bundleUrl: pathToFileURL(join(bundle, 'runtime.mjs')).href, codeCache: { cache, save() {} } }, join(bundle, 'runtime.mjs')).node.worker(spec);
    expect((await launch('off')).args).toEqual([join(bundle, 'runtime.mjs'), '__worker', 'shout', NO_CODE_CACHE_ARG]);
    expect((await launch('used')).args).toEqual([join(bundle, 'runtime.mjs'), '__worker', 'shout']);
  });

  it('is refused when its data was damaged (V8 would crash on it), and written anew', async () => {
    const { bundle } = deployBundle(project);
    await bundleRun(bundle, ['tools']);
    const [name] = cacheFiles(bundle);
    const file = join(bundle, CODE_CACHE_DIR, name);
    const data = readFileSync(file);
    for (let i = 100_000; i < 100_064; i++) data[i] ^= 0xff;
    writeFileSync(file, data);
    const damaged = await bundleRun(bundle, ['call', 'shout', '{"text": "hi"}']);
    expect(damaged).toMatchObject({ code: 0, stdout: 'shouted: HI\n', cache: 'refused' });
    expect((await bundleRun(bundle, ['tools'])).cache).toBe('used');
  });

  it('is used by a copy of the bundle in another folder', async () => {
    const { bundle } = deployBundle(project);
    await bundleRun(bundle, ['tools']);
    const copy = join(tempDir('forge-copied-'), 'bundle');
    cpSync(bundle, copy, { recursive: true });
    expect((await bundleRun(copy, ['tools'])).cache).toBe('used');
    expect(cacheFiles(copy)).toHaveLength(1);
  });

  it('is not needed where it cannot be written (a bundle its user cannot write, as in an image): every start works', async () => {
    const { bundle } = deployBundle(project);
    // A file where the folder would go: nothing can be written under it, whoever runs the bundle.
    writeFileSync(join(bundle, CODE_CACHE_DIR), '');
    for (let run = 0; run < 2; run++) expect(await bundleRun(bundle, ['call', 'shout', '{"text": "hi"}'])).toMatchObject({ code: 0, stdout: 'shouted: HI\n', cache: 'missing' });
  });
});

describe("the prebuilt vendor modules' code caches", () => {
  /** Runs the bundle's command with FORGE_VERBOSE=1: its output, and what each vendor module's cache did. */
  async function vendorRun(bundle: string, args: string[], env: NodeJS.ProcessEnv = {}) {
    const result = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), ...args], { cwd: bundle, env: { ...process.env, FORGE_VERBOSE: '1', ...env } });
    return { code: result.code, stdout: result.stdout, vendor: vendorCaches(result.stderr) };
  }

  it('are written by the run that first loads a module, as it exits, and used by the next, which works as the first did', async () => {
    const { bundle } = deployBundle(project);
    // A call that fails (arguments refused, exit 1) loaded ajv too, but compiled less than a call that runs: it writes nothing.
    expect(await vendorRun(bundle, ['call', 'shout', '{"text": 3}'])).toMatchObject({ code: 1, vendor: { 'ajv.cjs': 'missing' } });
    expect(cacheFiles(bundle, 'ajv.cjs')).toEqual([]);
    // A call's arguments are checked by ajv (vendor/ajv.cjs), loaded at that first check.
    const first = await vendorRun(bundle, ['call', 'shout', '{"text": "hi"}']);
    expect(first).toMatchObject({ code: 0, stdout: 'shouted: HI\n', vendor: { 'ajv.cjs': 'missing' } });
    expect(cacheFiles(bundle, 'ajv.cjs')).toHaveLength(1);
    const again = await vendorRun(bundle, ['call', 'shout', '{"text": "again"}']);
    expect(again).toMatchObject({ code: 0, stdout: 'shouted: AGAIN\n', vendor: { 'ajv.cjs': 'used' } });
    // The arguments are still checked, by the cached ajv.
    const refused = await vendorRun(bundle, ['call', 'shout', '{"text": 3}']);
    expect(refused).toMatchObject({ code: 1, vendor: { 'ajv.cjs': 'used' } });
    expect(cacheFiles(bundle, 'ajv.cjs')).toHaveLength(1);
  });

  it('are written by serve as it stops, for the modules its calls loaded', async () => {
    const { bundle } = deployBundle(project);
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0', '--no-auth'], { cwd: bundle, env: { ...process.env, FORGE_VERBOSE: '1' } });
    try {
      await agent.waitFor('[forge] code cache: missing');
      expect(cacheFiles(bundle, 'ajv.cjs')).toEqual([]);
      const res = await fetch(`${agent.url}/tools/shout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text": "served"}' });
      expect(await res.json()).toMatchObject({ value: 'shouted: SERVED' });
    } finally {
      await agent.stop();
    }
    expect(cacheFiles(bundle, 'ajv.cjs')).toHaveLength(1);
    expect((await vendorRun(bundle, ['call', 'shout', '{"text": "hi"}'])).vendor).toMatchObject({ 'ajv.cjs': 'used' });
  });

  it('are refused when damaged or made for other bytes (then written anew), and every run still works', async () => {
    const { bundle } = deployBundle(project);
    await vendorRun(bundle, ['call', 'shout', '{"text": "hi"}']);
    const [name] = cacheFiles(bundle, 'ajv.cjs');
    const file = join(bundle, CODE_CACHE_DIR, name);
    const data = readFileSync(file);
    const damaged = Buffer.from(data);
    for (let i = 10_000; i < 10_064; i++) damaged[i] ^= 0xff;
    writeFileSync(file, damaged);
    expect(await vendorRun(bundle, ['call', 'shout', '{"text": "hi"}'])).toMatchObject({ code: 0, stdout: 'shouted: HI\n', vendor: { 'ajv.cjs': 'refused' } });
    expect((await vendorRun(bundle, ['call', 'shout', '{"text": "hi"}'])).vendor).toMatchObject({ 'ajv.cjs': 'used' });
    // The core's cache data (whole, with its checksum) under ajv's name: V8 refuses it for ajv's text.
    writeFileSync(file, readFileSync(join(bundle, CODE_CACHE_DIR, cacheFiles(bundle)[0])));
    expect(await vendorRun(bundle, ['call', 'shout', '{"text": "hi"}'])).toMatchObject({ code: 0, stdout: 'shouted: HI\n', vendor: { 'ajv.cjs': 'refused' } });
    expect((await vendorRun(bundle, ['call', 'shout', '{"text": "hi"}'])).vendor).toMatchObject({ 'ajv.cjs': 'used' });
  });

  it('show stateless MCP (the default) answering without the MCP SDK, with the SDK\'s protocol versions; MCP with sessions loads it', async () => {
    const initialize = (protocolVersion: string) => ({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    for (const [env, mcpLoaded] of [[{}, false], [{ FORGE_MCP_SESSIONS: 'stateful' }, true]] as const) {
      const { bundle } = deployBundle(project);
      const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0', '--no-auth'], { cwd: bundle, env: { ...process.env, FORGE_VERBOSE: '1', ...env } });
      const answered: unknown[] = [];
      try {
        // A version the server does not speak is answered with the latest it does: the SDK's, written into the core.
        for (const version of ['2025-06-18', '1999-01-01']) {
          const res = await fetch(`${agent.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(initialize(version)) });
          expect(res.status).toBe(200);
          answered.push(/"protocolVersion":"([^"]+)"/.exec(await res.text())?.[1]);
        }
      } finally {
        await agent.stop();
      }
      expect(answered).toEqual(['2025-06-18', LATEST_PROTOCOL_VERSION]);
      // Said as the process exits, for each vendor module it loaded.
      await agent.waitFor('[forge] code cache of vendor/a2a.cjs');
      const vendor = vendorCaches(agent.output());
      expect({ env, mcp: 'mcp.cjs' in vendor, a2a: 'a2a.cjs' in vendor }).toEqual({ env, mcp: mcpLoaded, a2a: true });
    }
  });

  it('serve the modules the core loads as it is evaluated, before the runtime starts (an agent with MCP adapters loads the MCP SDK then)', async () => {
    const data = tempDir();
    const withMcp = writeProject({
      'forge.yaml': `agent_id: mcp-cache\nversion: 1.0.0\ndescription: Reaches a filesystem MCP server.\nmcp:\n  servers:\n    - name: fs\n      transport: stdio\n      command: ${JSON.stringify(process.execPath)}\n      args: [${JSON.stringify(filesystemServerScript)}, ${JSON.stringify(data)}]\n`,
    });
    expect((await forge(['build', '--prod'], withMcp)).code).toBe(0);
    const { bundle } = deployBundle(withMcp);
    expect((await vendorRun(bundle, ['tools'])).vendor).toMatchObject({ 'mcp.cjs': 'missing' });
    expect(cacheFiles(bundle, 'mcp.cjs')).toHaveLength(1);
    expect((await vendorRun(bundle, ['tools'])).vendor).toMatchObject({ 'mcp.cjs': 'used' });
  });

  it("are written by __warm (the Dockerfile's step) for what a serve start and its first requests compile, and a serve then uses them", async () => {
    const { bundle } = deployBundle(project);
    const warm = await vendorRun(bundle, ['__warm']);
    expect(warm).toMatchObject({ code: 0, stdout: '', vendor: { 'a2a.cjs': 'missing', 'ajv.cjs': 'missing' } });
    expect(cacheFiles(bundle)).toHaveLength(1);
    const agent = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0', '--no-auth'], { cwd: bundle, env: { ...process.env, FORGE_VERBOSE: '1' } });
    try {
      await agent.waitFor('[forge] code cache: used');
      const res = await fetch(`${agent.url}/tools/shout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text": "warm"}' });
      expect(await res.json()).toMatchObject({ value: 'shouted: WARM' });
      // The first protocol request loads the A2A SDK.
      const mcp = await fetch(`${agent.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }) });
      expect(mcp.status).toBe(200);
    } finally {
      await agent.stop();
    }
    await agent.waitFor('[forge] code cache of vendor/a2a.cjs');
    expect(vendorCaches(agent.output())).toMatchObject({ 'ajv.cjs': 'used', 'a2a.cjs': 'used' });
  });

  it("are written by __warm as far as it gets: a tool schema the validator cannot compile does not fail the image's build", async () => {
    const { bundle } = deployBundle(project);
    // Every tool's schema points at a definition that is not there (a call would answer FORGE_SCHEMA_INVALID).
    const manifestFile = join(bundle, 'agent.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as { tools: { inputSchema: Record<string, unknown> }[] };
    for (const tool of manifest.tools) tool.inputSchema = { ...tool.inputSchema, properties: { x: { $ref: '#/definitions/missing' } } };
    writeFileSync(manifestFile, JSON.stringify(manifest));
    const warm = await vendorRun(bundle, ['__warm']);
    expect(warm.code).toBe(0);
    expect(cacheFiles(bundle)).toHaveLength(1);
  });

  it('are written by __warm with none of a start\'s side effects: no MCP server started, no sandbox probed, nothing written in the work dir', async () => {
    const marker = join(tempDir(), 'mcp-server-started');
    const server = `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'started')`;
    const withMcp = writeProject({
      'forge.yaml': `agent_id: warm-effects\nversion: 1.0.0\ndescription: Has an MCP server that leaves a mark when started.\nmcp:\n  servers:\n    - name: marker\n      transport: stdio\n      command: ${JSON.stringify(process.execPath)}\n      args: ["-e", ${JSON.stringify(server)}]\n      required: false\n`,
      'tools/shout.ts': SHOUT,
    });
    // The build asks the server for its tools (it starts, leaves its mark and exits: the build goes on without them).
    expect((await forge(['build', '--prod'], withMcp)).code).toBe(0);
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);
    const { bundle } = deployBundle(withMcp);
    const workDir = tempDir();
    // A sandbox that must be there, and a bwrap that is not: a probe would refuse to go on.
    const env = { FORGE_WORKDIR: workDir, FORGE_SANDBOX: 'required', FORGE_BWRAP: join(tempDir(), 'no-bwrap') };
    const warm = await vendorRun(bundle, ['__warm'], env);
    expect(warm.code).toBe(0);
    expect(existsSync(marker)).toBe(false);
    expect(readdirSync(workDir)).toEqual([]);
    expect(cacheFiles(bundle)).toHaveLength(1);
    // `tools` does start the server: the mark is what a start leaves.
    await vendorRun(bundle, ['tools'], env);
    expect(existsSync(marker)).toBe(true);
  });

  it('are neither read nor written with FORGE_VERIFY_KEY set (signed bytes only) or FORGE_CODE_CACHE=off', async () => {
    const { bundle } = deployBundle(project);
    await vendorRun(bundle, ['call', 'shout', '{"text": "hi"}']);
    expect(cacheFiles(bundle, 'ajv.cjs')).toHaveLength(1);
    for (const env of [{ FORGE_VERIFY_KEY: verifyKey() }, { FORGE_CODE_CACHE: 'off' }]) {
      const run = await vendorRun(bundle, ['call', 'shout', '{"text": 3}'], env);
      // ajv compiled from its checked bytes: the arguments are refused all the same.
      expect({ env: Object.keys(env), code: run.code, vendor: run.vendor }).toEqual({ env: Object.keys(env), code: 1, vendor: {} });
    }
  });
});
