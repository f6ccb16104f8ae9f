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
    expect(result.stderr).toContain('forge build refuses this; forge tool run runs the tool anyway');
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
