/**
 * A JavaScript or TypeScript tool may define execute(args) however its module
 * exports it. Each form runs in a worker and answers with its value, from the
 * sources (`forge tool run`) and from the built bundle. Before, only named ES
 * exports were seen: the other forms ran as scripts that print nothing, an
 * empty success.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { deployBundle, forge, minimalConfig, runProcess, writeProject } from '../helpers/project.ts';

const doc = (name: string) => `/**\n * Tool: ${name}\n * Description: Says which export form it uses.\n * Tags: read\n */\n`;
const FORMS: Record<string, string> = {
  'tools/cjs_object.js': `${doc('cjs_object')}module.exports = {\n  execute(args) {\n    return { form: 'module.exports = {…}' };\n  },\n};\n`,
  'tools/cjs_property.js': `${doc('cjs_property')}exports.execute = async function (args) {\n  return { form: 'exports.execute' };\n};\n`,
  'tools/cjs_module_property.js': `${doc('cjs_module_property')}function execute() {\n  return { form: 'module.exports.execute' };\n}\nmodule.exports.execute = execute;\n`,
  'tools/esm_default.js': `${doc('esm_default')}export default {\n  execute() {\n    return { form: 'export default {…}' };\n  },\n};\n`,
  'tools/ts_default.ts': `${doc('ts_default')}export default {\n  execute(args: Record<string, unknown>): { form: string } {\n    return { form: 'export default {…} (TypeScript)' };\n  },\n};\n`,
};
const EXPECTED: Record<string, string> = {
  cjs_object: 'module.exports = {…}',
  cjs_property: 'exports.execute',
  cjs_module_property: 'module.exports.execute',
  esm_default: 'export default {…}',
  ts_default: 'export default {…} (TypeScript)',
};

let project: string;
beforeAll(() => {
  project = writeProject({ 'forge.yaml': minimalConfig(), ...FORMS });
});

describe('a JS/TS tool whose execute is not a named export', () => {
  it.each(Object.keys(EXPECTED))('%s is served by a worker and answers with its value (forge tool run)', async (name) => {
    const described = await forge(['tool', 'describe', name], project);
    expect(described.stdout).toMatch(/worker/);
    const { code, stdout, stderr } = await forge(['tool', 'run', name, '--json'], project);
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout).value).toEqual({ form: EXPECTED[name] });
  });

  it('answers with its value from the built bundle, in every form', async () => {
    const built = await forge(['build', '--prod'], project);
    expect(built.code, built.stderr).toBe(0);
    const { workDir, bundle } = deployBundle(project);
    for (const [name, form] of Object.entries(EXPECTED)) {
      const { code, stdout, stderr } = await runProcess(process.execPath, [join(bundle, 'runtime.mjs'), 'call', name, '{}'], { cwd: workDir });
      expect(code, `${name}: ${stderr}`).toBe(0);
      expect(JSON.parse(stdout), name).toEqual({ form });
    }
  });
});
