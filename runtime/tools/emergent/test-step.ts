/**
 * Test — binding: every test case runs through the real tool (its sandbox
 * process or its composition, through the registry). The output must equal
 * expectedOutput (JSON deep equality) and validate against outputSchema;
 * a failing case shows input, expected, actual and a diff.
 */
import { isDeepStrictEqual } from 'node:util';
import { createTwoFilesPatch } from 'diff';
import type { ExecuteOptions, JSONSchema } from '../model.ts';
import type { ToolRegistry } from '../registry.ts';
import { createAjv, describeArgumentError } from '../validation.ts';
import type { ForgeRequest, TestResult } from './forge-request.ts';

let outputAjv: ReturnType<typeof createAjv> | undefined;

export function outputProblem(schema: JSONSchema, value: unknown): string | undefined {
  const { $schema: _dialect, ...rest } = schema;
  const validate = (outputAjv ??= createAjv()).compile(rest);
  if (validate(value)) return undefined;
  return `the output does not match outputSchema: ${(validate.errors ?? []).map(describeArgumentError).join('; ')}`;
}

export function jsonDiff(expected: unknown, actual: unknown): string {
  const text = (v: unknown) => (v === undefined ? 'undefined' : JSON.stringify(v, null, 2)) + '\n';
  return createTwoFilesPatch('expected', 'actual', text(expected), text(actual), undefined, undefined, { context: 3 })
    .split('\n')
    .filter((line) => !line.startsWith('==='))
    .join('\n')
    .trim();
}

/** Runs the test cases one after another through `registry` (the tool is registered, hidden, while they run). */
export async function testStep(request: ForgeRequest, registry: ToolRegistry, options: ExecuteOptions): Promise<TestResult[]> {
  const results: TestResult[] = [];
  for (const testCase of request.testCases) {
    const started = performance.now();
    const result = await registry.execute(request.name, structuredClone(testCase.input), { ...options, approved: true });
    const durationMs = performance.now() - started;
    if (!result.ok) {
      results.push({ input: testCase.input, expected: testCase.expectedOutput, passed: false, error: `${result.error.code}: ${result.error.message}`, durationMs });
      continue;
    }
    const actual = result.value;
    const equal = isDeepStrictEqual(normalize(actual), normalize(testCase.expectedOutput));
    const schemaError = outputProblem(request.outputSchema, actual);
    const entry: TestResult = { input: testCase.input, expected: testCase.expectedOutput, actual, passed: equal && !schemaError, durationMs };
    if (!equal) entry.diff = jsonDiff(testCase.expectedOutput, actual);
    if (schemaError) entry.error = schemaError;
    results.push(entry);
  }
  return results;
}

/** JSON's view of a value (what a client would receive), so equality is JSON equality. */
function normalize(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}
