/** Discovery of the files in tool_dirs: a file that cannot be read is a diagnostic, never a crash. */
import { readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverTools, sourceReader } from '../../stages/discover-tools.ts';
import { loadConfig } from '../../stages/config/load-config.ts';
import { parseDocstrings } from '../../stages/parse-docstrings.ts';
import { StageContext } from '../../stages/stage.ts';
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

  it('names each file from the project root (agent.json) and from the current directory (messages), for a tool dir inside the project and one beside it', async () => {
    const root = writeProject({
      // ignore: matches a file's path from forge.yaml (or within a tool dir beside the project).
      'agent/forge.yaml': minimalConfig('tool_dirs:\n  - tools\n  - ../shared\nignore:\n  - tools/nested/draft.py\n  - lib/draft.py\n'),
      'agent/tools/greet.py': greet,
      'agent/tools/nested/wave.py': greet.replace('greet', 'wave'),
      'agent/tools/nested/draft.py': greet.replace('greet', 'draft'),
      'shared/lib/shout.py': greet.replace('greet', 'shout'),
      'shared/lib/draft.py': greet.replace('greet', 'shared_draft'),
    });
    const project = join(root, 'agent');
    symlinkSync('/nonexistent/forge-missing', join(root, 'shared', 'lib', 'notes.txt'));
    symlinkSync('/nonexistent/forge-missing', join(project, 'tools', 'nested', 'notes.txt'));

    const fromRoot = await forge(['build'], project);
    expect(fromRoot.stdout + fromRoot.stderr).toContain('cannot read ../shared/lib/notes.txt: ');
    expect(fromRoot.stdout + fromRoot.stderr).toContain('cannot read tools/nested/notes.txt: ');
    // From inside a tool dir: the same files, named from there.
    const fromNested = await forge(['build'], join(project, 'tools', 'nested'));
    expect(fromNested.stdout + fromNested.stderr).toContain('cannot read ../../../shared/lib/notes.txt: ');
    expect(fromNested.stdout + fromNested.stderr).toContain('cannot read notes.txt: ');

    for (const link of ['shared/lib/notes.txt', 'agent/tools/nested/notes.txt']) rmSync(join(root, link));
    const built = await forge(['build'], join(project, 'tools'));
    expect(built.code, built.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(project, '.forge-output', 'agent.json'), 'utf8')) as { tools: { name: string; source?: { path: string } }[] };
    const paths = Object.fromEntries(manifest.tools.filter((t) => t.source).map((t) => [t.name, t.source!.path]));
    // The bundle keeps each file under tools/ at its path from the project root (one beside the project under its folder's name).
    expect(paths).toEqual({ greet: 'tools/tools/greet.py', wave: 'tools/tools/nested/wave.py', shout: 'tools/shared/lib/shout.py' });
  });

  it("reads a file once for the build's early Python check and the docstring parse: both see the same bytes", async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/greet.py': greet });
    const ctx = new StageContext(dir);
    const files = discoverTools((await loadConfig(join(dir, 'forge.yaml'), dir)).config!, ctx);
    const greetFile = files.find((f) => f.absolute.endsWith('greet.py'))!;
    expect(sourceReader(files)(greetFile.absolute).toString()).toBe(greet);
    // A save after the check read the file: the parse takes the bytes the check read, not the new ones.
    writeFileSync(greetFile.absolute, greet.replace('Greets.', 'Greets again.'));
    expect(parseDocstrings(files, ctx).tools[0].spec.description).toBe('Greets.');
    // A path that is not among the files is read as it is.
    expect(sourceReader([])(greetFile.absolute).toString()).toContain('Greets again.');
  });
});
