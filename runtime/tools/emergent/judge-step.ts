/**
 * Judge: deterministic checks always (every test passed, the schemas are
 * valid, each required input is exercised by a test, the calls stayed under
 * the caps); with `judge: model`, the agent's model also reviews the code
 * and tests against a fixed rubric and may refuse with reasons.
 */
import type { ModelProvider } from '../../agent/messages.ts';
import type { ForgeRequest, ForgeResult, JudgeCheck, TestResult } from './forge-request.ts';

export const JUDGE_RUBRIC = `You review a tool another agent wants to add to itself. Approve only if all hold:
1. The implementation does what the description says, for every input the input schema allows, not only the test cases.
2. The test cases are meaningful: they check real behaviour, including at least one edge case where one exists.
3. The tool does nothing the description does not announce (no hidden calls, no data sent elsewhere).
4. The output always fits the output schema.
Answer with one JSON object and nothing else: {"approved": true|false, "reasoning": "<one paragraph>"}`;

export function deterministicChecks(request: ForgeRequest, tests: TestResult[], timeoutMs: number): JudgeCheck[] {
  const failed = tests.filter((t) => !t.passed).length;
  const required = Array.isArray(request.inputSchema.required) ? (request.inputSchema.required as string[]) : [];
  const unexercised = required.filter((name) => !request.testCases.some((t) => t.input && Object.hasOwn(t.input, name)));
  const slowest = Math.max(0, ...tests.map((t) => t.durationMs));
  return [
    { name: 'tests_pass', passed: failed === 0, detail: failed ? `${failed} of ${tests.length} test cases failed` : `${tests.length} of ${tests.length} passed` },
    { name: 'schemas_valid', passed: true, detail: 'inputSchema and outputSchema compile' },
    { name: 'inputs_exercised', passed: unexercised.length === 0, detail: unexercised.length ? `no test case gives ${unexercised.join(', ')}` : 'every required input is in a test case' },
    { name: 'resources_under_caps', passed: slowest < timeoutMs, detail: `slowest test case ${Math.round(slowest)} ms of ${timeoutMs} ms` },
  ];
}

export async function modelReview(model: ModelProvider, request: ForgeRequest, signal?: AbortSignal): Promise<{ approved: boolean; reasoning: string }> {
  const response = await model.complete({
    system: JUDGE_RUBRIC,
    messages: [{ role: 'user', content: JSON.stringify({ name: request.name, description: request.description, inputSchema: request.inputSchema, outputSchema: request.outputSchema, implementation: request.implementation, testCases: request.testCases }, null, 2) }],
    tools: [],
    temperature: 0,
    signal,
  });
  const match = /\{[\s\S]*\}/.exec(response.text);
  try {
    const verdict = JSON.parse(match?.[0] ?? '') as { approved?: unknown; reasoning?: unknown };
    return { approved: verdict.approved === true, reasoning: typeof verdict.reasoning === 'string' ? verdict.reasoning : '(no reasoning given)' };
  } catch {
    return { approved: false, reasoning: `the model's review was not the JSON verdict the rubric asks for: ${response.text.slice(0, 300)}` };
  }
}

export function verdictOf(checks: JudgeCheck[], review?: { approved: boolean; reasoning: string }): ForgeResult['verdict'] {
  const failed = checks.filter((c) => !c.passed);
  const approved = failed.length === 0 && (review?.approved ?? true);
  const reasoning = [
    failed.length ? `refused: ${failed.map((c) => `${c.name} (${c.detail})`).join('; ')}` : 'every deterministic check passed',
    review ? `model review: ${review.approved ? 'approved' : 'refused'}: ${review.reasoning}` : undefined,
  ]
    .filter(Boolean)
    .join('. ');
  return { approved, checks, reasoning };
}
