import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolvePython } from '../../../../runtime/tools/custom/python-interpreter.ts';
import { tempDir } from '../../../helpers/project.ts';

/** The interpreter this machine's python3 really is (past any shim). */
const realPython = execFileSync('python3', ['-c', 'import sys; sys.stdout.write(sys.executable)'], { encoding: 'utf8' });

describe('resolvePython', () => {
  it('takes a python3 on PATH that links to a compiled program as found, without starting it', async () => {
    // /bin/true stands in for the interpreter: asked for sys.executable, it would answer nothing.
    const dir = tempDir();
    symlinkSync('/bin/true', join(dir, 'python3'));
    expect(await resolvePython({ PATH: dir })).toBe(join(dir, 'python3'));
  });

  it("keeps a virtualenv's python as itself (the link, not its target), so the environment applies", async () => {
    const dir = tempDir();
    symlinkSync(realPython, join(dir, 'python3'));
    const found = await resolvePython({ PATH: dir });
    expect(found).toBe(join(dir, 'python3'));
    expect(execFileSync(found, ['-c', 'print(6 * 7)'], { encoding: 'utf8' }).trim()).toBe('42');
  });

  it('asks a script shim (pyenv, asdf) for the interpreter it runs, and starts tools with that one', async () => {
    const dir = tempDir();
    const log = join(dir, 'shim.log');
    writeFileSync(join(dir, 'python3'), `#!/bin/sh\necho ran >> ${log}\nexec ${realPython} "$@"\n`);
    chmodSync(join(dir, 'python3'), 0o755);
    expect(await resolvePython({ PATH: dir })).toBe(realPython);
    expect(readFileSync(log, 'utf8')).toBe('ran\n');
  });

  it('asks FORGE_PYTHON whether it is a working Python 3, and says so when it is not', async () => {
    await expect(resolvePython({ FORGE_PYTHON: '/bin/true', PATH: '' })).rejects.toThrow('FORGE_PYTHON=/bin/true is not a working Python interpreter');
  });

  it('says no Python was found when PATH has none', async () => {
    await expect(resolvePython({ PATH: tempDir() })).rejects.toThrow(/no Python 3 interpreter found on PATH/);
  });
});
