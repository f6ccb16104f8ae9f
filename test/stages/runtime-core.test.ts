/**
 * The runtime core (forge-runtime.cjs): bundled once per set of builtins
 * into Forge's cache and taken from there by later builds of any project,
 * byte for byte; never taken when an input changed or the cached file does
 * not hash to its record; and, in a bundle, checked like every other file.
 */
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runtimeCore, type BundleFailure, type RuntimeCore } from '../../stages/runtime-core.ts';
import { CORE_FILE } from '../../runtime/core-loader.ts';
import type { ProjectTool } from '../../stages/project-tool.ts';
import { findCatalogEntry } from '../../runtime/tools/catalog.ts';
import { startAgentProcess } from '../helpers/agent-process.ts';
import { freePort } from '../helpers/free-port.ts';
import { deployBundle, forge, minimalConfig, runProcess, tempDir, writeProject } from '../helpers/project.ts';

function builtins(...names: string[]): ProjectTool[] {
  return names.map((name) => {
    const entry = findCatalogEntry(name)!;
    return { spec: { name }, builtin: { entry } } as unknown as ProjectTool;
  });
}

async function core(cacheDir: string, names: string[] = ['uuid_generate'], reuse = true): Promise<RuntimeCore> {
  const result: RuntimeCore | BundleFailure = await runtimeCore({ builtins: builtins(...names), adapters: { mcp: false, openapi: false }, yamlTools: false }, { cacheDir, reuse });
  if ('errors' in result) throw new Error(result.errors.map((e) => e.text).join('\n'));
  return result;
}

const coreBytes = (result: RuntimeCore) => Buffer.from(result.files.find((f) => f.path === CORE_FILE)!.contents);
const recordOf = (cacheDir: string) => join(cacheDir, 'runtime-core', readdirSync(join(cacheDir, 'runtime-core')).find((f) => f.endsWith('.json'))!);
/** Where Forge's blob store keeps a digest's bytes, and the digests it holds. */
const blobFile = (cacheDir: string, digest: string) => join(cacheDir, 'blobs', 'sha256', digest.replace(/^sha256:/, ''));
const blobs = (cacheDir: string) => readdirSync(join(cacheDir, 'blobs', 'sha256')).map((hex) => `sha256:${hex}`);
const recordedCore = (recordFile: string) => (JSON.parse(readFileSync(recordFile, 'utf8')) as { core: string }).core;

describe('the runtime core', () => {
  it('is bundled once, then taken from the cache byte for byte with the vendor files it loads', async () => {
    const cacheDir = tempDir('forge-cache-');
    const first = await core(cacheDir);
    const second = await core(cacheDir);
    const notReused = await core(cacheDir, undefined, false);
    expect([first.cached, second.cached, notReused.cached]).toEqual([false, true, false]);
    expect(coreBytes(second).equals(coreBytes(first))).toBe(true);
    expect(second.files.map((f) => f.path)).toEqual(first.files.map((f) => f.path));
    expect(second.files.map((f) => f.path)).toContain('vendor/ajv.cjs');
    expect(second.inputs.sort()).toEqual(first.inputs.sort());
    expect(second.inputs.some((p) => p.endsWith(join('runtime', 'main.ts')))).toBe(true);
  });

  it('removes entries no build used for 30 days when it writes one, and keeps the ones in use', async () => {
    const cacheDir = tempDir('forge-cache-');
    await core(cacheDir, ['uuid_generate']);
    const dir = join(cacheDir, 'runtime-core');
    const inUse = recordOf(cacheDir);
    // An entry of an older Forge, last used 40 days ago, and the entry in use, last used 2 days ago.
    const stale = join(dir, `${'a'.repeat(64)}.json`);
    const oldCore = `sha256:${'b'.repeat(64)}`;
    writeFileSync(stale, JSON.stringify({ core: oldCore }));
    writeFileSync(blobFile(cacheDir, oldCore), 'an old core');
    const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 60 * 60 * 1000);
    utimesSync(stale, daysAgo(40), daysAgo(40));
    utimesSync(inUse, daysAgo(2), daysAgo(2));
    expect((await core(cacheDir, ['uuid_generate'])).cached).toBe(true);
    expect(Date.now() - statSync(inUse).mtimeMs).toBeLessThan(60_000); // a hit marks it used
    await core(cacheDir, ['uuid_generate', 'csv_parse']); // a miss writes, and trims
    const left = readdirSync(dir);
    expect(left).not.toContain(`${'a'.repeat(64)}.json`);
    expect(left).toHaveLength(2);
    expect(blobs(cacheDir).sort()).toEqual(left.map((name) => recordedCore(join(dir, name))).sort()); // the old core went with its record
  });

  it('is used but not cached when an input was saved after the bundle started reading it', async () => {
    const cacheDir = tempDir('forge-cache-');
    const run = (now?: () => number) => runtimeCore({ builtins: builtins('uuid_generate'), adapters: { mcp: false, openapi: false }, yamlTools: false }, { cacheDir, now });
    // As if the bundle had started before every input's last save (the epoch): none of them can be vouched for.
    const racing = (await run(() => 0)) as RuntimeCore;
    expect(racing.cached).toBe(false);
    expect(coreBytes(racing).length).toBeGreaterThan(0);
    expect(((await run()) as RuntimeCore).cached).toBe(false); // nothing was cached
    expect(((await run()) as RuntimeCore).cached).toBe(true);
  });

  it('holds only the builtins asked for, and another set is another entry', async () => {
    const cacheDir = tempDir('forge-cache-');
    const uuid = await core(cacheDir, ['uuid_generate']);
    const both = await core(cacheDir, ['uuid_generate', 'csv_parse']);
    expect(both.cached).toBe(false);
    expect(coreBytes(uuid).toString()).not.toContain('"csv_parse"');
    expect(coreBytes(both).toString()).toContain('"csv_parse"');
  });

  it('is bundled again when an input changed since it was cached', async () => {
    const cacheDir = tempDir('forge-cache-');
    const first = await core(cacheDir);
    // As if runtime/main.ts had been edited: its stamp in the record no longer matches the file.
    const recordFile = recordOf(cacheDir);
    const record = JSON.parse(readFileSync(recordFile, 'utf8')) as { inputs: { path: string; size: number; mtimeMs: number; sha256: string }[]; core: string };
    const main = record.inputs.find((s) => s.path.endsWith(join('runtime', 'main.ts')))!;
    main.mtimeMs -= 1000;
    main.sha256 = '0'.repeat(64);
    // ...and the core it made then was another file, which the new one replaces.
    const older = `sha256:${'f'.repeat(64)}`;
    writeFileSync(blobFile(cacheDir, older), 'the older core');
    record.core = older;
    writeFileSync(recordFile, JSON.stringify(record));
    const again = await core(cacheDir);
    expect(again.cached).toBe(false);
    expect(coreBytes(again).equals(coreBytes(first))).toBe(true);
    expect(readdirSync(join(cacheDir, 'runtime-core'))).toHaveLength(1);
    expect(blobs(cacheDir)).toEqual([recordedCore(recordFile)]); // one record, one core: the older one is gone
  });

  it('never uses a cached core whose bytes were changed, and builds without a writable cache', async () => {
    const cacheDir = tempDir('forge-cache-');
    const first = await core(cacheDir);
    writeFileSync(blobFile(cacheDir, recordedCore(recordOf(cacheDir))), `${coreBytes(first).toString()}\nglobalThis.planted = true;\n`);
    const again = await core(cacheDir);
    expect(again.cached).toBe(false);
    expect(coreBytes(again).toString()).not.toContain('planted');

    const notADir = join(tempDir(), 'file');
    writeFileSync(notADir, '');
    const uncached = await core(notADir);
    expect(uncached.cached).toBe(false);
    expect(coreBytes(uncached).equals(coreBytes(first))).toBe(true);
  });

  it('is the same file in two projects built with one cache, and a bundle whose core was changed is refused', async () => {
    const cacheDir = tempDir('forge-cache-');
    const shout = '/**\n * Tool: shout\n * Description: Shouts.\n * Tags: read\n *\n * Input:\n *   text (str): The text.\n */\nexport function execute({ text }: { text: string }) {\n  return `shouted: ${text.toUpperCase()}`;\n}\n';
    const a = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n'), 'tools/shout.ts': shout });
    const b = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    for (const project of [a, b]) expect((await forge(['build', '--prod'], project, { FORGE_CACHE_DIR: cacheDir })).code).toBe(0);
    const coreOf = (project: string) => readFileSync(join(project, '.forge-output', CORE_FILE));
    expect(coreOf(a).equals(coreOf(b))).toBe(true);
    // The project's own tool is in runtime.mjs, not in the shared core.
    expect(readFileSync(join(a, '.forge-output', 'runtime.mjs'), 'utf8')).toContain('shouted: ');
    expect(coreOf(a).toString()).not.toContain('shouted: ');

    const { bundle } = deployBundle(a);
    const called = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', 'shout', '{"text": "hi"}'], { cwd: bundle });
    expect(called.stdout.trim()).toBe('shouted: HI');
    // --timeout takes a duration as docstrings write it, or milliseconds.
    for (const timeout of ['30s', '30000']) expect((await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', 'shout', '{"text": "hi"}', '--timeout', timeout], { cwd: bundle })).stdout.trim()).toBe('shouted: HI');
    // forge tool run's --input is no option of the bundle's call: it says where the arguments go, not Node's parser text.
    const asToolRun = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', 'shout', '--input', '{"text": "hi"}'], { cwd: bundle });
    expect(asToolRun.code).toBe(2);
    expect(asToolRun.stderr).toContain(`unknown option --input\n  hint: call takes the tool's arguments as JSON after its name`);
    expect(asToolRun.stderr).not.toContain('positional');
    const misspelt = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--prot', '8080'], { cwd: bundle });
    expect(misspelt.code).toBe(2);
    expect(misspelt.stderr).toContain('unknown option --prot\n  hint: did you mean "--port"?');
    // Arguments a command does not take are refused, never dropped (an unquoted JSON with a space arrives as two), and a
    // mistyped command is refused before the bundle is opened: nothing is verified or started, so no sandbox line is logged.
    for (const [args, said] of [
      [['call', 'shout', '{"text":', '"hi"}'], 'unexpected argument "\"hi\"}"\n  hint: call takes a tool name and the tool\'s arguments as one JSON object; quote an argument that has spaces'],
      [['describe', 'shout', 'extra'], 'unexpected argument "extra"\n  hint: describe takes a tool name;'],
      [['tools', 'extra'], 'unexpected argument "extra"\n  hint: tools takes no arguments besides its options;'],
      [['serve', '--port', '99999'], '--port must be a port number (0 to 65535), not "99999"\n'],
      [['serve', '--port='], '--port must be a port number (0 to 65535), not ""\n'],
      [['call', 'shout', '{"text": "hi"}', '--timeout', 'soon'], '--timeout takes milliseconds (30000) or a duration (30s, 2m, 500ms), at least 1 ms, not "soon"\n'],
      [['call', 'shout', '{"text": "hi"}', '--timeout', '0s'], '--timeout takes milliseconds (30000) or a duration (30s, 2m, 500ms), at least 1 ms, not "0s"\n'],
      [['serve', '--port', '0x50'], '--port must be a port number (0 to 65535), not "0x50"\n'],
      [['serve', 'PORT=8o8o'], 'PORT must be a port number (0 to 65535), not "8o8o"\n'],
    ] as const) {
      // PORT=… stands for the variable, which the platform sets.
      const env = args[1]?.startsWith('PORT=') ? { PORT: args[1].slice(5) } : {};
      const argv = args[1]?.startsWith('PORT=') ? [args[0]] : args;
      const refused = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), ...argv], { cwd: bundle, env });
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr.startsWith(`error: ${said}`), refused.stderr).toBe(true);
      expect(refused.stderr.split('\n').length).toBeLessThan(10);
    }
    // A work dir that is not there is refused, never made (a mistyped --workdir would start on an empty one).
    const missing = join(tempDir(), 'not-there');
    for (const args of [['call', 'shout', '{"text": "hi"}', '--workdir', missing], ['serve', '--port', '0', '--workdir', missing]]) {
      const refusedDir = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), ...args], { cwd: bundle });
      expect(refusedDir.code, refusedDir.stderr).toBe(1);
      expect(refusedDir.stderr).toContain(`FORGE_WORKDIR_MISSING the working directory ${missing} does not exist`);
      expect(existsSync(missing)).toBe(false);
    }
    // A usage error begins "error:", as the bundle's other failures and forge's own usage errors, and shows the command's own synopsis.
    const nameless = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call'], { cwd: bundle });
    expect(nameless).toMatchObject({ code: 2, stdout: '' });
    expect(nameless.stderr).toMatch(/^error: call needs a tool name\n\n  call NAME \[JSON\] \[--timeout T\] \[--json\]\n +run a tool with JSON arguments and print its result\n\nfor more, run: node runtime.mjs help\n$/);
    // A tool it does not have: the likely one, else what it has; never a forge command, which a deployed bundle lacks.
    for (const command of ['call', 'describe']) {
      const typo = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), command, 'shuot'], { cwd: bundle });
      expect(typo).toMatchObject({ code: 1, stdout: '' });
      expect(typo.stderr).toContain('error: FORGE_TOOL_UNKNOWN no tool named "shuot"\nhint: did you mean "shout"?\n');
      const none = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), command, 'weather'], { cwd: bundle });
      expect(none.stderr).toContain('error: FORGE_TOOL_UNKNOWN no tool named "weather"\nhint: the tools you can call: shout, uuid_generate\n');
    }
    // A failed call names its code, as forge tool run does; arguments that are not JSON are a usage error that says how to give them.
    const noText = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', 'shout', '{}'], { cwd: bundle });
    expect(noText).toMatchObject({ code: 1, stdout: '' });
    expect(noText.stderr).toContain('error: FORGE_TOOL_ARGS invalid arguments for "shout": missing required argument "text"\nhint: its arguments: text (string, required)\n');
    const notJson = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', 'shout', '{text: hi}'], { cwd: bundle });
    expect(notJson).toMatchObject({ code: 2, stdout: '' });
    expect(notJson.stderr).toMatch(/^error: the arguments are not valid JSON: .*\n  hint: give them as one JSON object after the tool's name, quoted: node runtime.mjs call shout '\{"key": "value"\}'\n\n  call NAME \[JSON\]/);
    // A platform's PORT with a stray space still names the port; an empty one is unset.
    const port = await freePort();
    const spaced = await startAgentProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--no-auth'], { cwd: bundle, env: { PORT: ` ${port} ` } });
    expect(spaced.url).toBe(`http://127.0.0.1:${port}`);
    await spaced.stop();
    // A mistyped command is refused before the bundle is opened: one whose agent.json is gone says so too.
    const broken = tempDir();
    cpSync(bundle, broken, { recursive: true });
    rmSync(join(broken, 'agent.json'));
    const mistyped = await runProcess(process.execPath, [join(broken, 'runtime.mjs'), 'sevre', '--port', '8080'], { cwd: broken });
    expect(mistyped.code).toBe(2);
    // Short: the commands, not the whole usage (its environment, approval and options), which would push the problem off a small screen.
    expect(mistyped.stderr).toMatch(/^error: unknown command "sevre"\n  hint: did you mean "serve"\?\n\ncommands:\n  serve .*\n[^]*  doctor .*\n\nfor more, run: node runtime.mjs help\n$/);
    expect(mistyped.stderr).not.toContain('environment:');
    writeFileSync(join(bundle, CORE_FILE), `${readFileSync(join(bundle, CORE_FILE), 'utf8')}\n`);
    const verified = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'verify'], { cwd: bundle });
    expect(verified.code).toBe(1);
    expect(verified.stderr + verified.stdout).toContain(`${CORE_FILE} was changed after the build`);
  });

  it('builds a project without TS tools from the cached core without starting esbuild', async () => {
    const cacheDir = tempDir('forge-cache-');
    // esbuild runs the binary ESBUILD_BINARY_PATH names: this one notes each start, then is the real one.
    const log = join(tempDir(), 'esbuild-starts');
    const wrapper = join(tempDir(), 'esbuild');
    const real = createRequire(import.meta.url).resolve(`@esbuild/${process.platform}-${process.arch}/bin/esbuild`);
    writeFileSync(wrapper, `#!/bin/sh\necho started >> '${log}'\nexec '${real}' "$@"\n`, { mode: 0o755 });
    const env = { FORGE_CACHE_DIR: cacheDir, ESBUILD_BINARY_PATH: wrapper };
    const builtinsOnly = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    expect((await forge(['build', '--prod'], builtinsOnly, env)).code).toBe(0); // fills the cache: esbuild bundles the core
    expect(existsSync(log)).toBe(true);
    rmSync(log);
    rmSync(join(builtinsOnly, '.forge'), { recursive: true, force: true });
    expect((await forge(['build', '--prod'], builtinsOnly, env)).code).toBe(0);
    expect(existsSync(log)).toBe(false);
    const called = await runProcess(process.execPath, [join(builtinsOnly, '.forge-output', 'runtime.mjs'), 'call', 'uuid_generate', '{}'], { cwd: builtinsOnly });
    expect(called.stdout).toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
  });

  it('is bundled again with forge build --no-cache, and taken from the cache without it', async () => {
    const cacheDir = tempDir('forge-cache-');
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    expect((await forge(['build', '--prod'], project, { FORGE_CACHE_DIR: cacheDir })).code).toBe(0);
    const cachedCore = blobFile(cacheDir, recordedCore(recordOf(cacheDir)));
    const longAgo = new Date('2001-01-01T00:00:00Z');
    utimesSync(cachedCore, longAgo, longAgo);
    expect((await forge(['build', '--prod', '--no-cache'], project, { FORGE_CACHE_DIR: cacheDir })).code).toBe(0);
    expect(statSync(cachedCore).mtime.getTime()).toBeGreaterThan(longAgo.getTime()); // written anew
    utimesSync(cachedCore, longAgo, longAgo);
    rmSync(join(project, '.forge'), { recursive: true, force: true });
    expect((await forge(['build', '--prod'], project, { FORGE_CACHE_DIR: cacheDir })).code).toBe(0);
    expect(statSync(cachedCore).mtime.getTime()).toBe(longAgo.getTime()); // read, not written
    expect(readFileSync(join(project, '.forge-output', CORE_FILE)).equals(readFileSync(cachedCore))).toBe(true);
  });
});
