/** `forge tool describe --json` and the project's warnings: the document carries what text mode prints on stderr. */
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, writeProject } from '../../helpers/project.ts';

describe('forge tool describe --json', () => {
  // A tool dir that is not there (forge.yaml), a tag a letter off "read" (the tool's file): the load's warnings.
  const warned = () => writeProject({
    'forge.yaml': minimalConfig('tool_dirs: [tools, nowhere]\n'),
    'tools/echo.py': '"""\nTool: echo\nDescription: Echo.\nTags: reed\n"""\n\ndef execute(args):\n    return "hi"\n',
  });

  it("carries the project's warnings text mode prints, in `warnings` as forge validate --json has them", async () => {
    const dir = warned();
    const text = await forge(['tool', 'describe', 'echo'], dir);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain('FORGE_TOOL_DIR_MISSING');
    const json = await forge(['tool', 'describe', 'echo', '--json'], dir);
    expect(json.code, json.stderr).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc).toMatchObject({ ok: true, enabled: true, tool: { name: 'echo' } });
    expect(doc.warnings).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'FORGE_TOOL_DIR_MISSING', file: 'forge.yaml', line: 4 }),
      expect.objectContaining({ severity: 'warning', code: 'FORGE_TAG_TYPO', file: 'tools/echo.py', line: 4 }),
    ]);
    expect(doc.warnings).toEqual(JSON.parse((await forge(['validate', '--json'], dir)).stdout).warnings);
  });

  it('has an empty `warnings` when there is nothing to warn of', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tool_dirs: [tools]\n'), 'tools/echo.py': '"""\nTool: echo\nDescription: Echo.\nTags: read\n"""\n\ndef execute(args):\n    return "hi"\n' });
    expect(JSON.parse((await forge(['tool', 'describe', 'echo', '--json'], dir)).stdout)).toMatchObject({ ok: true, warnings: [] });
  });
});
