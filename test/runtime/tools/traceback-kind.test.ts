/** The bundle's call of a tool that throws: says where the traceback is (FORGE_VERBOSE=1, --json), and shows it with FORGE_VERBOSE=1. */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tracebackKind } from '../../../runtime/tools/traceback-kind.ts';
import { deployBundle, forge, minimalConfig, runProcess, writeProject } from '../../helpers/project.ts';

describe('tracebackKind', () => {
  it.each([
    ['Traceback (most recent call last):\n  File "/p/tools/x.py", line 3, in execute\nKeyError: 1\n', 'traceback'],
    ['Error: boom\n    at execute (/p/tools/x.ts:9:9)\n    at handle (file:///p/runtime.mjs:2:5)', 'stack trace'],
    ['oops\n', undefined],
    [undefined, undefined],
  ])('%j is a %s', (details, kind) => {
    expect(tracebackKind(details)).toBe(kind);
  });
});

describe("the bundle's call of a tool that throws", () => {
  let bundle: string;
  beforeAll(async () => {
    const project = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/throws.py': '"""\nTool: throws\nDescription: Throws.\n"""\n\ndef execute(args):\n    raise ValueError("bad value")\n',
    });
    const built = await forge(['build'], project);
    expect(built.code, built.stderr).toBe(0);
    bundle = deployBundle(project).bundle;
  }, 60_000);

  it('says how to see the traceback, and shows it with FORGE_VERBOSE=1', async () => {
    const plain = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', 'throws'], { cwd: bundle });
    expect(plain.code).toBe(1);
    expect(plain.stderr).toBe('error: tools/throws.py:7:5 FORGE_TOOL_FAILED tool "throws" failed: ValueError: bad value\n  7 │     raise ValueError("bad value")\nhint: FORGE_VERBOSE=1 shows the traceback (or --json, in error.details)\n');
    const verbose = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', 'throws'], { cwd: bundle, env: { FORGE_VERBOSE: '1' } });
    expect(verbose.stderr).toContain('error: tools/throws.py:7:5 FORGE_TOOL_FAILED tool "throws" failed: ValueError: bad value\n  7 │     raise ValueError("bad value")\nTraceback (most recent call last):');
    expect(verbose.stderr).toContain('raise ValueError("bad value")');
    // The hint's other way: --json carries the traceback in error.details.
    const json = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', 'throws', '--json'], { cwd: bundle });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'FORGE_TOOL_FAILED', details: expect.stringMatching(/^Traceback \(most recent call last\):[\s\S]*raise ValueError\("bad value"\)/) });
    // Its help names the variable.
    expect((await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'help'], { cwd: bundle })).stdout).toContain('FORGE_VERBOSE=1');
  }, 60_000);
});
