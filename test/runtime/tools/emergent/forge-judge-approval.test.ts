/**
 * forge_tool's judge with `judge: model` (the agent's model on loopback,
 * speaking the OpenAI wire format, reviews against the fixed rubric and may
 * refuse with reasons), and forge_tool under the approval policy: a person
 * approves a forge by default; `auto_approve: [name:forge_tool]` lifts that.
 */
import { describe, expect, it } from 'vitest';
import { ApprovalPolicy } from '../../../../runtime/guard/approval-policy.ts';
import { findCatalogEntry } from '../../../../runtime/tools/catalog.ts';
import { JUDGE_RUBRIC } from '../../../../runtime/tools/emergent/judge-step.ts';
import type { ForgeResult } from '../../../../runtime/tools/emergent/forge-request.ts';
import { HttpClient } from '../../../../runtime/net/http-client.ts';
import { tools } from '../../../helpers/tools.ts';
import { tempDir } from '../../../helpers/project.ts';
import { startScriptedOpenAI } from '../../../helpers/scripted-llm.ts';

const addNumbers = {
  name: 'add_numbers',
  description: 'Add two numbers.',
  inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  outputSchema: { type: 'object' },
  implementation: { mode: 'sandbox', code: 'function execute(input) { return { sum: input.a + input.b }; }' },
  testCases: [{ input: { a: 1, b: 2 }, expectedOutput: { sum: 3 } }],
};

async function forgeWithModel(verdict: string) {
  const llm = await startScriptedOpenAI([{ text: verdict }]);
  const h = await tools(['forge_tool'], {
    workDir: tempDir(),
    config: { forge_tool: { judge: 'model' } },
    agentConfig: { model: { provider: 'openai', name: 'reviewer', base_url: `${llm.url}/v1` } },
    http: new HttpClient(),
    env: { OPENAI_API_KEY: 'test' },
  });
  const result = await h.registry.execute('forge_tool', addNumbers, { session: 'context:judge' });
  return { result: (result as { value: ForgeResult }).value, llm, registry: h.registry };
}

describe('judge: model', () => {
  it('asks the model with the fixed rubric and registers the tool it approves', async () => {
    const { result, llm, registry } = await forgeWithModel('{"approved": true, "reasoning": "Adds, as described."}');
    expect(result).toMatchObject({ success: true, verdict: { approved: true, reasoning: expect.stringContaining('model review: approved: Adds, as described.') } });
    expect(llm.bodies[0].messages[0]).toMatchObject({ role: 'system', content: JUDGE_RUBRIC });
    expect(llm.bodies[0].messages[1].content).toContain('input.a + input.b');
    expect(registry.has('add_numbers')).toBe(true);
  });

  it('refuses with the model\'s reasons', async () => {
    const { result, registry } = await forgeWithModel('{"approved": false, "reasoning": "The tests do not cover negative numbers."}');
    expect(result).toMatchObject({ success: false, verdict: { approved: false, reasoning: expect.stringContaining('negative numbers') }, errors: [{ code: 'FORGE_FORGE_REFUSED' }] });
    expect(registry.has('add_numbers')).toBe(false);
  });

  it('refuses when the model does not answer with the verdict', async () => {
    const { result } = await forgeWithModel('Looks fine to me!');
    expect(result.verdict).toMatchObject({ approved: false, reasoning: expect.stringContaining('not the JSON verdict') });
  });
});

describe('forge_tool under the approval policy', () => {
  it('is tagged so a person approves it by default, and auto_approve name:forge_tool lifts that', async () => {
    const { spec } = (await findCatalogEntry('forge_tool')!.load()).default;
    expect(spec.tags).toContain('run');
    expect(ApprovalPolicy.create({ auto_approve: ['tag:read'], auto_deny: [] }).decide(spec).decision).toBe('ask');
    expect(ApprovalPolicy.create({ auto_approve: ['tag:read', 'name:forge_tool'], auto_deny: [] }).decide(spec).decision).toBe('allow');
  });
});
