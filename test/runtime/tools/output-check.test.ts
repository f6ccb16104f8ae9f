/**
 * The declared-Output check. A number a double would change reaches the
 * result as its text (exact-output.ts); where the Output declares a number
 * or an integer, that text passes as the number it is, and nothing else
 * does: a real string, or text that is no such number, still fails.
 */
import { describe, expect, it } from 'vitest';
import { parseJsonExact } from '../../../runtime/tools/exact-output.ts';
import type { ToolSpec } from '../../../runtime/tools/model.ts';
import { checkOutput } from '../../../runtime/tools/output-check.ts';
import { forge, minimalConfig, writeProject } from '../../helpers/project.ts';

const spec: ToolSpec = {
  name: 'numbers',
  description: 'Returns numbers.',
  category: 'custom',
  tags: [],
  inputSchema: { type: 'object', properties: {} },
  outputSchema: { type: 'object', properties: { big: { type: 'integer' }, exact: { type: 'number' }, list: { type: 'array', items: { type: 'integer' } }, text: { type: 'string' } } },
};
const strict = (json: string) => checkOutput(spec, { ok: true, value: parseJsonExact(json) }, { strict: true, log: { debug() {}, info() {}, warn() {}, error() {} } as never });

describe('checkOutput and exact numbers', () => {
  it.each([
    ['an integer past 2^53', '{"big": 18446744073709551616}'],
    ['-0', '{"big": -0, "exact": -0}'],
    ['a decimal with more digits than a double keeps', '{"exact": 0.10000000000000000001}'],
    ['one inside an array', '{"list": [1, 18446744073709551616, -0]}'],
    ['a long digit string declared a string', '{"text": "18446744073709551616"}'],
  ])('passes %s', (_name, json) => {
    expect(strict(json)).toMatchObject({ ok: true });
  });

  it.each([
    ['a short number sent as a string', '{"big": "42"}', '"big" must be an integer'],
    ['text that is no number', '{"big": "12abc"}', '"big" must be an integer'],
    ['an exact decimal where an integer is declared', '{"big": 0.10000000000000000001}', '"big" must be an integer'],
  ])('fails %s', (_name, json, problem) => {
    const result = strict(json);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.message).toContain(problem);
  });

  it('lets a Python tool return 2**64 for an int Output under strict_outputs (forge tool run)', async () => {
    const tool = '"""\nTool: big\nDescription: Returns 2**64.\n\nOutput:\n  big (int): A big integer.\n"""\n\ndef execute(args):\n    return {"big": 2**64}\n';
    const project = writeProject({ 'forge.yaml': minimalConfig('strict_outputs: true\n'), 'tools/big.py': tool });
    const { code, stdout, stderr } = await forge(['tool', 'run', 'big', '--json'], project);
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('18446744073709551616');
  });
});
