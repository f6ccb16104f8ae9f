/**
 * The docstring cache (parse-docstrings.ts, kept by project-cache.ts): a file whose text and
 * paths are unchanged is not parsed again by the compiled CLI, and nothing
 * else ever reads an entry — another text, another parser, a damaged file.
 * The CLI tests plant an entry (a description no parse would give) to see
 * which command read the cache.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compiledCliBuild, openProjectCache } from '../../stages/project-cache.ts';
import { forge, minimalConfig, tempDir, writeProject } from '../helpers/project.ts';

const tool = (description: string, extra = '') => `/**\n * Tool: greet\n * Description: ${description}\n * Tags: read\n *\n * Input:\n *   name (str): Who.\n${extra} */\nexport function execute(args: { name: string }) { return 'hi ' + args.name; }\n`;

/** The project's cache file in `cacheDir` (one per project), parsed. */
function cacheFile(cacheDir: string): { path: string; data: { maker: string; entries: Record<string, { spec?: { description: string } }> } } {
  const dir = join(cacheDir, 'docstrings');
  const names = readdirSync(dir);
  expect(names).toHaveLength(1);
  const path = join(dir, names[0]);
  return { path, data: JSON.parse(readFileSync(path, 'utf8')) };
}

/** Rewrites every cached entry's description: what a command shows then says whether it read the cache. */
function plant(cacheDir: string, description: string): void {
  const { path, data } = cacheFile(cacheDir);
  for (const entry of Object.values(data.entries)) if (entry.spec) entry.spec.description = description;
  writeFileSync(path, JSON.stringify(data));
}

async function describeGreet(project: string, cacheDir: string): Promise<string> {
  const result = await forge(['tool', 'describe', 'greet', '--json'], project, { FORGE_CACHE_DIR: cacheDir });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout).tool.description;
}

describe('the docstring cache', () => {
  it('gives a file whose text and paths are unchanged what its first parse gave, and parses a changed file again', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.ts': tool('Greets someone.') });
    const cacheDir = tempDir('forge-cache-');
    expect(await describeGreet(project, cacheDir)).toBe('Greets someone.');
    plant(cacheDir, 'PLANTED');
    expect(await describeGreet(project, cacheDir)).toBe('PLANTED');
    // An edit: the file's sha256 changes, and the entry for the old text is not the new text's.
    writeFileSync(join(project, 'tools', 'greet.ts'), tool('Greets someone warmly.'));
    expect(await describeGreet(project, cacheDir)).toBe('Greets someone warmly.');
    // The build takes the same entries (and the same spec goes into agent.json).
    plant(cacheDir, 'PLANTED AGAIN');
    expect((await forge(['build', '--prod'], project, { FORGE_CACHE_DIR: cacheDir })).code).toBe(0);
    expect(JSON.parse(readFileSync(join(project, '.forge-output', 'agent.json'), 'utf8')).tools.find((t: { name: string }) => t.name === 'greet').description).toBe('PLANTED AGAIN');
  });

  it("never takes another parser's entries (a rebuilt or upgraded Forge), nor a damaged file's, and writes its own in their place", async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.ts': tool('Greets someone.') });
    const cacheDir = tempDir('forge-cache-');
    await describeGreet(project, cacheDir);
    plant(cacheDir, 'PLANTED');
    const { path, data } = cacheFile(cacheDir);
    writeFileSync(path, JSON.stringify({ ...data, maker: `${data.maker}-another-build` }));
    expect(await describeGreet(project, cacheDir)).toBe('Greets someone.');
    expect(cacheFile(cacheDir).data.maker).toBe(data.maker);
    writeFileSync(path, '{"format": 2, "maker": "torn');
    expect(await describeGreet(project, cacheDir)).toBe('Greets someone.');
    expect(cacheFile(cacheDir).data.maker).toBe(data.maker);
    // A cache folder that cannot be written (a file in its place): the command works, parsing every time.
    const blocked = join(tempDir(), 'not-a-dir');
    writeFileSync(blocked, '');
    expect(await describeGreet(project, blocked)).toBe('Greets someone.');
  });

  it("keeps a file's diagnostics with its entry: a cached parse warns and refuses as the first did", async () => {
    const project = writeProject({
      'forge.yaml': minimalConfig(),
      // A warning (an unknown section) and, in another file, an error (a parameter without a type).
      'tools/greet.ts': tool('Greets someone.', ' *\n * Remarks: none\n'),
      'tools/broken.ts': '/**\n * Tool: broken\n * Description: Broken.\n * Tags: read\n *\n * Input:\n *   name: Who.\n */\nexport function execute() { return 1; }\n',
    });
    const cacheDir = tempDir('forge-cache-');
    const first = await forge(['validate'], project, { FORGE_CACHE_DIR: cacheDir });
    const second = await forge(['validate'], project, { FORGE_CACHE_DIR: cacheDir });
    expect(first.code).toBe(1);
    expect(first.stderr).toContain('tools/broken.ts:7');
    expect(first.stderr).toContain('tools/greet.ts');
    expect(second).toEqual(first);
    // The second run's diagnostics came from the cache: a message planted there is what it says.
    const { path, data } = cacheFile(cacheDir);
    const entries = data.entries as Record<string, { diagnostics: { message: string }[] }>;
    for (const entry of Object.values(entries)) for (const d of entry.diagnostics) d.message = `PLANTED ${d.message}`;
    writeFileSync(path, JSON.stringify(data));
    const planted = await forge(['validate'], project, { FORGE_CACHE_DIR: cacheDir });
    expect(planted.code).toBe(1);
    expect(planted.stderr.match(/PLANTED/g)?.length).toBe(first.stderr.match(/tools\/(greet|broken)\.ts:\d+/g)?.length);
  });

  it('keeps the entries of the files there are: a removed tool leaves the cache with it', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.ts': tool('Greets someone.'), 'tools/other.ts': tool('Other.').replace('greet', 'other') });
    const cacheDir = tempDir('forge-cache-');
    await describeGreet(project, cacheDir);
    expect(Object.keys(cacheFile(cacheDir).data.entries)).toHaveLength(2);
    rmSync(join(project, 'tools', 'other.ts'));
    await describeGreet(project, cacheDir);
    expect(Object.keys(cacheFile(cacheDir).data.entries)).toEqual([expect.stringContaining('tools/greet.ts')]);
  });

  it("files an entry under the file's paths too: the same text at another path reports its problems there", async () => {
    const noTool = '"""\nDescription: Looks like a tool.\nTags: read\n"""\nX = 1\n';
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.ts': tool('Greets someone.'), 'tools/first.py': noTool });
    const cacheDir = tempDir('forge-cache-');
    const first = await forge(['validate'], project, { FORGE_CACHE_DIR: cacheDir });
    expect(first.stdout + first.stderr).toContain('tools/first.py:2:1 FORGE_DOCSTRING_NO_TOOL');
    writeFileSync(join(project, 'tools', 'second.py'), noTool);
    const both = await forge(['validate'], project, { FORGE_CACHE_DIR: cacheDir });
    expect(both.stdout + both.stderr).toContain('tools/first.py:2:1 FORGE_DOCSTRING_NO_TOOL');
    expect(both.stdout + both.stderr).toContain('tools/second.py:2:1 FORGE_DOCSTRING_NO_TOOL');
  });

  it('keeps a copy of what a parse gave: what later stages change in the result is not written', () => {
    const cacheDir = tempDir('forge-cache-');
    const cache = openProjectCache<{ spec: { description: string } }>('docstrings', '/some/project', 'parser-1', { cacheDir })!;
    const entry = { spec: { description: 'as parsed' } };
    cache.set('key', entry);
    entry.spec.description = 'changed by a later stage';
    cache.save();
    expect(openProjectCache('docstrings', '/some/project', 'parser-1', { cacheDir })!.get('key')).toEqual({ spec: { description: 'as parsed' } });
    // Another parser, another project: nothing.
    expect(openProjectCache('docstrings', '/some/project', 'parser-2', { cacheDir })!.get('key')).toBeUndefined();
    expect(openProjectCache('docstrings', '/other/project', 'parser-1', { cacheDir })!.get('key')).toBeUndefined();
    // A name every object has is no entry.
    expect(openProjectCache('docstrings', '/some/project', 'parser-1', { cacheDir })!.get('constructor')).toBeUndefined();
  });

  it("removes the files of projects no command used for 30 days when it writes one, and keeps a used project's", () => {
    const cacheDir = tempDir('forge-cache-');
    const write = (root: string) => {
      const cache = openProjectCache<object>('docstrings', root, 'parser-1', { cacheDir })!;
      cache.set('key', { spec: {} });
      cache.save();
    };
    write('/gone/project');
    write('/used/project');
    const dir = join(cacheDir, 'docstrings');
    const [gone, used] = ['/gone/project', '/used/project'].map((root) => join(dir, `${createHash('sha256').update(root).digest('hex').slice(0, 32)}.json`));
    const longAgo = new Date(Date.now() - 31 * 24 * 60 * 60 * 1000);
    for (const file of [gone, used]) utimesSync(file, longAgo, longAgo);
    // Reading a project's entries marks its file used.
    expect(openProjectCache('docstrings', '/used/project', 'parser-1', { cacheDir })!.get('key')).toEqual({ spec: {} });
    write('/new/project');
    expect(readdirSync(dir).sort()).toEqual([basename(used), `${createHash('sha256').update('/new/project').digest('hex').slice(0, 32)}.json`].sort());
    expect(existsSync(gone)).toBe(false);
  });

  it('parses a file again whose entry is not in the shape a parse gives (a hand-edited cache), and the command works', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.ts': tool('Greets someone.') });
    const cacheDir = tempDir('forge-cache-');
    await describeGreet(project, cacheDir);
    const { path, data } = cacheFile(cacheDir);
    for (const key of Object.keys(data.entries)) data.entries[key] = { spec: { description: 'PLANTED' } };
    writeFileSync(path, JSON.stringify(data));
    expect(await describeGreet(project, cacheDir)).toBe('Greets someone.');
  });

  it('is off where the parser is not the compiled CLI (the stages run from source)', () => {
    expect(openProjectCache('docstrings', '/some/project', compiledCliBuild(), { cacheDir: tempDir('forge-cache-') })).toBeUndefined();
  });
});
