/**
 * A misspelt security tag ("reed") on a tool with no security tag is said at
 * build time: without it the tool silently counts as run, and a person is
 * asked to confirm every call of a tool its author meant as read.
 */
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, writeProject } from '../../helpers/project.ts';

const PY = `"""
Tool: lookup
Description: Looks something up.
Tags: network, reed     # meant: read
"""
print("ok")
`;

const YAML_TOOL = `description: Writes a note.
tags: [notes, wirte]
bash: echo hi
`;

describe('a misspelt security tag', () => {
  it('is a warning at the tag, in a docstring and in a YAML tool, naming the tag meant', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig('tool_dirs: [tools]\n'), 'tools/lookup.py': PY, 'tools/note.yaml': YAML_TOOL });
    const result = await forge(['validate', '--json'], dir);
    expect(result.code).toBe(0);
    const warnings = JSON.parse(result.stdout).warnings as { code: string; file: string; line: number; column: number; hint: string }[];
    const typos = warnings.filter((w) => w.code === 'FORGE_TAG_TYPO').map(({ file, line, column, hint }) => ({ file, line, column, hint: hint.split('?')[0] }));
    expect(typos).toEqual([
      { file: 'tools/lookup.py', line: 4, column: 16, hint: 'did you mean "read"' },
      { file: 'tools/note.yaml', line: 2, column: 15, hint: 'did you mean "write"' },
    ]);
    const text = await forge(['validate'], dir);
    expect(text.stderr).toContain('▲ tools/lookup.py:4:16 FORGE_TAG_TYPO tag "reed" is not a security tag, and the tool has none: it counts as a run tool, which by default a person confirms\n');
  });

  it('is not said of free tags, nor when the tool has a security tag', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig('tool_dirs: [tools]\n'),
      'tools/lookup.py': PY.replace('network, reed', 'network, read, reed'),
      'tools/note.yaml': YAML_TOOL.replace('[notes, wirte]', '[notes, text]'),
    });
    const result = await forge(['validate', '--json'], dir);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).warnings).toEqual([]);
  });

  it('is not said of words a letter off a security tag that are labels of their own (ready, head, bread, fun)', async () => {
    const dir = writeProject({
      'forge.yaml': minimalConfig('tool_dirs: [tools]\n'),
      'tools/lookup.py': PY.replace('network, reed', 'ready, head'),
      'tools/note.yaml': YAML_TOOL.replace('[notes, wirte]', '[bread, fun, sun, lead]'),
      'tools/other.yaml': YAML_TOOL.replace('[notes, wirte]', '[notes, writes]'),
    });
    const result = await forge(['validate', '--json'], dir);
    expect(result.code).toBe(0);
    const typos = (JSON.parse(result.stdout).warnings as { code: string; file: string; hint: string }[]).filter((w) => w.code === 'FORGE_TAG_TYPO');
    // "writes" stays a typo of write; the others are words.
    expect(typos.map((w) => [w.file, w.hint.split('?')[0]])).toEqual([['tools/other.yaml', 'did you mean "write"']]);
  });
});
