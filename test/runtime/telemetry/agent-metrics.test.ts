/**
 * The agent's own metrics, recorded as it works: model tokens and calls per
 * model, approvals asked, granted and denied, turns, a fallback seen as a
 * failed model span followed by the next, and egress refusals.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../../runtime/agent/agent.ts';
import { FileConversations } from '../../../runtime/state/file-conversations.ts';
import { createModelClient } from '../../../runtime/agent/providers/create-model.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { approvals, egressRefusals, modelCalls, modelTokens, turns, turnsInFlight } from '../../../runtime/telemetry/forge-metrics.ts';
import { addSpanProcessor, type FinishedSpan } from '../../../runtime/telemetry/tracer.ts';
import { ok } from '../../../runtime/tools/model.ts';
import { ToolRegistry } from '../../../runtime/tools/registry.ts';
import { clientCalls } from '../../../runtime/server/client-calls.ts';
import { tempDir } from '../../helpers/project.ts';
import { startScriptedOpenAI } from '../../helpers/scripted-llm.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function agentWith(baseUrls: string[]) {
  const registry = new ToolRegistry({ workDir: process.cwd() });
  registry.register({ name: 'drop_table', description: 'Drops.', category: 'custom', tags: ['write'], inputSchema: { type: 'object' }, execute: async () => ok('dropped') }, 'test');
  const [main, ...fallbacks] = baseUrls.map((url, i) => ({ provider: 'openai' as const, name: `model-${i}`, base_url: `${url}/v1` }));
  const model = createModelClient({ ...main, fallbacks }, new HttpClient(), {});
  return new Agent({
    manifest: { agent_id: 'metrics-agent', version: '1.0.0', description: 'x' },
    tools: clientCalls(registry),
    model,
    gate: { decide: (spec) => (spec.tags.includes('write') ? 'ask' : 'allow') },
    sessions: new FileConversations(tempDir()),
  });
}

describe('agent metrics', () => {
  it('counts tokens per model, approvals asked, granted and denied, and turns', async () => {
    const llm = await startScriptedOpenAI([
      { toolCalls: [{ id: 'c1', name: 'drop_table', arguments: {} }] },
      { text: 'Dropped.' },
      { toolCalls: [{ id: 'c2', name: 'drop_table', arguments: {} }] },
      { text: 'Not dropped.' },
    ]);
    const agent = agentWith([llm.url]);
    const before = { asked: approvals.get({ decision: 'asked', by: 'policy' }), granted: approvals.get({ decision: 'granted', by: 'person' }), denied: approvals.get({ decision: 'denied', by: 'person' }), completed: turns.get({ status: 'completed' }), input: modelTokens.get({ model: 'openai:model-0', type: 'input' }) };

    expect((await agent.send('c', 'drop it')).status).toBe('input-required');
    expect((await agent.resume('c', { c1: true })).status).toBe('completed');
    expect((await agent.send('c', 'again')).status).toBe('input-required');
    expect((await agent.resume('c', { c2: false })).status).toBe('completed');

    expect(approvals.get({ decision: 'asked', by: 'policy' }) - before.asked).toBe(2);
    expect(approvals.get({ decision: 'granted', by: 'person' }) - before.granted).toBe(1);
    expect(approvals.get({ decision: 'denied', by: 'person' }) - before.denied).toBe(1);
    expect(turns.get({ status: 'completed' }) - before.completed).toBe(2);
    expect(turnsInFlight.get()).toBe(0);
    expect(modelTokens.get({ model: 'openai:model-0', type: 'input' }) - before.input).toBeGreaterThan(0);
    expect(modelCalls.get({ model: 'openai:model-0', outcome: 'ok' })).toBeGreaterThanOrEqual(4);
  });

  it('shows a fallback as a failed model span followed by the next model, under the same turn', async () => {
    const broken = await startScriptedOpenAI([{ status: 503, text: 'overloaded' }]);
    const good = await startScriptedOpenAI([{ text: 'Hello from the fallback.' }]);
    const spans: FinishedSpan[] = [];
    cleanups.push(addSpanProcessor((s) => spans.push(s)));
    const outcome = await agentWith([broken.url, good.url]).send('f', 'hi');
    expect(outcome).toMatchObject({ status: 'completed', text: 'Hello from the fallback.' });
    const models = spans.filter((s) => s.name.startsWith('chat '));
    const turn = spans.find((s) => s.name === 'invoke_agent metrics-agent')!;
    expect(models.map((s) => [s.name, s.status.code])).toEqual([['chat model-0', 'error'], ['chat model-1', 'unset']]);
    expect(models[0].status.message).toContain('overloaded');
    for (const s of models) expect(s.parentSpanId).toBe(turn.spanId);
    expect(modelCalls.get({ model: 'openai:model-0', outcome: 'error' })).toBeGreaterThanOrEqual(1);
  });

  it('counts a request the egress policy refuses', async () => {
    const before = egressRefusals.get();
    const http = new HttpClient({ checkUrl: (url) => ({ host: url.hostname, rule: 'test rule' }), checkAddress: () => undefined });
    await expect(http.request({ url: 'http://example.test/' })).rejects.toThrow(/refused/);
    expect(egressRefusals.get() - before).toBe(1);
  });
});
