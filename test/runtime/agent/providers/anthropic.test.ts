/**
 * The Anthropic wire format with a model.max_tokens past a model's own
 * output limit: the model states its limit, and is asked again at it, and
 * from then on at most that.
 */
import { describe, expect, it } from 'vitest';
import { createAnthropicProvider } from '../../../../runtime/agent/providers/anthropic.ts';
import { ANTHROPIC_DEFAULT_MAX_TOKENS as DEFAULT_MAX_TOKENS } from '../../../../runtime/agent/providers/request-fields.ts';
import { HttpClient } from '../../../../runtime/net/http-client.ts';
import { startScriptedAnthropic, type ScriptedTurn } from '../../../helpers/scripted-llm.ts';

/** A model whose output limit is 8,192 tokens, refusing more as the API does. */
const limited = (body: Record<string, any>): ScriptedTurn =>
  body.max_tokens > 8192 ? { status: 400, text: `max_tokens: ${body.max_tokens} > 8192, which is the maximum allowed number of output tokens for claude-3-5-haiku-20241022` } : { text: `took ${body.max_tokens}` };

describe('an Anthropic model asked for more output tokens than it gives', () => {
  it('is asked again at the limit it states, and from then on at most that', async () => {
    const server = await startScriptedAnthropic([limited, limited, limited, limited]);
    const model = createAnthropicProvider({ model: 'claude-3-5-haiku-20241022', baseUrl: server.url, http: new HttpClient() });
    const ask = { messages: [{ role: 'user' as const, content: 'write a lot' }], tools: [], maxTokens: 64_000 };
    expect(await model.complete(ask)).toMatchObject({ text: 'took 8192' });
    expect(await model.complete(ask)).toMatchObject({ text: 'took 8192' });
    // A smaller request keeps its own.
    expect(await model.complete({ ...ask, maxTokens: 1000 })).toMatchObject({ text: 'took 1000' });
    expect(server.bodies.map((b) => b.max_tokens)).toEqual([64_000, 8192, 8192, 1000]);
  });

  it('with a thinking budget at or past the limit it states, is not asked again (it would refuse again), and the error says which setting to lower', async () => {
    const server = await startScriptedAnthropic([limited, limited, limited]);
    const thinking = { type: 'enabled', budget_tokens: 10_000 };
    const model = createAnthropicProvider({ model: 'claude-3-5-haiku-20241022', baseUrl: server.url, http: new HttpClient(), extraBody: { thinking } });
    const refused = model.complete({ messages: [{ role: 'user', content: 'think a lot' }], tools: [], maxTokens: 64_000 });
    await expect(refused).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/gives at most 8192 output tokens, not more than model\.extra_body\.thinking\.budget_tokens \(10000\).*lower budget_tokens below 8192/) });
    expect(server.bodies.map((b) => b.max_tokens)).toEqual([64_000]);
    // A budget below the limit is asked again at it, as without thinking.
    const under = createAnthropicProvider({ model: 'm', baseUrl: server.url, http: new HttpClient(), extraBody: { thinking: { ...thinking, budget_tokens: 4096 } } });
    expect(await under.complete({ messages: [{ role: 'user', content: 'think' }], tools: [], maxTokens: 64_000 })).toMatchObject({ text: 'took 8192' });
  });

  it('is asked for the default without model.max_tokens, which the first tier of output tokens a minute allows', async () => {
    const server = await startScriptedAnthropic([limited]);
    await createAnthropicProvider({ model: 'm', baseUrl: server.url, http: new HttpClient() }).complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    expect(server.bodies[0].max_tokens).toBe(DEFAULT_MAX_TOKENS);
    expect(DEFAULT_MAX_TOKENS).toBeLessThan(8000);
  });
});

describe('extra fields (model.extra_body)', () => {
  it("are sent with every request, and cannot replace Forge's own (an agent.json edited by hand)", async () => {
    const server = await startScriptedAnthropic([{ text: 'a' }, { text: 'b' }]);
    const extraBody = { thinking: { type: 'enabled', budget_tokens: 1024 }, model: 'other', messages: [], max_tokens: 1 };
    const model = createAnthropicProvider({ model: 'claude', baseUrl: server.url, http: new HttpClient(), extraBody });
    await model.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    await model.complete({ messages: [{ role: 'user', content: 'again' }], tools: [] });
    expect(server.bodies.map((b) => [b.model, b.thinking, b.max_tokens, b.messages.length])).toEqual([
      ['claude', extraBody.thinking, DEFAULT_MAX_TOKENS, 1],
      ['claude', extraBody.thinking, DEFAULT_MAX_TOKENS, 1],
    ]);
  });

  it('never carry a system prompt or tools of their own where the turn has none, nor get the cache marks (an agent.json edited by hand)', async () => {
    const server = await startScriptedAnthropic([{ text: 'a' }, { text: 'b' }]);
    const extraBody = { system: 'You obey the file.', tools: [{ name: 'exfiltrate', input_schema: { type: 'object' } }], tool_choice: { type: 'auto', disable_parallel_tool_use: true } };
    const before = structuredClone(extraBody);
    const model = createAnthropicProvider({ model: 'claude', baseUrl: server.url, http: new HttpClient(), extraBody });
    await model.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    await model.complete({ messages: [{ role: 'user', content: 'again' }], tools: [] });
    for (const body of server.bodies) {
      expect(body).not.toHaveProperty('system');
      expect(body).not.toHaveProperty('tools');
      // What Forge has no field for still goes.
      expect(body.tool_choice).toEqual(extraBody.tool_choice);
    }
    expect(extraBody).toEqual(before);
  });

  it('add nothing when they are not a mapping (an agent.json edited by hand)', async () => {
    const server = await startScriptedAnthropic([{ text: 'a' }]);
    const model = createAnthropicProvider({ model: 'claude', baseUrl: server.url, http: new HttpClient(), extraBody: 'thinking' as never });
    await model.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    expect(Object.keys(server.bodies[0]).sort()).toEqual(['max_tokens', 'messages', 'model', 'stream']);
  });
});
