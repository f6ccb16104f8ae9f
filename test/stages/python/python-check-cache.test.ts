/**
 * The Python check's cache (stages/python/python-check-cache.ts): the
 * compiled CLI keeps what the interpreter found in each file, and a check
 * of files it has all seen starts no interpreter. The tests plant findings
 * no interpreter would give (a syntax error in a file that compiles, an
 * interpreter version that does not exist) to see which command read the
 * cache, and stand `node` in for python3 (a program that fails as Python)
 * to see which command started it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileKeys, interpreterStamp, PythonCheckCache } from '../../../stages/python/python-check-cache.ts';
import { forge, minimalConfig, tempDir, writeProject } from '../../helpers/project.ts';

/** The interpreter this machine's python3 really is (past any shim). */
const realPython = execFileSync('python3', ['-c', 'import sys; sys.stdout.write(sys.executable)'], { encoding: 'utf8' });

const TOOL = '"""\nTool: add\nDescription: Adds one.\nTags: read\n\nInput:\n  n (int): A number.\n"""\nimport os\n\n\ndef execute(args):\n    return {"n": args["n"] + 1}\n';

interface CacheData {
  maker: string;
  entries: Record<string, { syntax?: object; imports?: object[]; version?: string; executable?: string }>;
}

/** The project's python-check file in `cacheDir`, parsed. */
function cacheFile(cacheDir: string): { path: string; data: CacheData } {
  const dir = join(cacheDir, 'python-check');
  const names = readdirSync(dir);
  expect(names).toHaveLength(1);
  const path = join(dir, names[0]);
  return { path, data: JSON.parse(readFileSync(path, 'utf8')) };
}

/** Gives every kept file a syntax error no interpreter would find in it, and the interpreter `facts`. */
function plant(cacheDir: string, facts: { version?: string; executable?: string } = {}, maker?: string): void {
  const { path, data } = cacheFile(cacheDir);
  const files = Object.keys(data.entries).filter((key) => key.startsWith('file:'));
  expect(files.length).toBeGreaterThan(0);
  for (const key of files) data.entries[key] = { syntax: { msg: 'PLANTED', line: 1, col: 1, text: '' }, imports: [] };
  Object.assign(data.entries.interpreter, facts);
  writeFileSync(path, JSON.stringify({ ...data, maker: maker ?? data.maker }));
}

/** A folder holding `python3`, a link to `target`, to put first on PATH. */
function pythonLink(target: string): { bin: string; point(to: string): void } {
  const bin = tempDir('forge-python-bin-');
  const point = (to: string) => {
    rmSync(join(bin, 'python3'), { force: true });
    symlinkSync(to, join(bin, 'python3'));
  };
  point(target);
  return { bin, point };
}

async function validate(project: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const result = await forge(['validate'], project, env);
  return { code: result.code, output: result.stdout + result.stderr };
}

describe("the Python check's cache", () => {
  it('gives a file checked before its kept findings in validate, build and tool run, and checks an edited file again', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/add.py': TOOL });
    const env = { FORGE_CACHE_DIR: tempDir('forge-cache-') };
    expect((await validate(project, env)).code).toBe(0);
    plant(env.FORGE_CACHE_DIR);
    const planted = await validate(project, env);
    expect(planted.code).toBe(1);
    expect(planted.output).toMatch(/tools\/add\.py:1:1 FORGE_PY_SYNTAX PLANTED/);
    const build = await forge(['build', '--prod'], project, env);
    expect(build.code).toBe(1);
    expect(build.stderr).toContain('PLANTED');
    const run = await forge(['tool', 'run', 'add', '{"n": 1}'], project, env);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('PLANTED');
    // An edit: the file's sha256 changes, and the findings kept for the old text are not the new text's.
    appendFileSync(join(project, 'tools', 'add.py'), '# edited\n');
    expect(await validate(project, env)).toMatchObject({ code: 0 });
    expect((await forge(['tool', 'run', 'add', '{"n": 1}'], project, env)).stdout).toContain('"n": 2');
  });

  it("files a shim's first check under the interpreter it reports, which the next check, knowing the answer, finds without a start", async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/add.py': TOOL });
    const manager = tempDir('forge-pyenv-');
    mkdirSync(join(manager, 'shims'));
    const log = join(manager, 'shim.log');
    writeFileSync(join(manager, 'shims', 'python3'), `#!/bin/sh\necho ran >> ${log}\nexec ${realPython} "$@"\n`);
    chmodSync(join(manager, 'shims', 'python3'), 0o755);
    const env = { FORGE_CACHE_DIR: tempDir('forge-cache-'), PATH: `${join(manager, 'shims')}:/usr/bin:/bin`, HOME: manager };
    expect((await validate(project, env)).code).toBe(0);
    expect(readFileSync(log, 'utf8')).toBe('ran\n');
    plant(env.FORGE_CACHE_DIR);
    const cached = await validate(project, env);
    expect(cached.output).toContain('PLANTED');
    // Neither the shim nor (the planted finding says) the interpreter behind it ran.
    expect(readFileSync(log, 'utf8')).toBe('ran\n');
  });

  it('checks again, and fails nothing, when a kept entry is not in the shape a check gives', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/add.py': TOOL, 'tools/helper.py': 'VALUE = 1\n' });
    const env = { FORGE_CACHE_DIR: tempDir('forge-cache-') };
    expect((await validate(project, env)).code).toBe(0);
    const { path, data } = cacheFile(env.FORGE_CACHE_DIR);
    const [first, second] = [TOOL, 'VALUE = 1\n'].map((text) => `file:${createHash('sha256').update(text).digest('hex')}`);
    expect(Object.keys(data.entries)).toEqual(expect.arrayContaining([first, second]));
    // Entries another program (or a torn write) could leave: a finding whose import is not an object, a syntax error without a line.
    const damaged = { ...data.entries, [first]: { imports: ['os'] }, [second]: { imports: [], syntax: { msg: 'PLANTED' } }, interpreter: { ...data.entries.interpreter, stdlib: 5 } };
    writeFileSync(path, JSON.stringify({ ...data, entries: damaged }));
    const checked = await validate(project, env);
    expect(checked.code, checked.output).toBe(0);
    expect(checked.output).not.toContain('PLANTED');
    // And what the check found replaced them.
    const rewritten = cacheFile(env.FORGE_CACHE_DIR).data.entries;
    expect(rewritten[first]).toEqual({ imports: [{ name: 'os', line: 9, col: 1 }] });
    expect(rewritten[second]).toEqual({ imports: [] });
    expect(Array.isArray((rewritten.interpreter as { stdlib: unknown }).stdlib)).toBe(true);
  });

  it('starts no interpreter when it has every file, and starts it for a file it has not seen', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/add.py': TOOL });
    const python = pythonLink(realPython);
    const env = { FORGE_CACHE_DIR: tempDir('forge-cache-'), PATH: `${python.bin}:${process.env.PATH}` };
    expect((await validate(project, env)).code).toBe(0);
    // python3 becomes node, which fails as Python: the findings are filed for it as if it had checked them.
    python.point(process.execPath);
    const cli = cacheFile(env.FORGE_CACHE_DIR).data.maker.split('|')[0];
    const stamped = join(python.bin, 'python3');
    plant(env.FORGE_CACHE_DIR, { version: '9.99', executable: stamped }, `${cli}|${interpreterStamp(stamped)!.stamp}`);
    const cached = await validate(project, env);
    expect(cached.output).toContain('PLANTED');
    // The interpreter's facts come from the cache too: a check that ran would report another version.
    expect(cached.output).toContain(`Python 9.99 (${stamped}) cannot compile this file`);
    expect(cached.output).not.toContain('FORGE_PY_CHECK');
    // A file the cache has not seen is checked, and node fails the check.
    writeFileSync(join(project, 'tools', 'helper.py'), 'VALUE = 1\n');
    const started = await validate(project, env);
    expect(started.output).toContain('FORGE_PY_CHECK');
    expect(started.output).toContain('Python files are not checked');
  });

  it("never takes findings another interpreter made, and checks again when a project venv's packages change", async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/add.py': TOOL });
    const python = pythonLink(realPython);
    const env = { FORGE_CACHE_DIR: tempDir('forge-cache-'), PATH: `${python.bin}:${process.env.PATH}` };
    expect((await validate(project, env)).code).toBe(0);
    plant(env.FORGE_CACHE_DIR);
    expect((await validate(project, env)).output).toContain('PLANTED');
    python.point(process.execPath);
    const other = await validate(project, env);
    expect(other.output).not.toContain('PLANTED');
    expect(other.output).toContain('FORGE_PY_CHECK');

    // The project venv (forge tool run makes it for declared packages) checks with its own interpreter.
    python.point(realPython);
    const venv = join(project, '.forge', 'python-venv');
    execFileSync(realPython, ['-m', 'venv', '--without-pip', venv]);
    const venvCache = { ...env, FORGE_CACHE_DIR: tempDir('forge-cache-') };
    expect((await validate(project, venvCache)).code).toBe(0);
    plant(venvCache.FORGE_CACHE_DIR);
    expect((await validate(project, venvCache)).output).toContain('PLANTED');
    // A package installed into it (a new folder in site-packages) may provide an import: the files are checked again.
    const sitePackages = readdirSync(join(venv, 'lib')).map((name) => join(venv, 'lib', name, 'site-packages'));
    mkdirSync(join(sitePackages[0], 'newly_installed'));
    expect(await validate(project, venvCache)).toMatchObject({ code: 0 });
    // So may the venv's settings (include-system-site-packages): pyvenv.cfg is in the stamp too.
    plant(venvCache.FORGE_CACHE_DIR);
    expect((await validate(project, venvCache)).output).toContain('PLANTED');
    appendFileSync(join(venv, 'pyvenv.cfg'), 'include-system-site-packages = true\n');
    expect(await validate(project, venvCache)).toMatchObject({ code: 0 });
  }, 60_000);

  it('decides whether an import is declared on every check, from the declarations and the modules beside the tool as they are now', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/fetch.py': TOOL.replace('import os', 'import shortcuts') });
    const env = { FORGE_CACHE_DIR: tempDir('forge-cache-') };
    const undeclared = /tools\/fetch\.py:9:1 FORGE_PY_IMPORT "shortcuts" is neither in the standard library nor declared/;
    expect((await validate(project, env)).output).toMatch(undeclared);
    // A module beside the tool provides it: the kept findings (the file is unchanged) are judged again.
    writeFileSync(join(project, 'tools', 'shortcuts.py'), 'VALUE = 1\n');
    const beside = await validate(project, env);
    expect(beside.code, beside.output).toBe(0);
    expect(beside.output).not.toContain('FORGE_PY_IMPORT');
    rmSync(join(project, 'tools', 'shortcuts.py'));
    expect((await validate(project, env)).output).toMatch(undeclared);
    // A declared package provides it too (requirements.txt beside forge.yaml).
    writeFileSync(join(project, 'requirements.txt'), 'shortcuts\n');
    expect((await validate(project, env)).output).not.toContain('FORGE_PY_IMPORT');
  });

  it('checks the files it has not seen and takes the rest from the cache, in the order given, inline python: steps too', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/add.py': TOOL, 'tools/report.yaml': 'description: A report.\ntags: [read]\nparameters:\n  sym: { type: string }\npython: |\n  x = {sym}\n  print(x)\n' });
    const env = { FORGE_CACHE_DIR: tempDir('forge-cache-') };
    expect((await validate(project, env)).code).toBe(0);
    // Both the file's and the python: step's findings are kept: each gets a planted syntax error.
    const { path, data } = cacheFile(env.FORGE_CACHE_DIR);
    const kept = Object.keys(data.entries).filter((key) => key !== 'interpreter');
    expect(kept.map((key) => key.split(':')[0]).sort()).toEqual(['file', 'inline']);
    for (const key of kept) data.entries[key] = { syntax: { msg: `PLANTED ${key.split(':')[0]}`, line: 1, col: 1, text: '' }, imports: [] };
    writeFileSync(path, JSON.stringify(data));
    // A new file with a real syntax error: the interpreter checks it alone, and the report has all three.
    writeFileSync(join(project, 'tools', 'broken_helper.py'), 'def execute(args):\n    return (\n');
    const mixed = await validate(project, env);
    expect(mixed.code).toBe(1);
    expect(mixed.output).toContain('tools/add.py:1:1 FORGE_PY_SYNTAX PLANTED file');
    expect(mixed.output).toMatch(/tools\/report\.yaml:\d+:\d+ FORGE_PY_SYNTAX PLANTED inline/);
    expect(mixed.output).toMatch(/tools\/broken_helper\.py:2:12 FORGE_PY_SYNTAX '\(' was never closed/);
    // And the new file's findings are kept beside the planted ones.
    expect(Object.keys(cacheFile(env.FORGE_CACHE_DIR).data.entries)).toHaveLength(4);
  });

  it("keeps nothing from a check through a launcher (sys.executable is not the file PATH names), and takes no such findings", () => {
    const root = tempDir();
    const file = join(root, 'tool.py');
    writeFileSync(file, 'VALUE = 1\n');
    const cacheDir = tempDir('forge-cache-');
    const facts = (executable: string) => ({ stdlib: ['os'], installed: {}, version: '3.99', executable });
    const request = { files: [file], inline: [] };
    const open = () => PythonCheckCache.open(root, realPython, undefined, cacheDir, 'cli-1')!;
    // What a launcher reports: the Python it started, another file than the one stamped.
    open().store(request, facts(process.execPath), new Map([[file, { imports: [] }]]), new Map(), fileKeys([file]));
    expect(existsSync(join(cacheDir, 'python-check'))).toBe(false);
    // The interpreter itself (reported by any path that leads to it) is kept, and found again.
    open().store(request, facts(realPython), new Map([[file, { imports: [] }]]), new Map(), fileKeys([file]));
    const found = open().lookup(request);
    expect(found.facts?.version).toBe('3.99');
    expect(found.missing.files).toEqual([]);
    // Facts planted under the stamp but naming another program are not taken.
    const { path, data } = cacheFile(cacheDir);
    writeFileSync(path, JSON.stringify({ ...data, entries: { ...data.entries, interpreter: facts(process.execPath) } }));
    expect(open().lookup(request).facts).toBeUndefined();
  });

  it('files nothing for a file saved while the interpreter read it (either text may be what it checked)', () => {
    const root = tempDir();
    const file = join(root, 'tool.py');
    writeFileSync(file, 'def execute(args):\n    return (\n');
    const cacheDir = tempDir('forge-cache-');
    const facts = { stdlib: ['os'], installed: {}, version: '3.99', executable: realPython };
    const request = { files: [file], inline: [] };
    const open = () => PythonCheckCache.open(root, realPython, undefined, cacheDir, 'cli-1')!;
    const before = open().lookup(request);
    expect(before.missing.files).toEqual([file]);
    // The broken text was checked; the fix was saved before the findings were kept.
    const broken = { syntax: { msg: "'(' was never closed", line: 2, col: 12, text: '    return (' }, imports: [] };
    writeFileSync(file, 'def execute(args):\n    return 1\n');
    open().store(request, facts, new Map([[file, broken]]), new Map(), before.keys);
    expect(open().lookup(request).missing.files).toEqual([file]);
    // Written back as it was when looked up, it is still not filed: nothing was kept for either text.
    writeFileSync(file, 'def execute(args):\n    return (\n');
    expect(open().lookup(request).missing.files).toEqual([file]);
  });
});
