import { fail, ok } from '../model.ts';
import { defineBuiltin } from './define.ts';
import { CONSTANTS, evaluate, ExpressionError, FUNCTIONS } from './math/expression.ts';

export default defineBuiltin({
  spec: {
    name: 'math_calculate',
    description: [
      'Evaluate an arithmetic expression exactly as written (it is parsed, never run as code).',
      'Operators: + - * / % (remainder), ^ or ** (power, right to left), unary minus, parentheses; -2^2 is -4. Precedence as in mathematics.',
      `Functions: ${Object.keys(FUNCTIONS).join(', ')} (log(x) is the natural logarithm, log(x, b) to base b; round(x, n) to n decimals; angles in radians). Constants: ${Object.keys(CONSTANTS).join(', ')}.`,
      'The result is rounded to 15 significant digits (so 0.1 + 0.2 gives 0.3). Division by zero, bad syntax, unknown names and results outside the real numbers are errors giving the column.',
    ].join('\n'),
    category: 'builtin',
    tags: ['read'],
    inputSchema: {
      type: 'object',
      required: ['expression'],
      additionalProperties: false,
      properties: {
        expression: { type: 'string', minLength: 1, maxLength: 2000, description: 'The expression, e.g. "sqrt(2) * (3 + 4)^2".' },
      },
    },
  },
  create: () => ({
    async execute(args) {
      const { expression } = args;
      let value: number;
      try {
        value = evaluate(expression);
      } catch (err) {
        if (!(err instanceof ExpressionError)) throw err;
        return fail('FORGE_MATH_ERROR', `${err.message}\n${expression}\n${' '.repeat(Math.max(0, err.column - 1))}^`, err.hint);
      }
      if (!Number.isFinite(value)) return fail('FORGE_MATH_ERROR', `the result is ${Number.isNaN(value) ? 'not a number' : 'too large to represent'}`);
      const result = Number(value.toPrecision(15));
      return ok({ expression, result: Object.is(result, -0) ? 0 : result });
    },
  }),
});
