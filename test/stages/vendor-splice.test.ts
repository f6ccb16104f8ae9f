/**
 * The prebuilt third-party modules (dist/runtime-vendor/) spliced into
 * runtime.mjs: only those the agent uses, and the bundle runs with them
 * from a directory holding nothing but the output.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deployBundle, forge, minimalConfig, runProcess, writeProject } from '../helpers/project.ts';

describe('the prebuilt vendor modules in a build', () => {
  it('splices ajv and the small libraries, and the YAML parser only for an agent with YAML tools', async () => {
    const plain = writeProject({ 'forge.yaml': minimalConfig('tools:\n  - uuid_generate\n') });
    const withYaml = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/greet.yaml': 'description: Greets.\ntags: [read]\nparameters:\n  name: { type: string }\nbash: printf "hello %s" {name}\n',
    });
    for (const project of [plain, withYaml]) expect((await forge(['build', '--prod'], project)).code).toBe(0);
    const plainText = readFileSync(join(plain, '.forge-output', 'runtime.mjs'), 'utf8');
    const yamlText = readFileSync(join(withYaml, '.forge-output', 'runtime.mjs'), 'utf8');
    expect(plainText).toContain('function __forgeVendor_ajv(');
    expect(plainText).toContain('function __forgeVendor_libs(');
    expect(plainText).not.toContain('function __forgeVendor_yaml(');
    expect(yamlText).toContain('function __forgeVendor_yaml(');

    // Arguments are checked by the spliced ajv; the YAML tool is read by the spliced parser.
    const deployed = deployBundle(withYaml).bundle;
    const bad = await runProcess(process.execPath, [join(deployed, 'runtime.mjs'), 'call', 'greet', '{"name": 3}'], { cwd: deployed });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('name');
    const good = await runProcess(process.execPath, [join(deployed, 'runtime.mjs'), 'call', 'greet', '{"name": "ada"}'], { cwd: deployed });
    expect(good.stdout.trim()).toBe('hello ada');
  });
});
