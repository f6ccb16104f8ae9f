/** Discovery of the files in tool_dirs: a file that cannot be read is a diagnostic, never a crash. */
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { forge, minimalConfig, writeProject } from '../helpers/project.ts';

const greet = '"""\nTool: greet\nDescription: Greets.\n"""\n\ndef execute(args):\n    return "hi"\n';

describe('discover-tools', () => {
  it.each([
    ['a link to a missing file', (tools: string) => symlinkSync('/nonexistent/forge-missing', join(tools, 'notes.txt')), 'tools/notes.txt', /it is a link to \/nonexistent\/forge-missing, which does not exist/],
    ['a loop of links', (tools: string) => (symlinkSync('b.py', join(tools, 'a.py')), symlinkSync('a.py', join(tools, 'b.py'))), 'tools/a.py', /it is a link in a loop of links \(b\.py\)/],
  ])('reports %s in tools/ with its file, a code and a hint, for validate, build and tool list', async (_name, plant, file, why) => {
    const project = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': greet });
    plant(join(project, 'tools'));
    for (const args of [['validate'], ['build'], ['tool', 'list']]) {
      const { stdout, stderr } = await forge(args, project);
      const output = stdout + stderr;
      expect(output, args.join(' ')).toContain(`✘ ${file} FORGE_TOOL_READ cannot read ${file}: `);
      expect(output).toMatch(why);
      expect(output).toContain('hint: remove the file from the tool directory, or point the link at a file that exists');
      expect(output).not.toMatch(/ENOENT|ELOOP|--verbose for the stack trace/);
    }
    expect((await forge(['validate'], project)).code).toBe(1);
  });
});
