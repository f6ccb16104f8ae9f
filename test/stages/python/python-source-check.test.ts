import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkPythonSources, PYTHON_CHECK_SCRIPT } from '../../../stages/python/python-source-check.ts';
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

  it('reports each undeclared import where it is written, leaves out the guarded ones, and keeps names and lines beyond ASCII intact', async () => {
    const root = tempDir();
    const file = join(root, 'tool.py');
    writeFileSync(
      file,
      [
        'import os, requests',
        'import typing',
        'if typing.TYPE_CHECKING:',
        '    import numpy',
        'try:',
        '    import ujson',
        'except (ValueError, ImportError):',
        '    ujson = None',
        'try:',
        '    import lxml',
        'except KeyError:',
        '    pass',
        'from . import sibling',
        'import sys',
        'if sys.platform == "plan9":',
        '    import lxml2',
        'def execute(args):',
        '    import café',
        '    return {}',
        '',
      ].join('\n'),
    );
    const broken = join(root, 'brökèn.py');
    writeFileSync(broken, 'greeting = "héllo"\ndef execute(args):\n    return ("héllo",\n');
    const diagnostics = await checkPythonSources({ root, files: [file, broken], toolDirs: [root], cwd: root, env: { PATH: process.env.PATH } });
    expect(diagnostics.map(({ code, file, line, column, message, lineText }) => ({ code, file, line, column, message, lineText }))).toEqual([
      { code: 'FORGE_PY_IMPORT', file: 'tool.py', line: 1, column: 1, message: '"requests" is neither in the standard library nor declared', lineText: 'import os, requests' },
      { code: 'FORGE_PY_IMPORT', file: 'tool.py', line: 10, column: 5, message: '"lxml" is neither in the standard library nor declared', lineText: '    import lxml' },
      { code: 'FORGE_PY_IMPORT', file: 'tool.py', line: 16, column: 5, message: '"lxml2" is neither in the standard library nor declared', lineText: '    import lxml2' },
      { code: 'FORGE_PY_IMPORT', file: 'tool.py', line: 18, column: 5, message: '"café" is neither in the standard library nor declared', lineText: '    import café' },
      { code: 'FORGE_PY_SYNTAX', file: 'brökèn.py', line: 3, column: 12, message: "'(' was never closed", lineText: '    return ("héllo",' },
    ]);
  });

  it('answers the same on a Python without CPython\'s _json accelerator: it falls back to the json package', () => {
    const root = tempDir();
    const file = join(root, 'tool.py');
    writeFileSync(file, 'import requests\nif TYPE_CHECKING:\n    import numpy\nimport café\n');
    const broken = join(root, 'brökèn.py');
    writeFileSync(broken, 'def execute(args):\n    return ("é",\n');
    const request = JSON.stringify({ files: [file, broken], venv: false, inline: [{ id: '0', text: 'import yaml\nx = ("ü",', syntax: true }] });
    // Each run also says, on stderr, whether the json package was imported.
    const run = (prelude: string) => {
      const ran = spawnSync(realPython, ['-I', '-S', '-c', `${prelude}\nexec(sys.argv[1])\nsys.stderr.write("json imported" if "json" in sys.modules else "json not imported")`, PYTHON_CHECK_SCRIPT], { input: request, encoding: 'utf8' });
      return { answer: JSON.parse(ran.stdout), stderr: ran.stderr };
    };
    const { answer: accelerated, stderr: acceleratedSaid } = run('import sys');
    const { answer: fallback, stderr: fallbackSaid } = run("import sys; sys.modules['_json'] = None");
    expect([acceleratedSaid, fallbackSaid]).toEqual(['json not imported', 'json imported']);
    expect(fallback).toEqual(accelerated);
    expect(accelerated.results).toEqual([
      { file, imports: [{ name: 'requests', line: 1, col: 1 }, { name: 'café', line: 4, col: 1 }] },
      { file: broken, imports: [], syntax: { msg: "'(' was never closed", line: 2, col: 12, text: '    return ("é",' } },
    ]);
    expect(accelerated.inline).toEqual([{ file: '0', imports: [], syntax: { msg: "'(' was never closed", line: 2, col: 5, text: 'x = ("ü",' } }]);
  });
});
