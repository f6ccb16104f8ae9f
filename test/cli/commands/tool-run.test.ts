/**
 * `forge tool run` runs a tool whose file the build would refuse for a reason
 * this machine hides (an undeclared import of a package the host Python has),
 * and says so at the line, as forge validate does: otherwise the tool works
 * here and `forge build` is the first to object.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pipFrom } from '../../helpers/python-wheel.ts';
import { forge, minimalConfig, runProcess, tempDir, writeProject } from '../../helpers/project.ts';

// pip is no standard library module, and every Python that runs Forge's tools has it.
const tool = (header = '') => `${header}"""\nTool: uses_pip\nDescription: Imports pip.\nTags: read\n"""\nimport pip\n\ndef execute(args):\n    return {"ok": True}\n`;

describe('forge tool run and what the build refuses', () => {
  it('runs a tool with an undeclared import the host has, with the build error shown as a warning at its line', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tool_dirs: [tools]\n'), 'tools/uses_pip.py': tool() });
    const result = await forge(['tool', 'run', 'uses_pip'], dir);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ok: true });
    expect(result.stderr).toContain('▲ tools/uses_pip.py:6:1 FORGE_PY_IMPORT "pip" is neither in the standard library nor declared\n');
    expect(result.stderr).toContain('forge build refuses this; forge tool run runs the tool anyway');
    // With --json, in the document's warnings, as text mode says it.
    const json = JSON.parse((await forge(['tool', 'run', 'uses_pip', '--json'], dir)).stdout);
    expect(json.warnings).toEqual([expect.objectContaining({ severity: 'warning', code: 'FORGE_PY_IMPORT', file: 'tools/uses_pip.py', line: 6, hint: expect.stringContaining('forge build refuses this; forge tool run runs the tool anyway') })]);
    // The build does refuse it.
    expect((await forge(['validate'], dir)).stderr).toContain('✘ tools/uses_pip.py:6:1 FORGE_PY_IMPORT');
  });

  it('does not say a tool runs here when its undeclared import is one this Python lacks too', async () => {
    const lacking = tool().replace('Imports pip.', 'Imports a package.').replace('import pip', 'import forge_no_such_package_anywhere');
    const dir = writeProject({ 'forge.yaml': minimalConfig('tool_dirs: [tools]\n'), 'tools/uses_pip.py': lacking });
    const result = await forge(['tool', 'run', 'uses_pip'], dir);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('▲ tools/uses_pip.py:6:1 FORGE_PY_IMPORT "forge_no_such_package_anywhere" is neither in the standard library nor declared\n');
    expect(result.stderr).toContain("ModuleNotFoundError: No module named 'forge_no_such_package_anywhere'");
    expect(result.stderr).not.toContain('though it runs here');
    expect(result.stderr).toContain('forge build refuses this; forge tool run runs the tool anyway');
  });

  it('says nothing of an import declared in requirements.txt', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tool_dirs: [tools]\n'), 'tools/uses_pip.py': tool(), 'requirements.txt': 'pip\n' });
    const validate = await forge(['validate'], dir);
    expect(validate.stderr).not.toContain('FORGE_PY_IMPORT');
    const result = await forge(['tool', 'run', 'uses_pip'], dir);
    expect(result.stderr).not.toContain('FORGE_PY_IMPORT');
  });
});

describe('forge tool run --json and the project\'s warnings', () => {
  // A tool dir that is not there (forge.yaml), a tag a letter off "read" (the tool's file): warnings of the load
  // that text mode prints on stderr.
  const warned = () => writeProject({
    'forge.yaml': minimalConfig('tool_dirs: [tools, nowhere]\n'),
    'tools/echo.py': '"""\nTool: echo\nDescription: Echo a message.\nTags: reed\n\nInput:\n  message (str): The message.\n"""\n\ndef execute(args):\n    if args["message"] == "boom":\n        raise ValueError("boom")\n    return {"echo": args["message"]}\n',
  });
  const expected = [
    expect.objectContaining({ severity: 'warning', code: 'FORGE_TOOL_DIR_MISSING', file: 'forge.yaml', line: 4, hint: 'create it, or remove it from tool_dirs' }),
    expect.objectContaining({ severity: 'warning', code: 'FORGE_TAG_TYPO', file: 'tools/echo.py', line: 4, column: 7 }),
  ];

  it('carries the warnings text mode prints, in `warnings` as forge build --json and forge validate --json do, in a run that succeeds and one that fails', async () => {
    const dir = warned();
    const text = await forge(['tool', 'run', 'echo', '--param', 'message=hi'], dir);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain('▲ forge.yaml:4:20 FORGE_TOOL_DIR_MISSING');
    expect(text.stderr).toContain('▲ tools/echo.py:4:7 FORGE_TAG_TYPO');

    const ok = await forge(['tool', 'run', 'echo', '--param', 'message=hi', '--json'], dir);
    expect(ok.code, ok.stderr).toBe(0);
    const doc = JSON.parse(ok.stdout);
    expect(doc).toMatchObject({ ok: true, value: { echo: 'hi' } });
    expect(doc.warnings).toEqual(expected);
    // The same entries as validate's, location and all.
    const validate = JSON.parse((await forge(['validate', '--json'], dir)).stdout);
    expect(doc.warnings).toEqual(validate.warnings);

    const failed = await forge(['tool', 'run', 'echo', '--param', 'message=boom', '--json'], dir);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_FAILED' }, warnings: expected });

    const dry = await forge(['tool', 'run', 'echo', '--param', 'message=hi', '--dry-run', '--json'], dir);
    expect(JSON.parse(dry.stdout)).toMatchObject({ ok: true, dryRun: true, warnings: expected });
  });

  // They were left out of a refusal's document that another function writes: the sandbox's, and pip's.
  it("keeps them in the document of a refusal before the tool runs: the sandbox's, and a Python package that cannot be installed", async () => {
    const sandboxRefused = await forge(['tool', 'run', 'echo', '--param', 'message=hi', '--json'], warned(), { FORGE_SANDBOX: 'requried' });
    expect(sandboxRefused.code).toBe(2);
    expect(JSON.parse(sandboxRefused.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_SANDBOX_REQUIRED' }, warnings: expected });

    const dir = warned();
    writeFileSync(join(dir, 'tools', 'echo.py'), `# /// script\n# dependencies = ["forge-no-such-package-anywhere"]\n# ///\n${readFileSync(join(dir, 'tools', 'echo.py'), 'utf8')}`);
    const pipRefused = await forge(['tool', 'run', 'echo', '--param', 'message=hi', '--json'], dir, pipFrom(tempDir()));
    expect(pipRefused.code).toBe(1);
    expect(JSON.parse(pipRefused.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_PYTHON_DEPS' }, warnings: [expected[0], expect.objectContaining({ code: 'FORGE_TAG_TYPO', file: 'tools/echo.py', line: 7 })] });
  }, 120_000);

  // A warning of the runtime's as it starts (cli_execute's allowed binary not on PATH) and one during the call (a
  // result unlike the Output the tool declares): text lines on stderr beside the JSON, before FORGE_RUNTIME_WARNING.
  const runtimeWarned = () => writeProject({
    'forge.yaml': minimalConfig('tool_dirs: [tools]\ntools:\n  - name: cli_execute\n    config:\n      allowed_binaries: [forge-no-such-binary]\n'),
    'tools/count.py': '"""\nTool: count\nDescription: Count.\nTags: read\n\nInput:\n  fail (bool, default=false): Fail instead.\n\nOutput:\n  count (int): The count.\n"""\n\ndef execute(args):\n    if args.get("fail"):\n        raise ValueError("boom")\n    return {"total": 1}\n',
  });
  const runtimeWarnings = [
    { severity: 'warning', code: 'FORGE_RUNTIME_WARNING', message: 'cli_execute: allowed binary "forge-no-such-binary" was not found on PATH' },
    { severity: 'warning', code: 'FORGE_RUNTIME_WARNING', message: 'tool "count" returned output that does not match its declared Output: missing "count"' },
  ];

  it('puts what the runtime warns of as it starts and runs the tool in `warnings`, and no text line beside the JSON', async () => {
    const dir = runtimeWarned();
    const text = await forge(['tool', 'run', 'count'], dir);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain('warning: cli_execute: allowed binary "forge-no-such-binary" was not found on PATH\n');

    const ok = await forge(['tool', 'run', 'count', '--json'], dir);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual({ ok: true, value: { total: 1 }, durationMs: expect.any(Number), warnings: expect.arrayContaining(runtimeWarnings) });
    expect(ok.stderr).not.toContain('warning:');

    const failed = await forge(['tool', 'run', 'count', '{"fail": true}', '--json'], dir);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_FAILED' }, warnings: expect.arrayContaining([runtimeWarnings[0]]) });
    expect(failed.stderr).not.toContain('warning:');
  });

  // The bundle's call --json printed them as "[forge] warning: ..." lines, its document without `warnings`.
  it("and so does the bundle's node runtime.mjs call --json, with the same entries", async () => {
    const dir = runtimeWarned();
    const built = await forge(['build'], dir);
    expect(built.code, built.stderr).toBe(0);
    const call = (args: string[]) => runProcess(process.execPath, [join(dir, '.forge-output', 'runtime.mjs'), 'call', 'count', ...args], { cwd: dir });
    const text = await call([]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain('[forge] warning: cli_execute: allowed binary "forge-no-such-binary" was not found on PATH\n');

    const ok = await call(['--json']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual({ ok: true, value: { total: 1 }, durationMs: expect.any(Number), warnings: expect.arrayContaining(runtimeWarnings) });
    expect(ok.stderr).not.toContain('warning');
    const failed = await call(['{"fail": true}', '--json']);
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_FAILED' }, warnings: expect.arrayContaining([runtimeWarnings[0]]) });
    expect(failed.stderr).not.toContain('warning');
  });

  it('has an empty `warnings` when there is nothing to warn of', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tool_dirs: [tools]\n'), 'tools/echo.py': '"""\nTool: echo\nDescription: Echo.\nTags: read\n"""\n\ndef execute(args):\n    return "hi"\n' });
    const { code, stdout, stderr } = await forge(['tool', 'run', 'echo', '--json'], dir);
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ ok: true, value: 'hi', durationMs: expect.any(Number), warnings: [] });
  });
});

describe('forge tool run and the sandbox probe it starts early', () => {
  it('stops the probe when the run ends before the tool starts, instead of waiting for it', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/broken.py': '"""\nTool: broken\nDescription: Does not compile.\nTags: read\n"""\ndef execute(args):\n    return (\n' });
    // A bubblewrap that never answers: the probe runs as long as it is left to (its own limit is 60 s).
    const bwrap = join(tempDir(), 'bwrap');
    writeFileSync(bwrap, '#!/bin/sh\nexec sleep 120\n', { mode: 0o755 });
    const started = performance.now();
    const result = await forge(['tool', 'run', 'broken'], dir, { FORGE_BWRAP: bwrap });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('FORGE_PY_SYNTAX');
    expect(performance.now() - started).toBeLessThan(30_000);
  }, 60_000);
});
