/** `forge tool run` (and the bundle's `call`) of a tool that throws: shown at the line of the project's code it threw from, the traceback with --verbose. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deployBundle, forge, minimalConfig, runProcess, writeProject } from '../../helpers/project.ts';

const python = '"""\nTool: py_throws\nDescription: Throws.\n\nInput:\n  x (str): x.\n"""\nfrom helper import check\n\ndef execute(args):\n    return check(args["x"])\n';
const helper = 'def check(x):\n    table = {}\n    return {"v": table[x] + 1}\n';
const typescript = '/**\n * Tool: ts_throws\n * Description: Throws.\n *\n * Input:\n *   x (str): x.\n */\nexport function execute(args: { x: string }) {\n  throw new Error(`boom ${args.x}`);\n}\n';

describe('forge tool run of a tool that throws', () => {
  const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/py_throws.py': python, 'tools/helper.py': helper, 'tools/ts_throws.ts': typescript });

  it.each([
    ['py_throws', `✘ tools/helper.py:3:18 FORGE_TOOL_FAILED tool "py_throws" failed: KeyError: 'a'\n  3 │     return {"v": table[x] + 1}\n    │                  ^\n  hint: --verbose shows the traceback\n`],
    ['ts_throws', '✘ tools/ts_throws.ts:9:9 FORGE_TOOL_FAILED tool "ts_throws" failed: boom a\n  9 │   throw new Error(`boom ${args.x}`);\n    │         ^\n  hint: --verbose shows the stack trace\n'],
  ])('%s: at the innermost line of the project, its code and a hint, no traceback', async (tool, shown) => {
    const result = await forge(['tool', 'run', tool, '--param', 'x=a'], project);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(shown);
  }, 60_000);

  it('--verbose adds the traceback under it', async () => {
    const result = await forge(['tool', 'run', 'py_throws', '--param', 'x=a', '--verbose'], project);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`✘ tools/helper.py:3:18 FORGE_TOOL_FAILED tool "py_throws" failed: KeyError: 'a'\n`);
    expect(result.stderr).toContain('Traceback (most recent call last):');
    expect(result.stderr).not.toContain('hint: --verbose');
  }, 60_000);

  it('--json gives the same place in error, and the traceback in error.details', async () => {
    const result = await forge(['tool', 'run', 'py_throws', '--param', 'x=a', '--json'], project);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).error).toMatchObject({
      code: 'FORGE_TOOL_FAILED',
      file: 'tools/helper.py',
      line: 3,
      column: 18,
      location: { file: 'tools/helper.py', line: 3, column: 18, lineText: '    return {"v": table[x] + 1}' },
      details: expect.stringContaining('Traceback (most recent call last):'),
    });
  }, 60_000);
});

describe("the bundle's call of a Python tool that throws", () => {
  it('is shown at the line of the bundled tool file it threw from, as forge tool run shows it, and so is --json', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/py_throws.py': python, 'tools/helper.py': helper });
    const built = await forge(['build'], project);
    expect(built.code, built.stderr).toBe(0);
    const { bundle } = deployBundle(project);
    const call = (...extra: string[]) => runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', 'py_throws', '{"x": "a"}', ...extra], { cwd: bundle });
    const text = await call();
    expect(text.code).toBe(1);
    expect(text.stderr).toBe(`error: tools/helper.py:3:18 FORGE_TOOL_FAILED tool "py_throws" failed: KeyError: 'a'\n  3 │     return {"v": table[x] + 1}\nhint: FORGE_VERBOSE=1 shows the traceback (or --json, in error.details)\n`);
    const json = await call('--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'FORGE_TOOL_FAILED', file: 'tools/helper.py', line: 3, column: 18, location: { lineText: '    return {"v": table[x] + 1}' } });
  }, 60_000);
});
