/** `forge tool run` from a subdirectory: a path given as the shell sees it is not the tools' path; the failure says how to write it. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, writeProject } from '../helpers/project.ts';

describe('forge tool run from a subdirectory of the project', () => {
  it('names the work-dir path of a file given relative to this directory', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - file_read\n'), 'notes/today.txt': 'hello\n' });
    const sub = join(project, 'notes');
    const result = await forge(['tool', 'run', 'file_read', '{"path": "today.txt"}'], sub);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`✘ FORGE_FILE_NOT_FOUND "today.txt" does not exist\n  hint: tools resolve paths in the work dir (${project}), not in this directory: "today.txt" here is "notes/today.txt" there\n`);
    // Given as the hint says, it is read.
    const fixed = await forge(['tool', 'run', 'file_read', '{"path": "notes/today.txt"}'], sub);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.stdout).toContain('hello');
  }, 60_000);

  it('keeps the tool\'s own hint for a path that is nowhere', async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - file_read\n') });
    mkdirSync(join(project, 'sub'));
    writeFileSync(join(project, 'sub', 'other.txt'), 'x');
    const result = await forge(['tool', 'run', 'file_read', '{"path": "missing.txt"}'], join(project, 'sub'));
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain('work dir');
  }, 60_000);
});
