/**
 * The OpenAI wire format with models that refuse a setting forge.yaml gave:
 * OpenAI's reasoning models take max_completion_tokens, not max_tokens, and
 * only their own temperature. Refused once, sent as they take it from then on.
 */
import { describe, expect, it } from 'vitest';
import { createOpenAIProvider } from '../../../../runtime/agent/providers/openai.ts';
import { HttpClient } from '../../../../runtime/net/http-client.ts';
import { startScriptedOpenAI, type ScriptedTurn } from '../../../helpers/scripted-llm.ts';

/** A model that answers as OpenAI's reasoning models do to max_tokens and to a temperature. */
const reasoningModel = (body: Record<string, any>): ScriptedTurn => {
  if ('max_tokens' in body) return { status: 400, text: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead." };
  if ('temperature' in body) return { status: 400, text: `Unsupported value: 'temperature' does not support ${body.temperature} with this model. Only the default (1) value is supported.` };
  return { text: `took ${JSON.stringify({ max_completion_tokens: body.max_completion_tokens })}` };
};

const ask = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [], maxTokens: 500, temperature: 0.2 };

describe('an OpenAI model that refuses max_tokens and a temperature', () => {
  it('is sent max_completion_tokens and no temperature once it refused them, and from then on without asking twice', async () => {
    const server = await startScriptedOpenAI(Array.from({ length: 10 }, () => reasoningModel));
    const model = createOpenAIProvider({ model: 'o-reasoning', baseUrl: `${server.url}/v1`, http: new HttpClient() });
    expect(await model.complete(ask)).toMatchObject({ text: 'took {"max_completion_tokens":500}' });
    expect(server.bodies).toHaveLength(3);
    expect(await model.complete(ask)).toMatchObject({ text: 'took {"max_completion_tokens":500}' });
    expect(server.bodies).toHaveLength(4);
    expect(server.bodies[3]).not.toHaveProperty('temperature');
  });

  it('sends max_tokens and the temperature to a model that takes them (most OpenAI-compatible servers know no other)', async () => {
    const server = await startScriptedOpenAI([{ text: 'fine' }]);
    const model = createOpenAIProvider({ model: 'local', baseUrl: `${server.url}/v1`, http: new HttpClient() });
    await model.complete(ask);
    expect(server.bodies[0]).toMatchObject({ max_tokens: 500, temperature: 0.2 });
    expect(server.bodies[0]).not.toHaveProperty('max_completion_tokens');
  });

  it('fails on any other 400, asking once', async () => {
    const server = await startScriptedOpenAI([{ status: 400, text: "Unsupported parameter: 'tools' is not supported with this model." }, { text: 'never' }]);
    const model = createOpenAIProvider({ model: 'old', baseUrl: `${server.url}/v1`, http: new HttpClient() });
    await expect(model.complete(ask)).rejects.toThrow("Unsupported parameter: 'tools'");
    expect(server.bodies).toHaveLength(1);
  });
});
