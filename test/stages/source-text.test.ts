/**
 * The stages after parse-docstrings work from the text it read: the PEP 723 block and the copy of
 * a Python tool into the bundle come from the bytes its spec was parsed from, not from a second
 * read of a file an editor may have saved since.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleRuntime } from '../../stages/bundle-runtime.ts';
import { loadProject } from '../../stages/load-project.ts';
import { OutputWriter } from '../../stages/output-writer.ts';
import { pythonDependencies } from '../../stages/python/python-dependencies-stage.ts';
import { StageContext } from '../../stages/stage.ts';
import { minimalConfig, tempDir, writeProject } from '../helpers/project.ts';

const tool = (version: string) =>
  `# /// script\n# dependencies = ["requests==${version}"]\n# ///\n"""\nTool: fetch_page\nDescription: Fetches a page.\n\nInput:\n  url (str): The page.\n"""\n\ndef execute(args):\n    return {"version": "${version}"}\n`;

describe('the text a build works from', () => {
  it('is the one the docstring was parsed from, in the declared packages and in the bundle, when the file is saved again after the parse', async () => {
    const dir = writeProject({ 'forge.yaml': minimalConfig(), 'tools/fetch_page.py': tool('2.31.0'), 'tools/helper.py': 'GREETING = "hello"\n' });
    const ctx = new StageContext(dir, false);
    const project = await loadProject({}, ctx);
    expect(ctx.diagnostics).toEqual([]);
    // Saved after the parse (an editor, mid-build): the build goes on with what it parsed.
    writeFileSync(join(dir, 'tools', 'fetch_page.py'), tool('9.9.9'));
    writeFileSync(join(dir, 'tools', 'helper.py'), 'GREETING = "changed"\n');

    expect(pythonDependencies(dir, project.tools, ctx).dependencies?.dependencies).toEqual(['requests==2.31.0']);
    const writer = new OutputWriter(join(tempDir(), 'out'));
    const started = bundleRuntime(project.config, project.tools, project.supportFiles, writer, ctx);
    await started.done;
    await writer.flush();
    expect(writer.read('tools/fetch_page.py').toString()).toBe(tool('2.31.0'));
    expect(writer.read('tools/helper.py').toString()).toBe('GREETING = "hello"\n');
    expect(ctx.diagnostics).toEqual([]);
  });
});
