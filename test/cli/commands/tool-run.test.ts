/**
 * `forge tool run` runs a tool whose file the build would refuse for a reason
 * this machine hides (an undeclared import of a package the host Python has),
 * and says so at the line, as forge validate does: otherwise the tool works
 * here and `forge build` is the first to object.
 */
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, writeProject } from '../../helpers/project.ts';

// pip is no standard library module, and every Python that runs Forge's tools has it.
const tool = (header = '') => `${header}"""\nTool: uses_pip\nDescription: Imports pip.\nTags: read\n"""\nimport pip\n\ndef execute(args):\n    return {"ok": True}\n`;

describe('forge tool run and what the build refuses', () => {
  it('runs a tool with an undeclared import the host has, with the build error shown as a warning at its line', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tool_dirs: [tools]\n'), 'tools/uses_pip.py': tool() });
    const result = await forge(['tool', 'run', 'uses_pip'], dir);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ok: true });
    expect(result.stderr).toContain('▲ tools/uses_pip.py:6:1 FORGE_PY_IMPORT "pip" is neither in the standard library nor declared\n');
    expect(result.stderr).toContain('forge build refuses this, though it runs here');
    // The build does refuse it.
    expect((await forge(['validate'], dir)).stderr).toContain('✘ tools/uses_pip.py:6:1 FORGE_PY_IMPORT');
  });

  it('says nothing of an import declared in requirements.txt', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tool_dirs: [tools]\n'), 'tools/uses_pip.py': tool(), 'requirements.txt': 'pip\n' });
    const validate = await forge(['validate'], dir);
    expect(validate.stderr).not.toContain('FORGE_PY_IMPORT');
    const result = await forge(['tool', 'run', 'uses_pip'], dir);
    expect(result.stderr).not.toContain('FORGE_PY_IMPORT');
  });
});
