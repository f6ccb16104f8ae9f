import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../helpers/project.ts';
import { tools, type ToolHarness } from '../../../helpers/tools.ts';

let t: ToolHarness;
beforeAll(async () => {
  t = await tools(['math_calculate'], { workDir: tempDir() });
});

describe('math_calculate', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['10 - 4 - 3', 3],
    ['100 / 10 / 5', 2],
    ['7 % 4', 3],
    ['-2^2', -4],
    ['(-2)^2', 4],
    ['2^3^2', 512],
    ['2 ** 10', 1024],
    ['2^-1', 0.5],
    ['--3', 3],
    ['-(1 + 2) * -3', 9],
    ['+5', 5],
    ['.5 + 1.25e2', 125.5],
    ['0.1 + 0.2', 0.3],
    ['sqrt(16) + abs(-3)', 7],
    ['pow(2, 8)', 256],
    ['min(4, 2, 8) + max(1, 9)', 11],
    ['round(2.5) + round(-2.5)', 0],
    ['round(3.14159, 2)', 3.14],
    ['floor(2.7) + ceil(2.1)', 5],
    ['log(e)', 1],
    ['log(1000, 10)', 3],
    ['log10(100) + log2(8) + ln(1)', 5],
    ['sin(pi / 2) + cos(0)', 2],
    ['SQRT(9) * PI / pi', 3],
    ['2 × 3 ÷ 4', 1.5],
    ['atan2(1, 1) * 4', Math.PI],
  ])('%s = %d', async (expression, result) => {
    expect(await t.value('math_calculate', { expression })).toEqual({ expression, result: Number(result.toPrecision(15)) });
  });

  it.each([
    ['1 / 0', 'division by zero at column 3'],
    ['5 % (2 - 2)', 'modulo by zero at column 3'],
    ['0 ^ -1', 'division by zero at column 3'],
    ['1 +', 'ends early at column 4'],
    ['(1 + 2', 'missing ")" for the "(" at column 1'],
    ['1 + 2)', 'unexpected ")" at column 6'],
    ['2 3', 'missing operator before "3" at column 3'],
    ['2x', 'missing operator before "x" at column 2'],
    ['1 + $', 'unexpected character "$" at column 5'],
    ['sqr(4)', 'unknown function "sqr" at column 1'],
    ['foo + 1', 'unknown name "foo" at column 1'],
    // Names Object.prototype has are no constants or functions of the calculator.
    ['constructor + 1', 'unknown name "constructor" at column 1'],
    ['__proto__', 'unknown name "__proto__" at column 1'],
    ['Constructor(1)', 'unknown function "Constructor" at column 1'],
    ['__proto__(2)', 'unknown function "__proto__" at column 1'],
    ['sqrt(-1)', 'sqrt of a negative number'],
    ['log(0)', 'not positive'],
    ['(-8) ^ 0.5', 'not a real number'],
    ['pow(2)', 'pow() takes 2 arguments, got 1'],
    ['sqrt', 'sqrt is a function'],
    ['1.2.3', 'malformed number at column 1'],
    ['', 'the expression is empty'],
    ['10 ^ 400', 'too large'],
  ])('refuses %j: %s', async (expression, message) => {
    const result = await t.call('math_calculate', { expression });
    expect(result).toMatchObject({ ok: false, error: { code: expression === '' ? 'FORGE_TOOL_ARGS' : 'FORGE_MATH_ERROR' } });
    if (!result.ok && expression !== '') expect(result.error.message).toContain(message);
  });

  it('points a caret at the column', async () => {
    const result = await t.call('math_calculate', { expression: '3 * (4 / 0)' });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.message.split('\n').slice(1)).toEqual(['3 * (4 / 0)', '       ^']);
  });

  it('suggests the function meant', async () => {
    expect(await t.call('math_calculate', { expression: 'sqtr(4)' })).toMatchObject({ ok: false, error: { hint: 'did you mean "sqrt"?' } });
  });

  it('never evaluates code', async () => {
    for (const expression of ['process.exit(1)', 'constructor.constructor("return 1")()', '[].map']) {
      expect(await t.call('math_calculate', { expression })).toMatchObject({ ok: false, error: { code: 'FORGE_MATH_ERROR' } });
    }
  });

  it('refuses deeply nested input without overflowing the stack', async () => {
    const result = await t.call('math_calculate', { expression: '('.repeat(900) + '1' + ')'.repeat(900) });
    expect(result).toMatchObject({ ok: false, error: { code: 'FORGE_MATH_ERROR', message: expect.stringContaining('nested too deeply') } });
  });
});
