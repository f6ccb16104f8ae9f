/**
 * A YAML parameter's `pattern`, `minimum` and `maximum`: what keeps out a
 * value the program reads as an operand of its own kind (`env {v}` with
 * `NAME=value`, `make {target}` with `CC=...`), which no escaping can,
 * and a number the command should never see. Checked before anything runs;
 * the pattern itself cannot be made to hold the agent's thread.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../helpers/project.ts';
import { problemsOf, yamlRegistry } from './helpers.ts';

/** Runs the tool `t` with `args`; the result, and what the command wrote to ran.txt (undefined: it did not run). */
async function call(tool: Record<string, unknown>, args: Record<string, unknown>) {
  const workDir = tempDir('forge-params-');
  const registry = yamlRegistry(workDir, { t: { description: 'A tool.', ...tool } });
  const result = await registry.execute('t', args);
  const ran = join(workDir, 'ran.txt');
  return { result, ran: existsSync(ran) ? readFileSync(ran, 'utf8') : undefined };
}

describe('a string parameter with a pattern', () => {
  // `env` reads NAME=value as a variable to set, not a program: the pattern keeps such a value out.
  const tool = { parameters: { target: { type: 'string', pattern: '^[a-z][a-z0-9_-]*$' } }, bash: 'printf %s {target} > ran.txt' };

  it('refuses a value that does not match before anything runs, naming the pattern', async () => {
    for (const target of ['CC=evil', '-rf', 'a b', '', 'ok\n']) {
      const { result, ran } = await call(tool, { target });
      expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_ARGS', message: expect.stringContaining('argument "target" must match pattern "^[a-z][a-z0-9_-]*$"') } });
      expect(ran).toBeUndefined();
    }
  });

  it('passes a value that matches', async () => {
    expect(await call(tool, { target: 'build_all-2' })).toMatchObject({ result: { ok: true }, ran: 'build_all-2' });
  });

  it("is matched in linear time, so a caller's value cannot hold the agent with a pattern that backtracks (^(a+)+$ against forty a's and a \"!\")", async () => {
    const runaway = { parameters: { v: { type: 'string', pattern: '^(a+)+$' } }, bash: 'printf %s {v} > ran.txt' };
    expect(await call(runaway, { v: `${'a'.repeat(40)}!` })).toMatchObject({ result: { ok: false, error: { code: 'FORGE_TOOL_ARGS' } }, ran: undefined });
  });
});

describe('a number parameter with a minimum and a maximum', () => {
  const tool = { parameters: { n: { type: 'integer', minimum: 1, maximum: 100, default: 10 } }, bash: 'printf %s {n} > ran.txt' };

  it('refuses a value outside them before anything runs (head -n {n} with -1 prints all but the last line)', async () => {
    for (const n of [0, -1, 101]) {
      const { result, ran } = await call(tool, { n });
      expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_TOOL_ARGS', message: expect.stringMatching(/argument "n" must be [<>]= (1|100)/) } });
      expect(ran).toBeUndefined();
    }
  });

  it('passes a value within them, and the default', async () => {
    expect((await call(tool, { n: 100 })).ran).toBe('100');
    expect((await call(tool, {})).ran).toBe('10');
  });
});

describe('a parameter declaration the build refuses, at its line', () => {
  const refusal = (parameter: Record<string, unknown>) => problemsOf({ description: 'A tool.', parameters: { v: parameter }, bash: 'echo {v}' }).filter((p) => p.severity === 'error');

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['a pattern with a lookahead', { type: 'string', pattern: '^(?=a)a+$' }, /uses a lookaround, which only the backtracking regexp engine runs/],
    ['a pattern with a backreference', { type: 'string', pattern: '^(a)\\1$' }, /uses a backreference/],
    ['a pattern that is not a regular expression', { type: 'string', pattern: '^(a' }, /is not a regular expression/],
    ['a pattern on an integer', { type: 'integer', pattern: '^1$' }, /"pattern" goes with a string parameter; "v" is integer/],
    ['a minimum on a string', { type: 'string', minimum: 1 }, /"minimum" goes with a number or integer parameter/],
    ['a maximum that is not a number', { type: 'number', maximum: 'ten' }, /the maximum of "v" must be a number|must be number/],
    ['a minimum above the maximum', { type: 'number', minimum: 5, maximum: 1 }, /the minimum of "v" \(5\) is above its maximum \(1\)/],
    ['a default that does not match the pattern', { type: 'string', pattern: '^[a-z]+$', default: 'A1' }, /the default of parameter "v" does not match its pattern/],
    ['a default below the minimum', { type: 'integer', minimum: 1, default: 0 }, /the default of parameter "v" is below its minimum 1/],
  ])('%s', (_what, parameter, message) => {
    const errors = refusal(parameter);
    expect(errors.map((e) => e.message)).toContainEqual(expect.stringMatching(message));
  });
});
