/**
 * FORGE_SANDBOX names the sandbox's mode for one start; a value that names none ("requried") is
 * refused at every door that runs tools, and by both doctors — never read as forge.yaml's mode,
 * which would run tools without isolation on a host that cannot give it.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxMode } from '../../../runtime/exec/sandbox-mode.ts';
import { SandboxRequiredError } from '../../../runtime/exec/tool-sandbox.ts';
import { deployBundle, forge, minimalConfig, removeTempDirs, runProcess, writeProject } from '../../helpers/project.ts';

describe('sandboxMode', () => {
  it.each(['off', 'auto', 'required', ' required '])('FORGE_SANDBOX=%j overrides forge.yaml', (value) => {
    expect(sandboxMode('auto', { FORGE_SANDBOX: value })).toEqual({ mode: value.trim(), from: 'FORGE_SANDBOX' });
  });

  it.each([[undefined], ['']])('FORGE_SANDBOX=%j leaves forge.yaml its mode', (value) => {
    expect(sandboxMode('required', { FORGE_SANDBOX: value })).toEqual({ mode: 'required', from: 'forge.yaml' });
    expect(sandboxMode(undefined, { FORGE_SANDBOX: value })).toEqual({ mode: 'auto', from: 'forge.yaml' });
  });

  it.each(['requried', 'REQUIRED', 'on', 'true', '0'])('refuses FORGE_SANDBOX=%j, naming the modes', (value) => {
    let thrown: unknown;
    try {
      sandboxMode('auto', { FORGE_SANDBOX: value });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(SandboxRequiredError);
    expect((thrown as SandboxRequiredError).message).toBe(`FORGE_SANDBOX="${value}" is not a sandbox mode (off, auto or required): tools are not run rather than run in a mode guessed`);
    expect((thrown as SandboxRequiredError).hint).toContain('off, auto or required');
  });
});

describe('a FORGE_SANDBOX that names no mode, at every door', () => {
  const typo = { FORGE_SANDBOX: 'requried', FORGE_AUTH_TOKEN: 'sandbox-mode-test-token' };
  let project: string;
  let bundle: string;
  let workDir: string;

  beforeAll(async () => {
    project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/echo_it.yaml': 'description: Echo it.\nparameters:\n  x: { type: string }\nrun: echo {x}\n' });
    const built = await forge(['build', '--prod'], project);
    expect(built.code, built.stderr).toBe(0);
    ({ workDir, bundle } = deployBundle(project));
  }, 120_000);
  afterAll(removeTempDirs);

  const refused = (result: { code: number | null; stdout: string; stderr: string }) => {
    expect(result.code, result.stdout + result.stderr).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('FORGE_SANDBOX="requried" is not a sandbox mode');
    expect(result.stdout).not.toContain('listening');
  };

  it('forge tool run refuses with FORGE_SANDBOX_REQUIRED and runs nothing', async () => {
    const result = await forge(['tool', 'run', 'echo_it', '--param', 'x=ran-anyway'], project, typo);
    refused(result);
    expect(result.stderr).toContain('FORGE_SANDBOX_REQUIRED');
    expect(result.stdout).not.toContain('ran-anyway');
  }, 60_000);

  it('forge run refuses to start', async () => {
    refused(await forge(['run', '--port', '0'], project, typo));
  }, 60_000);

  it("the bundle's serve and call refuse", async () => {
    refused(await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port', '0'], { cwd: workDir, env: { ...process.env, ...typo }, timeoutMs: 60_000 }));
    const call = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', 'echo_it', '{"x": "ran-anyway"}'], { cwd: workDir, env: { ...process.env, ...typo }, timeoutMs: 60_000 });
    refused(call);
    expect(call.stdout).not.toContain('ran-anyway');
  }, 60_000);

  it('both doctors fail its isolation check with the code serve refuses with', async () => {
    const source = await forge(['doctor', '--json'], project, typo);
    const bundled = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'doctor', '--json'], { cwd: workDir, env: { ...process.env, ...typo }, timeoutMs: 60_000 });
    for (const result of [source, bundled]) {
      expect(result.code, result.stdout + result.stderr).toBe(1);
      const report = JSON.parse(result.stdout) as { ok: boolean; errors: { code: string; message: string; hint?: string }[] };
      expect(report.ok).toBe(false);
      const isolation = report.errors.find((e) => e.message.startsWith('isolation:'));
      expect(isolation).toMatchObject({ code: 'FORGE_SANDBOX_REQUIRED', message: expect.stringContaining('FORGE_SANDBOX="requried" is not a sandbox mode') });
      expect(isolation?.hint).toContain('off, auto or required');
    }
  }, 60_000);
});
