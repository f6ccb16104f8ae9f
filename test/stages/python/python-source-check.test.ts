import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkPythonSources } from '../../../stages/python/python-source-check.ts';
import { tempDir } from '../../helpers/project.ts';

/** The interpreter this machine's python3 really is (past any shim). */
const realPython = execFileSync('python3', ['-c', 'import sys; sys.stdout.write(sys.executable)'], { encoding: 'utf8' });

function projectWithBrokenTool(): { root: string; file: string } {
  const root = tempDir();
  const file = join(root, 'broken.py');
  writeFileSync(file, 'def execute(args):\n    return (\n');
  return { root, file };
}

describe("the build's Python check", () => {
  it('starts one interpreter: the check itself runs through a shim (not an ask for the interpreter first), and names the one behind it', async () => {
    const { root, file } = projectWithBrokenTool();
    const bin = tempDir();
    const log = join(bin, 'shim.log');
    writeFileSync(join(bin, 'python3'), `#!/bin/sh\necho "$1 $2" >> ${log}\nexec ${realPython} "$@"\n`);
    chmodSync(join(bin, 'python3'), 0o755);
    const diagnostics = await checkPythonSources({ root, files: [file], toolDirs: [root], cwd: root, env: { PATH: `${bin}:/usr/bin:/bin` } });
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ code: 'FORGE_PY_SYNTAX', file: 'broken.py', line: 2 });
    expect(diagnostics[0].hint).toContain(`(${realPython}) cannot compile this file`);
    expect(readFileSync(log, 'utf8')).toBe('-I -S\n');
  });

  it('warns that Python files are not checked when there is no Python, and fails nothing', async () => {
    const { root, file } = projectWithBrokenTool();
    const diagnostics = await checkPythonSources({ root, files: [file], toolDirs: [root], cwd: root, env: { PATH: tempDir() } });
    expect(diagnostics).toEqual([expect.objectContaining({ severity: 'warning', code: 'FORGE_PY_CHECK', message: expect.stringContaining('no Python 3 interpreter found on PATH') })]);
  });

  it('checks with FORGE_PYTHON when it is set', async () => {
    const { root, file } = projectWithBrokenTool();
    const diagnostics = await checkPythonSources({ root, files: [file], toolDirs: [root], cwd: root, env: { PATH: tempDir(), FORGE_PYTHON: realPython } });
    expect(diagnostics[0]).toMatchObject({ code: 'FORGE_PY_SYNTAX', hint: expect.stringContaining(`(${realPython})`) });
  });
});
