import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentManifest } from '../../runtime/manifest.ts';
import { build } from '../../stages/pipeline.ts';
import { fixtureProject, writeProject, minimalConfig } from '../helpers/project.ts';

const DEV_MARKERS = ['dev_probe_py', 'dev_probe_ts', 'DEV_ONLY_MARKER_PY', 'DEV_ONLY_MARKER_TS'];

function readOutput(dir: string): Map<string, Buffer> {
  const out = join(dir, '.forge-output');
  const files = new Map<string, Buffer>();
  for (const entry of readdirSync(out, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) files.set(join(entry.parentPath, entry.name).slice(out.length + 1), readFileSync(join(entry.parentPath, entry.name)));
  }
  return files;
}

function tarEntries(archive: string): string[] {
  return execFileSync('tar', ['tzf', archive], { encoding: 'utf8' }).trim().split('\n').sort();
}

describe('forge build --prod', () => {
  it('leaves every dev tool out of every artifact', async () => {
    const dir = fixtureProject('basic');
    const result = await build({ cwd: dir, prod: true });
    expect(result.errors).toEqual([]);
    expect(result.ok).toBe(true);
    expect(result.summary!.tools.strippedDevTools).toEqual(['dev_probe_py', 'dev_probe_ts']);

    const files = readOutput(dir);
    const manifest = JSON.parse(files.get('agent.json')!.toString()) as AgentManifest;
    expect(manifest.tools.map((t) => t.name)).toEqual(['echo_py', 'env_probe', 'py_script', 'ts_execute', 'ts_script', 'uuid_generate']);
    expect(manifest.categories.dev).toEqual([]);
    expect(manifest.build.mode).toBe('prod');
    for (const [path, content] of files) {
      if (path.endsWith('.tgz')) continue;
      for (const marker of DEV_MARKERS) expect(content.toString(), `${marker} in ${path}`).not.toContain(marker);
    }
    expect([...files.keys()].filter((p) => p.startsWith('tools/')).sort()).toEqual(['tools/echo_py.py', 'tools/env_probe.py', 'tools/helpers.py', 'tools/py_script.py', 'tools/ts_script.mjs']);
    const archived = tarEntries(join(dir, '.forge-output', 'basic-agent-1.2.3.tgz'));
    expect(archived.some((e) => e.includes('dev_probe'))).toBe(false);
  });

  it('keeps dev tools in a dev build', async () => {
    const dir = fixtureProject('basic');
    const result = await build({ cwd: dir, prod: false });
    expect(result.ok).toBe(true);
    const files = readOutput(dir);
    const manifest = JSON.parse(files.get('agent.json')!.toString()) as AgentManifest;
    expect(manifest.categories.dev).toEqual(['dev_probe_py', 'dev_probe_ts']);
    expect(files.get('runtime.mjs')!.toString()).toContain('DEV_ONLY_MARKER_TS');
    expect(files.has('tools/dev_probe_py.py')).toBe(true);
  });

  it('records every tool with its category, schema and bundle path', async () => {
    const dir = fixtureProject('basic');
    await build({ cwd: dir, prod: true });
    const manifest = JSON.parse(readFileSync(join(dir, '.forge-output/agent.json'), 'utf8')) as AgentManifest;
    const byName = Object.fromEntries(manifest.tools.map((t) => [t.name, t]));
    expect(byName.echo_py).toMatchObject({ category: 'custom', tags: ['read'], source: { kind: 'python', path: 'tools/echo_py.py', style: 'execute' } });
    expect(byName.py_script.source).toMatchObject({ kind: 'python', style: 'script' });
    expect(byName.ts_execute.source).toMatchObject({ kind: 'typescript', path: 'runtime.mjs', style: 'execute' });
    expect(byName.ts_script.source).toMatchObject({ kind: 'typescript', path: 'tools/ts_script.mjs', style: 'script' });
    expect(byName.uuid_generate).toMatchObject({ category: 'builtin' });
    expect(byName.uuid_generate.source).toBeUndefined();
    expect(byName.echo_py.inputSchema).toMatchObject({ required: ['message'], properties: { times: { type: 'integer', default: 1 } } });
    expect(byName.echo_py.source!.sha256).toBe(createHash('sha256').update(readFileSync(join(dir, 'tools/echo_py.py'))).digest('hex'));
    expect(manifest.requirements.python).toBeDefined();
    expect(manifest.env_passthrough).toEqual(['FORGE_TEST_ALLOWED']);
  });

  it('writes checksums that match the files, and a manifest of the build', async () => {
    const dir = fixtureProject('basic');
    await build({ cwd: dir, prod: true });
    const files = readOutput(dir);
    const checksums = JSON.parse(files.get('checksums.json')!.toString()) as { files: Record<string, string> };
    const expected = [...files.keys()].filter((p) => p !== 'checksums.json' && !p.endsWith('.tgz')).sort();
    expect(Object.keys(checksums.files).sort()).toEqual(expected);
    for (const [path, sha] of Object.entries(checksums.files)) {
      expect(createHash('sha256').update(files.get(path)!).digest('hex')).toBe(sha);
    }
    const buildManifest = JSON.parse(files.get('build-manifest.json')!.toString());
    expect(buildManifest).toMatchObject({ mode: 'prod', tools: { total: 6, dev_tools_stripped: 2, by_category: { builtin: 1, custom: 5, dev: 0 } } });
    expect(buildManifest.built_at).toBeUndefined();
    expect(tarEntries(join(dir, '.forge-output/basic-agent-1.2.3.tgz'))).toEqual([...files.keys()].filter((p) => !p.endsWith('.tgz')).sort());
    expect(files.get('Dockerfile')!.toString()).toContain('python3');
  });

  it('gives byte-identical artifacts for the same inputs, even from another directory', async () => {
    const first = fixtureProject('basic');
    const second = fixtureProject('basic');
    expect(first).not.toBe(second);
    await build({ cwd: first, prod: true });
    await build({ cwd: second, prod: true });
    const a = readOutput(first);
    const b = readOutput(second);
    expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
    for (const [path, content] of a) expect(content.equals(b.get(path)!), path).toBe(true);
  });

  it('stamps the archive and build-manifest.json with SOURCE_DATE_EPOCH when it is set', async () => {
    const dir = fixtureProject('basic');
    process.env.SOURCE_DATE_EPOCH = '1700000000';
    try {
      await build({ cwd: dir, prod: true });
    } finally {
      delete process.env.SOURCE_DATE_EPOCH;
    }
    const buildManifest = JSON.parse(readFileSync(join(dir, '.forge-output/build-manifest.json'), 'utf8'));
    expect(buildManifest.built_at).toBe('2023-11-14T22:13:20.000Z');
    const listing = execFileSync('tar', ['tzvf', join(dir, '.forge-output/basic-agent-1.2.3.tgz'), '--utc'], { encoding: 'utf8' });
    expect(listing).toContain('2023-11-14 22:13');
  });

  it('writes to --out', async () => {
    const dir = fixtureProject('basic');
    const result = await build({ cwd: dir, prod: true, outDir: 'dist/agent' });
    expect(result.ok).toBe(true);
    expect(existsSync(join(dir, 'dist/agent/agent.json'))).toBe(true);
  });
});

describe('forge build: failures', () => {
  it('keeps the previous output when a build fails', async () => {
    const dir = fixtureProject('basic');
    await build({ cwd: dir, prod: true });
    const before = readFileSync(join(dir, '.forge-output/agent.json'), 'utf8');
    writeFileSync(join(dir, 'tools/broken.py'), '"""\nTool: broken\nDescription: d\nInput:\n  x (strng): X.\n"""\n');
    const result = await build({ cwd: dir, prod: true });
    expect(result.ok).toBe(false);
    expect(result.errors).toMatchObject([{ code: 'FORGE_DOCSTRING_TYPE', file: 'tools/broken.py', line: 5, column: 6 }]);
    expect(readFileSync(join(dir, '.forge-output/agent.json'), 'utf8')).toBe(before);
    expect(readdirSync(dir).filter((n) => n.includes('staging'))).toEqual([]);
  });

  const brokenPython = '"""\nTool: broken\nDescription: d\n"""\n\ndef execute(args):\n    return {"a": 1,, }\n';

  it('discards the output it made while the Python check ran, when the check fails', async () => {
    // The bundle and the emit stages finish first here; the check's verdict still decides.
    const dir = fixtureProject('basic');
    await build({ cwd: dir, prod: true });
    const before = readFileSync(join(dir, '.forge-output/agent.json'), 'utf8');
    writeFileSync(join(dir, 'tools/broken.py'), brokenPython);
    const result = await build({ cwd: dir, prod: true });
    expect(result.ok).toBe(false);
    expect(result.errors).toMatchObject([{ code: 'FORGE_PY_SYNTAX', file: 'tools/broken.py', line: 7, column: 20 }]);
    expect(result.timings.map((t) => t.stage)).toContain('emit-archive');
    expect(readFileSync(join(dir, '.forge-output/agent.json'), 'utf8')).toBe(before);
    expect(readdirSync(dir).filter((n) => n.includes('staging'))).toEqual([]);
  });

  it("reports the Python check's errors beside the bundler's, from one run", async () => {
    const dir = fixtureProject('basic');
    writeFileSync(join(dir, 'tools/broken.py'), brokenPython);
    writeFileSync(join(dir, 'tools/broken_ts.ts'), '/**\n * Tool: broken_ts\n * Description: d\n */\nexport function execute() {\n  return 1 +;\n}\n');
    const result = await build({ cwd: dir, prod: true });
    expect(result.ok).toBe(false);
    // Each under the code `forge validate` gives it: a file that does not parse is FORGE_SYNTAX, not the bundler's failure.
    expect(result.errors.map((e) => `${e.code} ${e.file}`).sort()).toEqual(['FORGE_PY_SYNTAX tools/broken.py', 'FORGE_SYNTAX tools/broken_ts.ts']);
  });

  it('writes the manifests while esbuild bundles, and takes the Python check\'s verdict last (the README\'s order)', async () => {
    const dir = fixtureProject('basic');
    const result = await build({ cwd: dir, prod: true });
    expect(result.ok).toBe(true);
    const stages = result.timings.map((t) => t.stage);
    for (const emitted of ['emit-manifest', 'emit-container', 'emit-kubernetes']) expect(stages.indexOf(emitted)).toBeLessThan(stages.indexOf('bundle-runtime'));
    expect(stages.indexOf('emit-archive')).toBeGreaterThan(stages.indexOf('bundle-runtime'));
    expect(stages.at(-1)).toBe('check-sources');
  });

  it('stops after the stage that reported errors', async () => {
    const dir = fixtureProject('basic');
    writeFileSync(join(dir, 'tools/broken.py'), '"""\nTool: broken\n"""\n');
    const result = await build({ cwd: dir, prod: true });
    expect(result.timings.map((t) => t.stage)).toEqual(['load-config', 'discover-tools', 'parse-docstrings']);
    expect(existsSync(join(dir, '.forge-output'))).toBe(false);
  });

  it('refuses to replace a directory it did not create', async () => {
    const dir = fixtureProject('basic');
    mkdirSync(join(dir, 'precious'));
    writeFileSync(join(dir, 'precious/notes.txt'), 'keep me');
    const result = await build({ cwd: dir, outDir: 'precious' });
    expect(result.errors).toMatchObject([{ code: 'FORGE_OUT_DIR' }]);
    expect(readFileSync(join(dir, 'precious/notes.txt'), 'utf8')).toBe('keep me');
  });

  it('refuses an output directory that holds the project', async () => {
    const dir = fixtureProject('basic');
    expect((await build({ cwd: dir, outDir: '.' })).errors).toMatchObject([{ code: 'FORGE_OUT_DIR' }]);
  });

  it.each([
    ['inside a tool directory', 'tools/out', /overlaps the tool directory tools/],
    ['that is a tool directory', 'tools', /overlaps the tool directory tools/],
    ['that is a file', 'forge.yaml', /is a file/],
  ])('refuses an output directory %s, and the project still builds after', async (_name, outDir, message) => {
    const dir = fixtureProject('basic');
    const before = readFileSync(join(dir, 'forge.yaml'), 'utf8');
    const refused = await build({ cwd: dir, outDir });
    expect(refused.errors).toMatchObject([{ code: 'FORGE_OUT_DIR', message: expect.stringMatching(message) }]);
    expect(readFileSync(join(dir, 'forge.yaml'), 'utf8')).toBe(before);
    expect((await build({ cwd: dir })).ok).toBe(true);
  });

  it('names both sources when a custom tool takes a builtin\'s name', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n'),
      'tools/uuid.py': '"""\nTool: uuid_generate\nDescription: mine\n"""\n',
    });
    const result = await build({ cwd: dir });
    expect(result.errors).toHaveLength(1);
    // The error is at one definition; the other is a note with its own location (esbuild's notes).
    expect(result.errors[0]).toMatchObject({
      code: 'FORGE_TOOL_COLLISION',
      message: 'tool "uuid_generate" is defined twice',
      notes: expect.arrayContaining([expect.objectContaining({ file: 'forge.yaml', line: 5, column: 5 })]),
    });
    const places = [result.errors[0], ...result.errors[0].notes!].map((p) => `${p.file}:${p.line}`);
    expect(places).toEqual(expect.arrayContaining(['tools/uuid.py:2', 'forge.yaml:5']));
    expect(result.errors[0].notes!.some((n) => n.text.includes('builtin tool'))).toBe(true);
  });

  it('names both files when two custom tools share a name', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/a.py': '"""\nTool: same\nDescription: a\n"""\n',
      'tools/b.ts': '/**\n * Tool: same\n * Description: b\n */\nexport function execute() {}\n',
    });
    const result = await build({ cwd: dir });
    // Both places point at the name, with its line to show under a caret.
    expect(result.errors[0]).toMatchObject({
      message: 'tool "same" is defined twice',
      file: 'tools/b.ts',
      line: 2,
      column: 10,
      lineText: ' * Tool: same',
      notes: [{ text: 'first defined here', file: 'tools/a.py', line: 2, column: 7, lineText: 'Tool: same' }],
    });
  });

  it('points at an unknown tool in forge.yaml with a suggestion', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generat\n') });
    const result = await build({ cwd: dir });
    expect(result.errors).toMatchObject([{ code: 'FORGE_CONFIG_UNKNOWN_TOOL', file: 'forge.yaml', line: 5, column: 5, hint: 'did you mean "uuid_generate"?' }]);
  });

  it('points at tools named like what every object has (constructor, toString, __proto__) as unknown tools, not a crash', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - constructor\n  - toString\n  - __proto__\n') });
    const result = await build({ cwd: dir });
    expect(result.errors).toMatchObject([5, 6, 7].map((line) => ({ code: 'FORGE_CONFIG_UNKNOWN_TOOL', file: 'forge.yaml', line, column: 5 })));
  });

  it('explains that custom tools need not be listed in tools:', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - mine\n'), 'tools/mine.py': '"""\nTool: mine\nDescription: m\n"""\n' });
    const result = await build({ cwd: dir });
    expect(result.errors[0].hint).toContain('always included');
  });

  it('refuses config for a tool that takes none', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - name: uuid_generate\n    config: { x: 1 }\n') });
    expect((await build({ cwd: dir })).errors).toMatchObject([{ code: 'FORGE_CONFIG_TOOL', line: 6, column: 5 }]);
  });

  it('reports an import that is not there at its file:line:column, saying what to do (never to mark it external)', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/bad.ts': "/**\n * Tool: bad\n * Description: d\n */\nimport { nothing } from './missing.ts';\nimport pad from '@acme/left-pad/deep';\nexport function execute() { return pad(nothing); }\n",
    });
    const result = await build({ cwd: dir });
    expect(result.errors).toMatchObject([
      { code: 'FORGE_IMPORT', file: 'tools/bad.ts', line: 5, column: 25, message: 'Could not resolve "./missing.ts"', hint: expect.stringContaining('check the path') },
      { code: 'FORGE_IMPORT', file: 'tools/bad.ts', line: 6, column: 17, hint: 'install it in the project (npm install @acme/left-pad), or check its name' },
    ]);
    expect(JSON.stringify(result.errors)).not.toContain('external');
  });

  it('warns about a tool directory listed in forge.yaml that does not exist', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tool_dirs: [tools, nowhere]\n'), 'tools/.keep': '' });
    const result = await build({ cwd: dir });
    expect(result.ok).toBe(true);
    expect(result.warnings).toMatchObject([{ code: 'FORGE_TOOL_DIR_MISSING', line: 4, hint: 'create it, or remove it from tool_dirs' }]);
  });

  it('names the folder a missing tool directory is likely a misspelling of', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tool_dirs: [tool]\n'), 'tools/.keep': '' });
    const result = await build({ cwd: dir });
    expect(result.warnings).toMatchObject([{ code: 'FORGE_TOOL_DIR_MISSING', line: 4, column: 13, hint: 'did you mean "tools"? (that folder is there; or create "tool")' }]);
  });

  it('builds a project with no tools at all', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig() });
    const result = await build({ cwd: dir, prod: true });
    expect(result.ok).toBe(true);
    expect(result.warnings).toEqual([]);
    expect(statSync(join(dir, '.forge-output/runtime.mjs')).size).toBeGreaterThan(0);
  });
});
