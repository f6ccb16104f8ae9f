import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixtureProject, forge, minimalConfig, repoRoot, runProcess, tempDir, writeProject } from '../helpers/project.ts';
import { startAgentProcess } from '../helpers/agent-process.ts';

/** Runs `forge` with a probe that says, at exit, whether the compiled CLI (dist/forge-cli.cjs) was read. */
async function forgeProbed(args: string[], cwd: string) {
  const probe = join(tempDir(), 'probe.cjs');
  writeFileSync(
    probe,
    `const fs = require('node:fs'); const open = fs.openSync; let read = false;
fs.openSync = function (path, ...rest) { if (String(path).endsWith('forge-cli.cjs')) read = true; return open.call(this, path, ...rest); };
process.on('exit', () => process.stderr.write('cli-loaded=' + read));`,
  );
  const result = await runProcess(process.execPath, ['--require', probe, join(repoRoot, 'bin', 'forge.cjs'), ...args], { cwd });
  const cliLoaded = /cli-loaded=(true|false)$/.exec(result.stderr)?.[1];
  return { ...result, stderr: result.stderr.replace(/cli-loaded=(true|false)$/, ''), cliLoaded };
}

/** The full CLI, without the fast path in front of it. */
function fullCli(args: string[], cwd: string) {
  return runProcess(process.execPath, [join(repoRoot, 'dist', 'forge-cli.cjs'), ...args], { cwd });
}

const withoutTime = (text: string) => text.replace(/in \d+(\.\d+)? m?s/, 'in T').replace(/"durationMs": \d+/, '"durationMs": T');

describe('the fast path (a cached build and --version, before the compiled CLI loads)', () => {
  it('answers a cached build without loading the compiled CLI, printing what the CLI prints', async () => {
    const dir = fixtureProject('basic');
    const first = await forgeProbed(['build', '--prod'], dir);
    expect(first.stdout).toContain('✓ built');
    expect(first.cliLoaded).toBe('true'); // the probe sees the CLI when it loads

    const cached = await forgeProbed(['build', '--prod'], dir);
    expect(cached).toMatchObject({ code: 0, stderr: '', cliLoaded: 'false' });
    expect(cached.stdout).toContain('up to date (cached)');
    expect(withoutTime(cached.stdout)).toBe(withoutTime((await fullCli(['build', '--prod'], dir)).stdout));

    const json = await forgeProbed(['build', '--prod', '--json'], dir);
    expect(json.cliLoaded).toBe('false');
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, cached: true });
    expect(withoutTime(json.stdout)).toBe(withoutTime((await fullCli(['build', '--prod', '--json'], dir)).stdout));

    // Switches alone are read without parseArgs; a value, a short option or `--` sends the line through it, still answered here.
    for (const args of [['--json', '--prod', '--prod'], ['--out', '.forge-output', '--prod'], ['--out=.forge-output', '-v', '--prod'], ['--prod', '--']]) {
      const other = await forgeProbed(['build', ...args], dir);
      expect(other).toMatchObject({ code: 0, stderr: '', cliLoaded: 'false' });
      expect(withoutTime(other.stdout)).toBe(withoutTime((await fullCli(['build', ...args], dir)).stdout));
    }
    // A switch of another command is the CLI's to refuse.
    const foreign = await forgeProbed(['build', '--prod', '--dev'], dir);
    expect(foreign).toMatchObject({ code: 2, cliLoaded: 'true' });
  });

  it('answers --version and version without the compiled CLI, as the CLI does', async () => {
    const dir = tempDir();
    for (const args of [['--version'], ['version'], ['version', '--json']]) {
      const fast = await forgeProbed(args, dir);
      expect(fast).toMatchObject({ code: 0, stderr: '', cliLoaded: 'false' });
      expect(fast.stdout).toBe((await fullCli(args, dir)).stdout);
    }
  });

  it('leaves a stale cache, --help and bad options to the CLI, which says why once', async () => {
    const dir = fixtureProject('basic');
    await forge(['build'], dir);
    writeFileSync(join(dir, 'tools/new_tool.py'), '"""\nTool: new_tool\nDescription: d\n"""\n');
    const rebuilt = await forgeProbed(['build', '--verbose'], dir);
    expect(rebuilt.cliLoaded).toBe('true');
    expect(rebuilt.stdout).toContain('✓ built');
    expect(rebuilt.stderr.match(/cache: rebuilding/g)).toEqual(['cache: rebuilding']);

    const help = await forgeProbed(['build', '--help'], dir);
    expect(help).toMatchObject({ code: 0, cliLoaded: 'true' });
    expect(help.stdout).toMatch(/^usage: forge build/);

    const bad = await forgeProbed(['build', '--prdo'], dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown option --prdo (did you mean "--prod"?)');
  });

  it('leaves node:crypto unloaded in the full CLI until something is hashed (forge help, forge build --help)', async () => {
    const probe = join(tempDir(), 'probe.cjs');
    writeFileSync(probe, `process.on('exit', () => process.stderr.write('crypto=' + process.moduleLoadList.includes('NativeModule crypto')));`);
    const dir = fixtureProject('basic');
    for (const args of [['help'], ['build', '--help']]) {
      const result = await runProcess(process.execPath, ['--require', probe, join(repoRoot, 'bin', 'forge.cjs'), ...args], { cwd: dir });
      expect({ args, code: result.code, crypto: result.stderr.match(/crypto=(true|false)$/)?.[1] }).toEqual({ args, code: 0, crypto: 'false' });
    }
  });

  it('leaves node:http unloaded in forge tool run of a TS tool that calls nothing out (the HTTP client loads it at its first request)', async () => {
    const probe = join(tempDir(), 'probe.cjs');
    // Only the CLI's own process reports (a tool's worker inherits no NODE_OPTIONS through the sandbox, but may elsewhere).
    writeFileSync(probe, `if (process.argv[1]?.endsWith('forge.cjs')) process.on('exit', () => process.stderr.write('modules=' + JSON.stringify(process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')))));`);
    const dir = fixtureProject('basic');
    const result = await runProcess(process.execPath, ['--require', probe, join(repoRoot, 'bin', 'forge.cjs'), 'tool', 'run', 'ts_execute', '--param', 'sentence=hello there'], { cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ reversed: 'there hello' });
    const modules = JSON.parse(/modules=(.*)$/.exec(result.stderr)![1]) as string[];
    // The probe sees what the run loaded: the tool ran in a process of its own.
    expect(modules).toContain('NativeModule child_process');
    expect(modules.filter((m) => m === 'NativeModule http' || m === 'NativeModule https' || m === 'NativeModule _http_client')).toEqual([]);
  });

  it('serves REST and stateless MCP with forge run without evaluating the MCP SDK (its schemas, its transports with http2 and TLS): only --stdio loads it', async () => {
    const dir = fixtureProject('basic');
    const modulesFile = join(tempDir(), 'modules.json');
    const probe = join(tempDir(), 'probe.cjs');
    // zod (the SDK's message schemas) reads each schema's _zod as it builds it: a getter on Object.prototype sees the first.
    writeFileSync(
      probe,
      `if (process.argv[1]?.endsWith('forge.cjs')) {
        let zod = false;
        Object.defineProperty(Object.prototype, '_zod', { get() { zod = true; return undefined; }, set(value) { Object.defineProperty(this, '_zod', { value, writable: true, configurable: true }); }, configurable: true });
        process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(modulesFile)}, JSON.stringify({ modules: process.moduleLoadList, zod })));
      }`,
    );
    const loaded = () => JSON.parse(readFileSync(modulesFile, 'utf8')) as { modules: string[]; zod: boolean };
    const agent = await startAgentProcess(process.execPath, ['--require', probe, join(repoRoot, 'bin', 'forge.cjs'), 'run', '--dev', '--port', '0', '--no-auth'], { cwd: dir });
    const res = await fetch(`${agent.url}/tools/ts_execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"sentence": "a b"}' });
    expect(await res.json()).toMatchObject({ value: { reversed: 'b a' } });
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } } };
    const mcp = await fetch(`${agent.url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify(initialize) });
    expect(await mcp.text()).toContain('"protocolVersion":"2025-06-18"');
    expect(await agent.stop()).toBe(0);
    expect(loaded().modules).toContain('NativeModule http');
    expect(loaded().modules.filter((m) => m === 'NativeModule http2' || m === 'NativeModule tls')).toEqual([]);
    expect(loaded().zod).toBe(false);
    // --stdio serves MCP through the SDK (stdin closed: it starts, then stops).
    const stdio = await runProcess(process.execPath, ['--require', probe, join(repoRoot, 'bin', 'forge.cjs'), 'run', '--stdio'], { cwd: dir });
    expect(stdio.code, stdio.stderr).toBe(0);
    expect(loaded().modules).toContain('NativeModule http2');
    expect(loaded().zod).toBe(true);
  });

  it('loads no Node module for a cached build or --version that a bare node start does not (no node:module on Node 20, no vm, os, tty, streams, crypto or util)', async () => {
    const probe = join(tempDir(), 'probe.cjs');
    writeFileSync(probe, `process.on('exit', () => process.stderr.write('modules=' + JSON.stringify(process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')))));`);
    const loaded = async (args: string[], cwd: string, env?: NodeJS.ProcessEnv) => {
      const result = await runProcess(process.execPath, ['--require', probe, ...args], { cwd, env });
      expect(result.code).toBe(0);
      return JSON.parse(/modules=(.*)$/.exec(result.stderr)![1]) as string[];
    };
    const dir = fixtureProject('basic');
    await forge(['build', '--prod'], dir);
    const empty = join(tempDir(), 'empty.cjs');
    writeFileSync(empty, '');
    const bare = new Set(await loaded([empty], dir));
    // What require('node:module') brings with it: the public module and the ES module loader behind createRequire.
    // Node 22.1+ has a compile cache, which bin/forge.cjs turns on through node:module.
    const moduleItself = process.versions.node.startsWith('20.') ? [] : ['NativeModule module', 'NativeModule internal/modules/esm/assert', 'NativeModule internal/modules/esm/loader', 'NativeModule internal/source_map/source_map'];
    // Forge's cache in its default place (~/.cache/forge): the cached build says whether it is usable, without node:os.
    const defaultCache = { FORGE_CACHE_DIR: undefined, XDG_CACHE_HOME: undefined, HOME: tempDir() };
    for (const [args, env] of [[['build', '--prod']], [['build', '--prod'], defaultCache], [['--version']], [['version', '--json']]] as [string[], NodeJS.ProcessEnv?][]) {
      const extra = (await loaded([join(repoRoot, 'bin', 'forge.cjs'), ...args], dir, env)).filter((m) => !bare.has(m) && !moduleItself.includes(m));
      expect({ args, env, extra }).toEqual({ args, env, extra: [] });
    }
    // Output thrown away (`forge build > /dev/null`, a character device as a terminal is): no node:tty either.
    const devNull = openSync('/dev/null', 'w');
    try {
      for (const args of [['build', '--prod'], ['--version']]) {
        const child = spawn(process.execPath, ['--require', probe, join(repoRoot, 'bin', 'forge.cjs'), ...args], { cwd: dir, stdio: ['ignore', devNull, 'pipe'] });
        let stderr = '';
        child.stderr!.on('data', (d) => (stderr += d));
        expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
        const extra = (JSON.parse(/modules=(.*)$/.exec(stderr)![1]) as string[]).filter((m) => !bare.has(m) && !moduleItself.includes(m));
        expect({ args, extra }).toEqual({ args, extra: [] });
      }
    } finally {
      closeSync(devNull);
    }
  });

  it("colors a cached build's summary on a terminal (a pseudo-terminal, as script(1) gives), and not in a pipe", async () => {
    const dir = fixtureProject('basic');
    await forge(['build'], dir);
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(join(repoRoot, 'bin', 'forge.cjs'))} build`;
    const colorsAllowed = { NO_COLOR: undefined };
    const onTerminal = await runProcess('script', ['-qec', command, '/dev/null'], { cwd: dir, env: colorsAllowed });
    expect(onTerminal.stdout).toContain('up to date (cached)');
    expect(onTerminal.stdout).toContain('\x1b[32m✓\x1b[39m');
    const piped = await runProcess(process.execPath, [join(repoRoot, 'bin', 'forge.cjs'), 'build'], { cwd: dir, env: colorsAllowed });
    expect(piped.stdout).toContain('✓ up to date (cached)');
    expect(piped.stdout).not.toContain('\x1b[');
  });

  it('ends quietly (exit 0, nothing on stderr) when the reader closes stdout first', async () => {
    const dir = fixtureProject('basic');
    await forge(['build'], dir);
    for (const args of [['build'], ['--version']]) {
      const child = spawn(process.execPath, [join(repoRoot, 'bin', 'forge.cjs'), ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.destroy(); // closed before node has even started
      let stderr = '';
      child.stderr.on('data', (d) => (stderr += d));
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect({ args, code, stderr }).toEqual({ args, code: 0, stderr: '' });
    }
  });

  it('writes all of an answer larger than a pipe holds to a reader that is slow to start reading', async () => {
    // 1,000 data files: the summary lists each, and the JSON is larger than a 64 kB pipe buffer.
    const dir = writeProject({ 'forge.yaml': minimalConfig() });
    mkdirSync(join(dir, 'tools', 'data'), { recursive: true });
    for (let i = 0; i < 1000; i++) writeFileSync(join(dir, 'tools', 'data', `row_${i}.txt`), `row ${i}\n`);
    expect((await forge(['build'], dir)).code).toBe(0);

    // A shell pipe whose reader sleeps first: the writer fills the pipe and must wait, not drop the rest.
    const forgeCommand = [process.execPath, join(repoRoot, 'bin', 'forge.cjs'), 'build', '--json'].map((a) => `'${a}'`).join(' ');
    const { code, stdout } = await runProcess('bash', ['-o', 'pipefail', '-c', `${forgeCommand} | (sleep 0.5; cat)`], { cwd: dir });
    expect(stdout.length).toBeGreaterThan(64 * 1024);
    expect(code).toBe(0);
    const result = JSON.parse(stdout);
    expect(result.cached).toBe(true);
    expect(result.summary.artifacts).toHaveLength((await fullCli(['build', '--json'], dir)).stdout.match(/"path":/g)!.length);
  });
});
