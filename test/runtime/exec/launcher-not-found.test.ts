/** A YAML tool's run: program that is not there is "X was not found" (FORGE_TOOL_START), in the sandbox as without it: never the launcher's own words. */
import { describe, expect, it } from 'vitest';
import { bwrapNotFound, launcherNotFound } from '../../../runtime/exec/launcher-not-found.ts';
import { forge, minimalConfig, writeProject } from '../../helpers/project.ts';

describe('launcherNotFound', () => {
  it.each([
    [127, 'prlimit: failed to execute nosuchprog: No such file or directory\n', true],
    [127, 'bwrap: execvp nosuchprog: No such file or directory\n', true],
    [127, 'prlimit: failed to execute other: No such file or directory\n', false],
    [1, 'prlimit: failed to execute nosuchprog: No such file or directory\n', false],
    [127, 'bash: nosuchprog: command not found\n', false],
  ])('exit %s with %j: %s', (code, stderr, found) => {
    expect(launcherNotFound(code, stderr, 'nosuchprog')).toBe(found);
  });
});

describe('bwrapNotFound', () => {
  it.each([
    ['bwrap: execvp /nonexistent/mcp-server: No such file or directory\n', true],
    ['starting\nbwrap: execvp /nonexistent/mcp-server: No such file or directory\n', false],
    ['prlimit: failed to execute nosuchprog: No such file or directory\n', false],
    ['', false],
  ])('%j: %s', (stderr, found) => {
    expect(bwrapNotFound(stderr)).toBe(found);
  });
});

describe('forge tool run of a run: program that is not installed', () => {
  it.each([[{}], [{ FORGE_SANDBOX: 'off' }]])('says it was not found, with a hint (%j)', async (env) => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/nope.yaml': 'description: d\nparameters:\n  x: { type: string }\nrun: nosuchprog-forge-test {x}\n' });
    const { code, stderr } = await forge(['tool', 'run', 'nope', '--param', 'x=1'], project, env);
    expect(code).toBe(1);
    expect(stderr).toContain('✘ FORGE_TOOL_START tool "nope" failed: "nosuchprog-forge-test" was not found\n  hint: install it where PATH finds it, or give its full path\n');
    expect(stderr).not.toMatch(/prlimit|bwrap|exited with code 127/);
  }, 60_000);
});
