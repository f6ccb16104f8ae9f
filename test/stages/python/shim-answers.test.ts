import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shimAnswersIn } from '../../../stages/python/shim-answers.ts';
import { forge, minimalConfig, tempDir, writeProject } from '../../helpers/project.ts';

/** The interpreter this machine's python3 really is (past any shim). */
const realPython = execFileSync('python3', ['-c', 'import sys; sys.stdout.write(sys.executable)'], { encoding: 'utf8' });

/**
 * A version manager laid out as pyenv is: `shims/python3` is a shell script
 * that chooses a version (PYENV_VERSION, else `.python-version` from the
 * working directory up, else the root's `version` file) and runs
 * `versions/<v>/bin/python3`. Every run of the shim is logged.
 */
function versionManager() {
  const root = tempDir('forge-pyenv-');
  for (const version of ['a', 'b']) {
    mkdirSync(join(root, 'versions', version, 'bin'), { recursive: true });
    symlinkSync(realPython, join(root, 'versions', version, 'bin', 'python3'));
  }
  writeFileSync(join(root, 'version'), 'a\n');
  mkdirSync(join(root, 'shims'));
  const shim = join(root, 'shims', 'python3');
  const log = join(root, 'shim.log');
  writeFileSync(
    shim,
    `#!/bin/bash
echo ran >> ${log}
v="$PYENV_VERSION"
d="$PWD"
while [ -z "$v" ]; do
  if [ -f "$d/.python-version" ]; then v=$(cat "$d/.python-version"); fi
  if [ "$d" = / ]; then break; fi
  d=$(dirname "$d")
done
[ -n "$v" ] || v=$(cat ${root}/version)
exec ${root}/versions/$v/bin/python3 "$@"
`,
  );
  chmodSync(shim, 0o755);
  const env = { PATH: `${join(root, 'shims')}:/usr/bin:/bin`, HOME: root };
  return { root, shim, env, runs: () => readFileSync(log, 'utf8').split('\n').filter(Boolean).length };
}

/** What the shim runs, asked as resolvePython asks it. */
function ask(shim: string, env: NodeJS.ProcessEnv, cwd: string): string {
  return execFileSync(shim, ['-c', 'import sys; sys.stdout.write(sys.executable)'], { env, cwd, encoding: 'utf8' });
}

describe('shim answers kept between commands', () => {
  it("keeps a shim's answer, filed under what the manager chose it from", () => {
    const manager = versionManager();
    const store = shimAnswersIn(tempDir());
    const cwd = tempDir();
    const first = store.open(manager.shim, manager.env, cwd)!;
    expect(first.executable).toBeUndefined();
    first.remember!(ask(manager.shim, manager.env, cwd));
    expect(store.open(manager.shim, manager.env, cwd)?.executable).toBe(join(manager.root, 'versions', 'a', 'bin', 'python3'));
  });

  // Each change below makes the manager choose again (or may): a kept answer must not outlive it.
  const changes: Record<string, (m: ReturnType<typeof versionManager>, cwd: string) => NodeJS.ProcessEnv | void> = {
    'a .python-version written in the working directory': (_, cwd) => writeFileSync(join(cwd, '.python-version'), 'b\n'),
    'a .python-version written in a folder above it': (_, cwd) => writeFileSync(join(cwd, '..', '.python-version'), 'b\n'),
    'a .tool-versions written in the working directory (asdf)': (_, cwd) => writeFileSync(join(cwd, '.tool-versions'), 'python b\n'),
    "the manager's global version changed": (m) => writeFileSync(join(m.root, 'version'), 'b\n'),
    "asdf's config changed (legacy_version_file)": (m) => writeFileSync(join(m.root, '.asdfrc'), 'legacy_version_file = yes\n'),
    'a version installed': (m) => mkdirSync(join(m.root, 'versions', 'c')),
    'PYENV_VERSION set': (m) => ({ ...m.env, PYENV_VERSION: 'b' }),
    'PATH changed': (m) => ({ ...m.env, PATH: `${m.env.PATH}:/usr/local/bin` }),
    'the shim rewritten (pyenv rehash)': (m) => writeFileSync(m.shim, readFileSync(m.shim, 'utf8') + '\n'),
    'the interpreter it named replaced': (m) => {
      rmSync(join(m.root, 'versions', 'a', 'bin', 'python3'));
      symlinkSync('/bin/true', join(m.root, 'versions', 'a', 'bin', 'python3'));
    },
  };
  it.each(Object.keys(changes))('asks again after %s', (change) => {
    const manager = versionManager();
    const store = shimAnswersIn(tempDir());
    const cwd = join(tempDir(), 'project');
    mkdirSync(cwd);
    store.open(manager.shim, manager.env, cwd)!.remember!(ask(manager.shim, manager.env, cwd));
    expect(store.open(manager.shim, manager.env, cwd)?.executable).toBeDefined();
    const env = changes[change]!(manager, cwd) ?? manager.env;
    expect(store.open(manager.shim, env, cwd)?.executable).toBeUndefined();
  });

  it('keeps nothing for a script that is not in a shims folder', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'python3'), `#!/bin/sh\nexec ${realPython} "$@"\n`);
    expect(shimAnswersIn(tempDir()).open(join(dir, 'python3'), { PATH: dir }, dir)).toBeUndefined();
  });

  it('ignores a kept answer that is not one (a damaged or planted file)', () => {
    const manager = versionManager();
    const cache = tempDir();
    const store = shimAnswersIn(cache);
    const cwd = tempDir();
    store.open(manager.shim, manager.env, cwd)!.remember!(ask(manager.shim, manager.env, cwd));
    const [entry] = execFileSync('ls', [join(cache, 'python-shims')], { encoding: 'utf8' }).split('\n');
    for (const text of ['{"executable": 42}', 'not json', JSON.stringify({ executable: '/bin/true', stamp: 'forged' })]) {
      writeFileSync(join(cache, 'python-shims', entry!), text);
      expect(store.open(manager.shim, manager.env, cwd)?.executable).toBeUndefined();
    }
  });
});

describe('forge with a version-managed python3', () => {
  const tool = `"""
Tool: which_python
Description: Says which interpreter runs it.
"""
import sys


def execute(args):
    return {"executable": sys.executable}
`;

  it('asks the shim once across commands, and again when the project picks another version', async () => {
    const manager = versionManager();
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/which_python.py': tool });
    const run = async () => {
      // This manager's versions live under /tmp, which the tool sandbox replaces with its own: the sandbox is off here.
      const result = await forge(['tool', 'run', 'which_python'], project, { ...manager.env, FORGE_SANDBOX: 'off' });
      expect(result.code, result.stderr).toBe(0);
      return (JSON.parse(result.stdout) as { executable: string }).executable;
    };
    expect(await run()).toBe(join(manager.root, 'versions', 'a', 'bin', 'python3'));
    expect(manager.runs()).toBe(1);
    expect(await run()).toBe(join(manager.root, 'versions', 'a', 'bin', 'python3'));
    expect(manager.runs()).toBe(1);
    writeFileSync(join(project, '.python-version'), 'b\n');
    expect(await run()).toBe(join(manager.root, 'versions', 'b', 'bin', 'python3'));
    expect(manager.runs()).toBe(2);
  });

  it("runs a build's source check with the kept interpreter, not the shim", async () => {
    const manager = versionManager();
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/which_python.py': tool });
    for (let build = 0; build < 2; build++) {
      rmSync(join(project, '.forge'), { recursive: true, force: true }); // each build checks its sources
      const result = await forge(['build'], project, manager.env);
      expect(result.code, result.stderr).toBe(0);
    }
    expect(manager.runs()).toBe(1);
  });
});
