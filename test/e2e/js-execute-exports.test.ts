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
  'tools/ts_default_function.ts': `${doc('ts_default_function')}export default async function execute(args: Record<string, unknown>) {\n  return { form: 'export default function execute' };\n}\n`,
  'tools/esm_default_name.js': `${doc('esm_default_name')}function execute() {\n  return { form: 'export default execute' };\n}\nexport default execute;\n`,
};
const EXPECTED: Record<string, string> = {
  cjs_object: 'module.exports = {…}',
  cjs_property: 'exports.execute',
  cjs_module_property: 'module.exports.execute',
  esm_default: 'export default {…}',
  ts_default: 'export default {…} (TypeScript)',
  ts_default_function: 'export default function execute',
  esm_default_name: 'export default execute',
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

  it('warns, with where, when a file defines execute it does not export, or declares inputs a script never reads', async () => {
    const input = (name: string) => `/**\n * Tool: ${name}\n * Description: Takes a word.\n * Tags: read\n *\n * Input:\n *   word (str): A word.\n */\n`;
    const pyDoc = (name: string, inputs: boolean) => `"""\nTool: ${name}\nDescription: Takes a word.\nTags: read\n${inputs ? '\nInput:\n  word (str): A word.\n' : ''}"""\n`;
    const mistakes = writeProject({
      'forge.yaml': minimalConfig(),
      'tools/unexported.ts': `${input('unexported')}async function execute(args: { word: string }) {\n  return { word: args.word };\n}\n`,
      'tools/misspelt.py': `${pyDoc('misspelt', true)}\ndef exceute(args):\n    return {"word": args["word"]}\n`,
      // A script that reads its arguments, and one that takes none: nothing to say.
      'tools/reads.py': `${pyDoc('reads', true)}import json, sys\nprint(json.dumps(json.load(sys.stdin)))\n`,
      'tools/takes_none.py': `${pyDoc('takes_none', false)}print("hello")\n`,
    });
    const validated = await forge(['validate'], mistakes);
    const said = validated.stdout + validated.stderr;
    expect(said).toContain('tools/unexported.ts:9:16');
    expect(said).toMatch(/FORGE_EXECUTE_NOT_EXPORTED[^]*export it: export function execute\(args\)/);
    expect(said).toMatch(/tools\/misspelt\.py:10:5 FORGE_SCRIPT_READS_NOTHING[^]*only "exceute"[^]*did you mean "execute"\?/);
    expect(said).not.toMatch(/tools\/(reads|takes_none)\.py/);
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
