/** A command line parseArgs refuses, in Forge's words: forge's commands and the bundle's say the option and what to write, not Node's "Option '--port <value>' argument missing". */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deployBundle, forge, minimalConfig, runProcess, writeProject } from '../helpers/project.ts';

describe('an option parseArgs refuses', () => {
  it.each([
    [['build', '--out'], 'error: --out needs a value\n'],
    [['tool', 'run', 'x', '-p'], 'error: --param needs a value\n'],
    [['run', '--port', '--dev'], 'error: --port needs a value (the word after it starts with a dash, so it is read as an option; if it is the value, write --port=VALUE)\n'],
    [['build', '--prod=yes'], 'error: --prod takes no value (write --prod alone to turn it on)\n'],
  ])('forge %j', async (args, said) => {
    const result = await forge(args, writeProject({ 'forge.yaml': minimalConfig() }));
    expect(result.code).toBe(2);
    expect(result.stderr.startsWith(said)).toBe(true);
    expect(result.stderr).not.toContain('Option ');
  });

  it("the bundle's command line", async () => {
    const project = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    expect((await forge(['build'], project)).code).toBe(0);
    const { bundle } = deployBundle(project);
    const result = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'serve', '--port'], { cwd: bundle });
    expect(result.code).toBe(2);
    expect(result.stderr.startsWith('error: --port needs a value\n'), result.stderr).toBe(true);
  }, 60_000);
});
