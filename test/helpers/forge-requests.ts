/**
 * forge_tool requests the tests send: add_numbers (sandboxed code) and
 * calc_json (a composition of two builtins). One copy, so the unit, CLI and
 * bundle suites forge the same tools.
 */
export const addNumbers = {
  name: 'add_numbers',
  description: 'Add two numbers.',
  inputSchema: { type: 'object', properties: { a: { type: 'number', description: 'First.' }, b: { type: 'number', description: 'Second.' } }, required: ['a', 'b'] },
  outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
  implementation: { mode: 'sandbox', code: 'function execute(input) { return { sum: input.a + input.b }; }' },
  testCases: [{ input: { a: 1, b: 2 }, expectedOutput: { sum: 3 } }, { input: { a: 0.5, b: 0.25 }, expectedOutput: { sum: 0.75 } }],
};

export const calcJson = {
  name: 'calc_json',
  description: 'Compute an arithmetic expression and give its result as parsed JSON.',
  inputSchema: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] },
  outputSchema: { type: 'object', properties: { result: { type: 'number' } }, required: ['result'] },
  implementation: {
    mode: 'compose',
    steps: [
      { tool: 'math_calculate', args: { expression: '{expression}' }, output_var: 'calc' },
      { tool: 'json_parse', args: { text: '{{"result": {calc.result}}}' }, output_var: 'parsed' },
    ],
    output: '{parsed.value}',
  },
  testCases: [{ input: { expression: '6*7' }, expectedOutput: { result: 42 } }],
};
