/**
 * Test — binding: every test case runs through the real tool (its sandbox
 * process or its composition, through the registry). The output must equal
 * expectedOutput (JSON deep equality) and validate against outputSchema;
 * a failing case shows input, expected, actual and a diff.
 */
import { isDeepStrictEqual } from 'node:util';
import { createTwoFilesPatch } from 'diff';
import type { ExecuteOptions } from '../model.ts';
import type { ToolRegistry } from '../registry.ts';
import type { ForgeRequest, TestResult } from './forge-request.ts';

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
    // The candidate is hidden from every session while it is tested; what it calls is still the session's.
    const result = await registry.execute(request.name, structuredClone(testCase.input), { ...options, approved: true, sees: 'this-tool' });
    const durationMs = performance.now() - started;
    if (!result.ok) {
      const entry: TestResult = { input: testCase.input, expected: testCase.expectedOutput, passed: false, error: `${result.error.code}: ${result.error.message}`, durationMs };
      // A result that broke outputSchema still shows what it was, and how it differs.
      const actual = result.error.code === 'FORGE_TOOL_OUTPUT' ? parseDetails(result.error.details) : undefined;
      if (actual !== undefined) {
        entry.actual = actual.value;
        if (!isDeepStrictEqual(normalize(actual.value), normalize(testCase.expectedOutput))) entry.diff = jsonDiff(testCase.expectedOutput, actual.value);
      }
      results.push(entry);
      continue;
    }
    // The tool checked its result against outputSchema already (output-contract.ts).
    const actual = result.value;
    const equal = isDeepStrictEqual(normalize(actual), normalize(testCase.expectedOutput));
    const entry: TestResult = { input: testCase.input, expected: testCase.expectedOutput, actual, passed: equal, durationMs };
    if (!equal) entry.diff = jsonDiff(testCase.expectedOutput, actual);
    results.push(entry);
  }
  return results;
}

function parseDetails(details: string | undefined): { value: unknown } | undefined {
  try {
    return details === undefined ? undefined : { value: JSON.parse(details) };
  } catch {
    return undefined; // cut at 2,000 characters: not shown
  }
}

/** JSON's view of a value (what a client would receive), so equality is JSON equality. */
function normalize(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}
