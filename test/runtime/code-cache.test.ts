import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { esbuild } from '../../stages/esbuild-api.ts';
import { forge, minimalConfig, repoRoot, runProcess, tempDir, writeProject } from '../helpers/project.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Each load runs in a process of its own, as each `forge` command does: within
 * one process V8 reuses what it compiled already and never reads the cache.
 */
let runner: string;
beforeAll(async () => {
  const dir = tempDir();
  await esbuild.build({ entryPoints: [join(repoRoot, 'runtime', 'code-cache.ts')], outfile: join(dir, 'code-cache.cjs'), bundle: true, platform: 'node', format: 'cjs', logLevel: 'silent' });
  runner = join(dir, 'runner.cjs');
  writeFileSync(
    runner,
    `const { loadWithCodeCache } = require('./code-cache.cjs');
const [file, cacheDir, version, save, variant] = process.argv.slice(2);
const loaded = loadWithCodeCache(file, cacheDir, version, variant || undefined);
if (save === 'save') loaded.save();
process.stdout.write(JSON.stringify({ cache: loaded.cache, exports: loaded.exports }));`,
  );
});

function load(file: string, cacheDir: string, { save = true, version = '1.0.0', nodeOptions = [] as string[], variant = '' } = {}): { cache: string; exports: unknown } {
  return JSON.parse(execFileSync(process.execPath, [...nodeOptions, runner, file, cacheDir, version, save ? 'save' : '', variant], { encoding: 'utf8' }));
}

/** A CommonJS file in a folder of its own, with a helper beside it. */
function moduleFile(text: string): string {
  const dir = tempDir();
  writeFileSync(join(dir, 'helper.cjs'), 'module.exports = 40;\n');
  writeFileSync(join(dir, 'cli.cjs'), text);
  return join(dir, 'cli.cjs');
}

const cacheFiles = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.v8cache'));

/** Another text of the same length at the same path, saved later: the case V8 alone would answer with the old bytecode. */
function rewriteSameLength(file: string, text: string): void {
  expect(text.length).toBe(readFileSync(file, 'utf8').length);
  writeFileSync(file, text);
  const later = new Date(Date.now() + 5000);
  utimesSync(file, later, later);
}

describe('loadWithCodeCache', () => {
  it('runs the file as a CommonJS module: its exports, require() beside it, __filename and __dirname', () => {
    const file = moduleFile("module.exports = { answer: require('./helper.cjs') + 2, file: __filename, dir: __dirname, self: this === exports };\n");
    expect(load(file, tempDir()).exports).toEqual({ answer: 42, file, dir: join(file, '..'), self: true });
  });

  it('reads a file that is not ASCII as UTF-8, with or without its cache', () => {
    // The compiled CLI is ASCII and is read as such, faster; any other text must not be mangled by that.
    const file = moduleFile("module.exports = 'Héllo, ℹ wörld 🌍';\n");
    const cache = tempDir();
    expect(load(file, cache)).toEqual({ cache: 'missing', exports: 'Héllo, ℹ wörld 🌍' });
    expect(load(file, cache)).toEqual({ cache: 'used', exports: 'Héllo, ℹ wörld 🌍' });
  });

  it('writes the cache when there was none, and the next command uses it without writing it again', () => {
    const file = moduleFile('module.exports = (function twice(x) { return x * 2; })(21);\n');
    const cache = tempDir();
    expect(load(file, cache)).toEqual({ cache: 'missing', exports: 42 });
    expect(cacheFiles(cache)).toHaveLength(1);
    const written = statSync(join(cache, cacheFiles(cache)[0]!)).mtimeMs;
    expect(load(file, cache)).toEqual({ cache: 'used', exports: 42 });
    expect(statSync(join(cache, cacheFiles(cache)[0]!)).mtimeMs).toBe(written);
  });

  it("never runs another text's bytecode: a file rewritten to the same length gets a cache of its own", () => {
    // V8 takes cached data for any script of the same length, and would run the old code.
    const file = moduleFile("module.exports = 'before';\n");
    const cache = tempDir();
    load(file, cache);
    rewriteSameLength(file, "module.exports = 'after!';\n");
    expect(load(file, cache)).toEqual({ cache: 'missing', exports: 'after!' });
  });

  it('never takes the cache of another version of the program at one path, and replaces it', () => {
    const file = moduleFile("module.exports = 'same';\n");
    const cache = tempDir();
    load(file, cache, { version: '1.0.0' });
    expect(load(file, cache, { version: '1.1.0' }).cache).toBe('missing');
    expect(cacheFiles(cache)).toEqual([expect.stringContaining('-1.1.0-')]);
  });

  it("replaces an older build's cache of the same file, and keeps other files' caches", () => {
    const file = moduleFile("module.exports = 'v1';\n");
    const other = moduleFile("module.exports = 'other';\n");
    const cache = tempDir();
    load(file, cache);
    load(other, cache);
    writeFileSync(file, "module.exports = 'version 2';\n");
    expect(load(file, cache)).toEqual({ cache: 'missing', exports: 'version 2' });
    expect(cacheFiles(cache)).toHaveLength(2);
    expect(load(other, cache).cache).toBe('used');
    expect(load(file, cache).cache).toBe('used');
  });

  it('keeps a cache per set of V8 flags, so runs with and without one do not refuse each other\'s', () => {
    // V8 refuses a cache made under other flags: one shared file would be refused and rewritten on every switch.
    const file = moduleFile('module.exports = 7;\n');
    const cache = tempDir();
    const flagged = { nodeOptions: ['--max-semi-space-size=32'] };
    expect(load(file, cache).cache).toBe('missing');
    expect(load(file, cache, flagged).cache).toBe('missing');
    expect(load(file, cache).cache).toBe('used');
    expect(load(file, cache, flagged).cache).toBe('used');
    expect(cacheFiles(cache)).toHaveLength(2);
  });

  it('keeps a cache per variant of run, for the file and the files it requires; a new build removes the older build\'s caches of every variant', () => {
    // A cache holds what the run that wrote it compiled: one written by `forge help` would leave `forge build` compiling.
    const file = moduleFile("module.exports = require('./helper.cjs') + 2;\n");
    const cache = tempDir();
    expect(load(file, cache).cache).toBe('missing');
    expect(load(file, cache, { variant: 'build' }).cache).toBe('missing');
    expect(load(file, cache, { variant: 'tool-run' }).cache).toBe('missing');
    expect(load(file, cache, { variant: 'build' }).cache).toBe('used');
    expect(load(file, cache, { variant: 'tool-run' }).cache).toBe('used');
    expect(load(file, cache).cache).toBe('used');
    const named = (prefix: string) => cacheFiles(cache).filter((name) => name.startsWith(prefix));
    for (const prefix of ['cli.cjs+build-', 'cli.cjs+tool-run-', 'cli.cjs-', 'helper.cjs+build-', 'helper.cjs+tool-run-', 'helper.cjs-']) expect(named(prefix)).toHaveLength(1);
    const [oldBuild, oldToolRun, oldPlain] = ['cli.cjs+build-', 'cli.cjs+tool-run-', 'cli.cjs-'].map((prefix) => named(prefix)[0]);
    const helpers = named('helper.cjs');
    writeFileSync(file, "module.exports = require('./helper.cjs') + 3;\n");
    expect(load(file, cache, { variant: 'build' })).toEqual({ cache: 'missing', exports: 43 });
    // The new build's cache, and no cache of the old text in any variant; the helper, unchanged, keeps its own.
    expect(named('cli.cjs')).toEqual([expect.stringMatching(/^cli\.cjs\+build-/)]);
    expect(named('cli.cjs')).not.toContain(oldBuild);
    expect(cacheFiles(cache)).not.toContain(oldToolRun);
    expect(cacheFiles(cache)).not.toContain(oldPlain);
    expect(named('helper.cjs')).toEqual(helpers);
    expect(load(file, cache, { variant: 'tool-run' })).toEqual({ cache: 'missing', exports: 43 });
    expect(named('cli.cjs')).toHaveLength(2);
  });

  it('refuses a damaged cache, still runs, and writes a good one', () => {
    const file = moduleFile('module.exports = [1, 2, 3].map((n) => n * 2);\n');
    const cache = tempDir();
    load(file, cache);
    const [name] = cacheFiles(cache);
    writeFileSync(join(cache, name!), Buffer.alloc(4096, 7));
    expect(load(file, cache)).toEqual({ cache: 'refused', exports: [2, 4, 6] });
    expect(load(file, cache).cache).toBe('used');
  });

  it('runs without a cache where none can be written', () => {
    const file = moduleFile('module.exports = 1;\n');
    const notADirectory = join(tempDir(), 'file');
    writeFileSync(notADirectory, '');
    expect(load(file, notADirectory)).toEqual({ cache: 'missing', exports: 1 });
    expect(load(file, notADirectory)).toEqual({ cache: 'missing', exports: 1 });
  });

  it('compiles the .cjs files the module requires from its folder with caches of their own, and only those', () => {
    // dist/'s prebuilt libraries (ajv, the small ones) are required by the CLI; packages and node: modules are Node's to load.
    const file = moduleFile(
      "const helper = require('./lib/helper.cjs');\nmodule.exports = { helper, again: require('./lib/helper.cjs') === helper, outside: require('../outside.cjs'), sep: require('node:path').sep };\n",
    );
    const dir = join(file, '..');
    mkdirSync(join(dir, 'lib'));
    writeFileSync(join(dir, 'lib', 'helper.cjs'), "exports.name = 'helper'; exports.cli = require('../cli.cjs');\n");
    writeFileSync(join(dir, '..', 'outside.cjs'), "module.exports = 'outside';\n");
    const cache = tempDir();
    // The helper's require of the file that requires it is a cycle: it gets the exports made so far, as Node's require gives.
    const expected = { helper: { name: 'helper', cli: {} }, again: true, outside: 'outside', sep: '/' };
    expect(load(file, cache)).toEqual({ cache: 'missing', exports: expected });
    const names = cacheFiles(cache).sort();
    expect(names).toEqual([expect.stringMatching(/^cli\.cjs-/), expect.stringMatching(/^helper\.cjs-/)]);
    const written = names.map((name) => statSync(join(cache, name)).mtimeMs);
    expect(load(file, cache)).toEqual({ cache: 'used', exports: expected });
    // Both used: a missing or refused one would have been written again.
    expect(cacheFiles(cache).sort()).toEqual(names);
    expect(names.map((name) => statSync(join(cache, name)).mtimeMs)).toEqual(written);
  });

  it("never runs another text's bytecode for a required file either", () => {
    const file = moduleFile("module.exports = require('./lib.cjs');\n");
    const lib = join(file, '..', 'lib.cjs');
    writeFileSync(lib, "module.exports = 'before';\n");
    const cache = tempDir();
    load(file, cache);
    rewriteSameLength(lib, "module.exports = 'after!';\n");
    expect(load(file, cache)).toEqual({ cache: 'used', exports: 'after!' });
  });

  it('removes the caches nobody wrote for 30 days, and the temp files of killed writers, when it writes one; keeps the rest', () => {
    const cache = tempDir();
    const aged = (name: string, days: number) => {
      writeFileSync(join(cache, name), 'x');
      const then = new Date(Date.now() - days * DAY_MS);
      utimesSync(join(cache, name), then, then);
    };
    aged('forge-cli.cjs-0.0.1-nodev20.0.0-x64-1-1-1.v8cache', 31);
    aged('forge-cli.cjs-0.0.2-nodev22.0.0-x64-1-1-1.v8cache', 29);
    aged('forge-cli.cjs-0.0.2-nodev22.0.0-x64-1-1-1.v8cache.123.tmp', 2);
    aged('forge-cli.cjs-0.0.2-nodev22.0.0-x64-1-1-1.v8cache.456.tmp', 0);
    load(moduleFile('module.exports = 1;\n'), cache);
    expect(readdirSync(cache).sort()).toEqual([
      expect.stringMatching(/^cli\.cjs-.*\.v8cache$/),
      'forge-cli.cjs-0.0.2-nodev22.0.0-x64-1-1-1.v8cache',
      'forge-cli.cjs-0.0.2-nodev22.0.0-x64-1-1-1.v8cache.456.tmp',
    ]);
  });
});

/** The commands the compiled CLI's caches in `dir` are for (forge-cli.cjs+tool-run-1a2b3c4d-node…). */
const cliCacheVariants = (dir: string) =>
  (existsSync(dir) ? cacheFiles(dir) : [])
    .flatMap((name) => /^forge-cli\.cjs\+([a-z-]+?)-[0-9a-f]{8}-node/.exec(name)?.[1] ?? [])
    .sort();

describe('forge and its code cache', () => {
  it('writes the compiled CLI\'s cache at the first command and uses it at the next', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    const env = { FORGE_CACHE_DIR: tempDir() };
    expect((await forge(['tool', 'list'], project, env)).code).toBe(0);
    const dir = join(env.FORGE_CACHE_DIR, 'code-cache');
    const [name] = cacheFiles(dir);
    expect(name).toMatch(/^forge-cli\.cjs\+tool-list-/);
    const written = statSync(join(dir, name!)).mtimeMs;
    const listed = await forge(['tool', 'list'], project, env);
    expect(listed.stdout).toContain('uuid_generate');
    // Refused or missing, it would have been written again.
    expect(cacheFiles(dir)).toEqual([name]);
    expect(statSync(join(dir, name!)).mtimeMs).toBe(written);
  });

  it('keeps a cache per command, so the first command run after an install does not leave the others compiling their code', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    const env = { FORGE_CACHE_DIR: tempDir() };
    const dir = join(env.FORGE_CACHE_DIR, 'code-cache');
    expect((await forge(['help'], project, env)).code).toBe(0);
    expect((await forge(['validate'], project, env)).code).toBe(0);
    expect((await forge(['tool', 'describe', 'uuid_generate'], project, env)).code).toBe(0);
    expect(cliCacheVariants(dir)).toEqual(['help', 'tool-describe', 'validate']);
    const byName = new Map(cacheFiles(dir).map((name) => [name, statSync(join(dir, name)).mtimeMs]));
    expect((await forge(['validate'], project, env)).code).toBe(0);
    expect((await forge(['tool', 'describe', 'uuid_generate'], project, env)).code).toBe(0);
    expect(new Map(cacheFiles(dir).map((name) => [name, statSync(join(dir, name)).mtimeMs]))).toEqual(byName);
  });

  it('writes no cache for a command line that ends in a usage error, so the command\'s next run writes one that holds its work', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    const env = { FORGE_CACHE_DIR: tempDir() };
    const dir = join(env.FORGE_CACHE_DIR, 'code-cache');
    for (const args of [['frobnicate'], ['constructor'], ['tool', 'lst'], ['tool', 'toString'], ['validate', '--bogus']]) expect((await forge(args, project, env)).code).toBe(2);
    expect(cliCacheVariants(dir)).toEqual([]);
    expect((await forge(['validate'], project, env)).code).toBe(0);
    expect(cliCacheVariants(dir)).toEqual(['validate']);
  });
});

describe('forge and what it loads', () => {
  const project = () =>
    writeProject({
      'forge.yaml': minimalConfig(),
      'tools/shout.yaml': "description: Prints the text.\ntags: [read]\nparameters:\n  text: { type: string, description: The text. }\nrun: [printf, '%s', '{text}']\n",
      'tools/double.ts': "/**\n * Tool: double\n * Description: Doubles a number.\n * Tags: read\n * Input:\n *   n (int): The number.\n */\nexport function execute(args: { n: number }) {\n  return args.n * 2;\n}\n",
    });

  /** Runs `forge` with a probe that says at exit whether esbuild's API was evaluated. */
  async function forgeProbed(args: string[], cwd: string, env: Record<string, string>) {
    const probe = join(tempDir(), 'probe.cjs');
    writeFileSync(probe, `process.on('exit', () => process.stderr.write('\\nesbuild=' + Object.keys(require.cache).some((k) => k.endsWith('/esbuild/lib/main.js'))));`);
    const result = await runProcess(process.execPath, ['--require', probe, join(repoRoot, 'bin', 'forge.cjs'), ...args], { cwd, env });
    return { code: result.code, stdout: result.stdout, esbuild: result.stderr.match(/esbuild=(true|false)$/)?.[1] };
  }

  it('evaluates esbuild only for a command that bundles: a YAML tool runs without it, a TypeScript tool with it', async () => {
    const dir = project();
    const env = { FORGE_CACHE_DIR: tempDir() };
    expect(await forgeProbed(['tool', 'run', 'shout', '--param', 'text=hi'], dir, env)).toMatchObject({ code: 0, stdout: expect.stringContaining('hi'), esbuild: 'false' });
    expect(await forgeProbed(['tool', 'run', 'double', '--param', 'n=21'], dir, env)).toMatchObject({ code: 0, stdout: expect.stringContaining('42'), esbuild: 'true' });
  });

  it('keeps a code cache for the prebuilt ajv a tool run validates with, and uses it at the next run', async () => {
    const dir = project();
    const env = { FORGE_CACHE_DIR: tempDir() };
    expect((await forge(['tool', 'run', 'shout', '--param', 'text=hi'], dir, env)).code).toBe(0);
    const cacheDir = join(env.FORGE_CACHE_DIR, 'code-cache');
    const ajv = cacheFiles(cacheDir).filter((name) => name.startsWith('ajv.cjs+tool-run-'));
    expect(ajv).toHaveLength(1);
    const written = statSync(join(cacheDir, ajv[0]!)).mtimeMs;
    expect((await forge(['tool', 'run', 'shout', '--param', 'text=again'], dir, env)).stdout).toContain('again');
    expect(statSync(join(cacheDir, ajv[0]!)).mtimeMs).toBe(written);
  });
});

describe('forge before it is compiled', () => {
  it('says how to compile it, whichever part of dist/ is missing', async () => {
    const forgeDir = tempDir();
    mkdirSync(join(forgeDir, 'bin'));
    copyFileSync(join(repoRoot, 'bin', 'forge.cjs'), join(forgeDir, 'bin', 'forge.cjs'));
    copyFileSync(join(repoRoot, 'package.json'), join(forgeDir, 'package.json'));
    const run = () => runProcess(process.execPath, [join(forgeDir, 'bin', 'forge.cjs'), 'tool', 'list'], { cwd: forgeDir, env: { FORGE_CACHE_DIR: tempDir() } });
    const expected = { code: 1, stdout: '', stderr: 'forge is not compiled yet: run `npm install` (or `npm run prepare`) in the forge directory\n' };
    expect(await run()).toEqual(expected); // no dist/ at all
    mkdirSync(join(forgeDir, 'dist'));
    copyFileSync(join(repoRoot, 'dist', 'forge-fast.cjs'), join(forgeDir, 'dist', 'forge-fast.cjs'));
    expect(await run()).toEqual(expected); // the fast path, but not the CLI
  });
});

describe('a checked module (a bundle vendor file, loadCheckedWithContentCache)', () => {
  it('runs the bytes its caller checked, not what the file holds by then, with a cache folder and without', async () => {
    const { loadCheckedWithContentCache } = await import('../../runtime/code-cache.ts');
    const { createHash } = await import('node:crypto');
    for (const cacheDir of [tempDir('forge-vendor-cache-'), undefined]) {
      const dir = tempDir();
      const file = join(dir, 'module.cjs');
      const checked = Buffer.from("module.exports = 'checked';\n");
      // Swapped on disk after the check, with the same length (V8 would take a cache made from either for the other).
      writeFileSync(file, "module.exports = 'swapped';\n");
      const sha256 = createHash('sha256').update(checked).digest('hex');
      const loaded = loadCheckedWithContentCache(file, checked, sha256, cacheDir);
      expect(loaded.exports).toBe('checked');
      loaded.save();
      // And the cache it wrote serves those bytes again.
      expect(loadCheckedWithContentCache(file, checked, sha256, cacheDir).exports).toBe('checked');
    }
  });
});
