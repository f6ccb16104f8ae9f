/**
 * Syntax and imports at validate and build: Python compiled by the
 * interpreter the tools run with, TS/JS parsed by esbuild, imports checked
 * against the standard library, the tool's own modules and the declared
 * packages — each problem at its file:line:column.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localWheel, pipFrom } from '../helpers/python-wheel.ts';
import { forge, minimalConfig, writeProject } from '../helpers/project.ts';

const doc = (name: string) => `"""\nTool: ${name}\nDescription: A tool.\nTags: read\n"""\n`;
const tsDoc = (name: string) => `/**\n * Tool: ${name}\n * Description: A tool.\n * Tags: read\n */\n`;

describe('syntax', () => {
  it('forge validate and forge build report a Python syntax error at its line and column', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/bad.py': `${doc('bad')}\ndef execute(args):\n    return {"a": 1,, }\n` });
    const validate = await forge(['validate'], dir);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toMatch(/tools\/bad\.py:8:20 FORGE_PY_SYNTAX invalid syntax/);
    const build = await forge(['build', '--prod'], dir);
    expect(build.code).toBe(1);
    expect(build.stderr).toMatch(/tools\/bad\.py:8:20 FORGE_PY_SYNTAX/);
  });

  it('forge validate reports a TypeScript syntax error with esbuild\'s location', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/bad.ts': `${tsDoc('bad_ts')}export function execute(args: { a: number }) {\n  return args.a +;\n}\n` });
    const validate = await forge(['validate', '--json'], dir);
    expect(validate.code).toBe(1);
    const out = JSON.parse(validate.stdout);
    expect(out.errors).toEqual([expect.objectContaining({ code: 'FORGE_SYNTAX', file: 'tools/bad.ts', line: 7, column: 18 })]);
  });

  it('says what an "Unexpected end of file" is, at validate and build: something left open', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/open.ts': `${tsDoc('open_ts')}export function execute(args: { a: number }) {\n  return { a: args.a\n}\n` });
    const hint = 'something opened earlier in the file is never closed: a brace, bracket or parenthesis, a string, template or comment';
    const validate = await forge(['validate', '--json'], dir);
    expect(validate.code).toBe(1);
    expect(JSON.parse(validate.stdout).errors).toEqual([expect.objectContaining({ code: 'FORGE_SYNTAX', file: 'tools/open.ts', message: 'Unexpected end of file', hint })]);
    const build = await forge(['build'], dir);
    expect(build.code).toBe(1);
    expect(build.stderr).toContain(`FORGE_SYNTAX Unexpected end of file`);
    expect(build.stderr).toContain(`  hint: ${hint}\n`);
  });

  it('a --prod build leaves the Python of the dev tools it strips unchecked; a dev build checks it', async () => {
    // The build starts the interpreter on every Python file it finds, before it knows which tools
    // --prod strips: the answer for a stripped tool must not fail the build.
    const devTool = `"""\nTool: probe\nDescription: A dev probe.\nCategory: dev\nTags: read\n"""\n\ndef execute(args):\n    return {"a": 1,, }\n`;
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/ok.py': `${doc('ok')}\ndef execute(args):\n    return {}\n`, 'tools/probe.py': devTool });
    const prod = await forge(['build', '--prod'], dir);
    expect(prod.stderr).not.toContain('FORGE_PY_SYNTAX');
    expect(prod.code).toBe(0);
    const dev = await forge(['build'], dir);
    expect(dev.code).toBe(1);
    expect(dev.stderr).toMatch(/tools\/probe\.py:9:20 FORGE_PY_SYNTAX/);
  });

  it('a helper module beside the tools is checked too', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/ok.py': `${doc('ok')}import helper\n\ndef execute(args):\n    return helper.f()\n`, 'tools/helper.py': 'def f(:\n    pass\n' });
    const validate = await forge(['validate'], dir);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toMatch(/tools\/helper\.py:1:\d+ FORGE_PY_SYNTAX/);
  });
});

describe('imports', () => {
  it('reports a third-party import nobody declared, where it is written', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/fetch.py': `${doc('fetch')}import json\nimport os.path\nfrom collections import OrderedDict\n\ndef execute(args):\n    import requests\n    return requests.get(args["url"]).text\n` });
    const validate = await forge(['validate'], dir);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toContain('tools/fetch.py:11:5 FORGE_PY_IMPORT "requests" is neither in the standard library nor declared\n  11 │     import requests\n     │     ^\n');
    expect(validate.stderr).toContain('# dependencies = ["requests"]');
    expect(validate.stderr).not.toContain('"json"');
    expect(validate.stderr).toContain('declare the package that provides it');
    const build = await forge(['build'], dir);
    expect(build.code).toBe(1);
    expect(build.stderr).toContain('FORGE_PY_IMPORT');
  });

  it('names the package to declare where it is not the import\'s own name (yaml is PyYAML, PIL is Pillow)', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/pics.py': `${doc('pics')}import yaml\nfrom PIL import Image\n\ndef execute(args):\n    return 1\n` });
    const validate = await forge(['validate'], dir);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toContain('declare "pyyaml" (it provides "yaml") in a PEP 723 block at the top of the file (# /// script, # dependencies = ["pyyaml"], # ///)');
    expect(validate.stderr).toContain('declare "pillow" (it provides "PIL")');
  });

  it("checks the imports of a YAML tool's python: step, where the file has them, and takes requirements.txt as their declaration", async () => {
    const yamlTool = [
      'description: Formats a title.',
      'parameters:',
      '  title: { type: string }',
      'python: |',
      '  import json',
      '  import tinyfmt_inline',
      '  try:',
      '      import optional_thing',
      '  except ImportError:',
      '      optional_thing = None',
      '  print(json.dumps(tinyfmt_inline.shout("{title}")))',
      '',
    ].join('\n');
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/shout.yaml': yamlTool });
    const validate = await forge(['validate'], dir);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toContain('tools/shout.yaml:6:3 FORGE_PY_IMPORT "tinyfmt_inline" is neither in the standard library nor declared');
    expect(validate.stderr).toContain('in requirements.txt beside forge.yaml');
    expect(validate.stderr).not.toContain('"json"');
    expect(validate.stderr).not.toContain('optional_thing');
    const build = await forge(['build'], dir);
    expect(build.stderr).toContain('FORGE_PY_IMPORT "tinyfmt_inline"');
    writeFileSync(join(dir, 'requirements.txt'), 'tinyfmt-inline\n');
    expect((await forge(['validate'], dir)).stderr).not.toContain('FORGE_PY_IMPORT');
  });

  it('accepts declared packages, local modules, and optional imports', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/fine.py': `# /// script\n# dependencies = ["requests>=2", "PyYAML"]\n# ///\n${doc('fine')}import requests\nimport yaml\nimport helper\nfrom mypkg import thing\ntry:\n    import ujson\nexcept ImportError:\n    ujson = None\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import numpy\n\ndef execute(args):\n    return 1\n`,
      'tools/helper.py': 'X = 1\n',
      'tools/mypkg/__init__.py': 'thing = 1\n',
    });
    const validate = await forge(['validate'], dir);
    expect(validate.code, validate.stderr).toBe(0);
  });

  it('maps a distribution to the modules it installs, from the project venv\'s metadata', async () => {
    const wheels = localWheel('tiny-dist', '1.0.0', 'def hi():\n    return "hi from tinymod"\n', { module: 'tinymod' });
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'requirements.txt': 'tiny-dist\n', 'tools/hi.py': `${doc('hi')}import tinymod\n\ndef execute(args):\n    return tinymod.hi()\n` });
    const before = await forge(['validate'], dir);
    expect(before.code).toBe(1);
    expect(before.stderr).toContain('"tinymod" is neither in the standard library nor declared');
    const run = await forge(['tool', 'run', 'hi'], dir, pipFrom(wheels));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('hi from tinymod');
    const after = await forge(['validate'], dir);
    expect(after.code, after.stderr).toBe(0);
  }, 120_000);
});
