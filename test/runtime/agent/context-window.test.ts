/**
 * A conversation that outgrows the model's context window: the earliest
 * turns are left out of what is sent (never a tool call without its result),
 * learned from the provider's refusal, while the conversation is kept whole.
 */
import { describe, expect, it } from 'vitest';
import { Agent } from '../../../runtime/agent/agent.ts';
import { isContextTooLong } from '../../../runtime/agent/context-window.ts';
import { ProviderError } from '../../../runtime/agent/messages.ts';
import { createModelClient } from '../../../runtime/agent/providers/create-model.ts';
import { FileConversations } from '../../../runtime/state/file-conversations.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { ok } from '../../../runtime/tools/model.ts';
import { ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';
import { startScriptedAnthropic, startScriptedOpenAI, type ScriptedTurn } from '../../helpers/scripted-llm.ts';

/** Each provider's words for a request past the context window. */
const TOO_LONG = {
  openai: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens. Please reduce the length of the messages.",
  anthropic: 'prompt is too long: 9001 tokens > 8192 maximum',
};

/**
 * A model that takes at most `limit` characters of messages: it calls `note` on a new question and
 * answers once it has the note's result. Every request it takes is kept, and every refusal counted.
 */
async function windowedModel(provider: 'openai' | 'anthropic', limit: number) {
  const taken: Record<string, any>[] = [];
  let refused = 0;
  const step = (body: Record<string, any>): ScriptedTurn => {
    if (JSON.stringify(body.messages).length > limit) return (refused++, { status: 400, text: TOO_LONG[provider] });
    taken.push(body);
    const last = body.messages.at(-1);
    const asked = last.role === 'user' && (typeof last.content === 'string' || last.content.some((part: { type: string }) => part.type === 'text'));
    return asked ? { toolCalls: [{ name: 'note', arguments: { n: taken.length } }] } : { text: `answer ${taken.length}` };
  };
  const server = await (provider === 'openai' ? startScriptedOpenAI : startScriptedAnthropic)(Array.from({ length: 400 }, () => step));
  return { server, taken, refusals: () => refused };
}

function agentOn(provider: 'openai' | 'anthropic', url: string, sessions = new FileConversations(tempDir())) {
  const registry = new ToolRegistry({ workDir: process.cwd() });
  registry.register({ name: 'note', description: 'Takes a note.', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async (args) => ok({ noted: args, padding: 'n'.repeat(300) }) }, 'test');
  const agent = new Agent({
    manifest: { agent_id: 'long', version: '1.0.0', description: 'Keeps notes.' },
    tools: { list: () => registry.list(), execute: (n, a, o) => registry.execute(n, a, o) },
    model: createModelClient({ provider, name: 'windowed', base_url: provider === 'openai' ? `${url}/v1` : url }, new HttpClient(), {}),
    gate: { decide: () => 'allow' },
    sessions,
  });
  return { agent, sessions };
}

/** The tool-call ids of a request's assistant messages and the ids its tool results answer, in either wire format. */
function callsAndResults(body: Record<string, any>) {
  const calls: string[] = [];
  const results: string[] = [];
  for (const m of body.messages) {
    for (const c of m.tool_calls ?? []) calls.push(c.id);
    if (m.role === 'tool') results.push(m.tool_call_id);
    if (Array.isArray(m.content)) {
      for (const part of m.content) {
        if (part.type === 'tool_use') calls.push(part.id);
        if (part.type === 'tool_result') results.push(part.tool_use_id);
      }
    }
  }
  return { calls, results };
}

describe.each(['openai', 'anthropic'] as const)('a %s conversation longer than the context window', (provider) => {
  it('goes on: the earliest turns are left out of what is sent, learned once, and the conversation is kept whole', async () => {
    const model = await windowedModel(provider, 9000);
    const { agent, sessions } = agentOn(provider, model.server.url);
    for (let i = 0; i < 30; i++) {
      const outcome = await agent.send('daily', `question ${i}: ${'q'.repeat(400)}`);
      expect(outcome, `turn ${i}`).toMatchObject({ status: 'completed', text: expect.stringMatching(/^answer \d+$/) });
    }
    // Learned from the first refusal or two, not paid again at every turn.
    expect(model.refusals()).toBeGreaterThan(0);
    expect(model.refusals()).toBeLessThanOrEqual(3);
    const last = model.taken.at(-1)!;
    const sent = JSON.stringify(last.messages);
    expect(sent).toContain('question 29');
    expect(sent).not.toContain('question 0:');
    expect(JSON.stringify(provider === 'openai' ? last.messages[0] : last.system)).toMatch(/The \d+ earliest messages of this conversation are not shown/);
    // What is sent starts with the user's message, and every tool result goes with its call.
    for (const body of model.taken) {
      const first = provider === 'openai' ? body.messages[1] : body.messages[0];
      expect(first.role).toBe('user');
      const { calls, results } = callsAndResults(body);
      for (const id of results) expect(calls).toContain(id);
    }
    // Kept whole: every turn's question, call, result and answer.
    expect((await sessions.read('daily')).messages).toHaveLength(30 * 4);
  });

  it("keeps a cut where it is while the turns after it fit, so that a provider's prompt cache can hit: what is sent begins alike turn after turn", async () => {
    const model = await windowedModel(provider, 30_000);
    const { agent } = agentOn(provider, model.server.url);
    for (let i = 0; i < 70; i++) expect(await agent.send('long', `question ${i}: ${'q'.repeat(400)}`), `turn ${i}`).toMatchObject({ status: 'completed' });
    // What a request begins with: the system prompt (which notes the cut) and the first message sent.
    const beginning = (body: Record<string, any>) => JSON.stringify(provider === 'openai' ? body.messages.slice(0, 2) : [body.system, body.messages[0]]);
    const cut = model.taken.filter((body) => beginning(body).includes('earliest messages of this conversation are not shown'));
    expect(cut.length).toBeGreaterThan(40);
    let moves = 0;
    for (let i = 1; i < cut.length; i++) if (beginning(cut[i]) !== beginning(cut[i - 1])) moves++;
    // About 1,000 characters a turn against a window learned as about 18,000: a cut that moved at every turn moved
    // about 40 times, one that leaves room for the next turns moves every six turns or so.
    expect(moves).toBeLessThanOrEqual(cut.length / 6);
    expect(moves).toBeGreaterThan(0);
  });

  it('refuses with FORGE_MODEL_CONTEXT when the turn alone is too long, saying what to do', async () => {
    const model = await windowedModel(provider, 2000);
    const { agent } = agentOn(provider, model.server.url);
    expect(await agent.send('c', 'short question')).toMatchObject({ status: 'completed' });
    const error = await agent.send('c', 'x'.repeat(5000)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'FORGE_MODEL_CONTEXT', message: expect.stringContaining(`too long for model ${provider}:windowed on their own`), hint: expect.stringContaining('larger context window') });
  });
});

describe('a provider saying a request is too long', () => {
  it.each([
    ['OpenAI', "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens.", 400],
    ['OpenAI, by code', '{"code":"context_length_exceeded"}', 400],
    ['Anthropic', 'prompt is too long: 205000 tokens > 200000 maximum', 400],
    ['llama.cpp', 'the request exceeds the available context size, try increasing it', 400],
    ['Gemini (OpenAI endpoint)', 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).', 400],
    ['a gateway', 'Request Entity Too Large', 413],
  ])('is recognised: %s', (_who, message, status) => {
    expect(isContextTooLong(new ProviderError('p', message, status))).toBe(true);
  });

  it.each([
    ['a bad key', 'Incorrect API key provided', 401],
    ['a rate limit', 'Rate limit reached for requests', 429],
    ['a bad argument', "Invalid value for 'temperature'", 400],
  ])('is not confused with %s', (_what, message, status) => {
    expect(isContextTooLong(new ProviderError('p', message, status))).toBe(false);
  });
});

describe('a model with a fallback whose context window is smaller', () => {
  it("learns each model's window apart: the fallback's refusal does not cut what the main model is sent", async () => {
    // The main model takes any length, and is down for three requests (a try and its two retries) when told.
    let down = 0;
    const main = await startScriptedOpenAI(Array.from({ length: 100 }, () => (): ScriptedTurn => (down > 0 ? (down--, { status: 503, headers: { 'retry-after-ms': '0' }, text: 'overloaded' }) : { text: 'main answer' })));
    // The fallback takes at most 3,000 characters of messages.
    const fallback = await startScriptedOpenAI(Array.from({ length: 100 }, () => (body: Record<string, any>): ScriptedTurn => (JSON.stringify(body.messages).length > 3000 ? { status: 400, text: TOO_LONG.openai } : { text: 'fallback answer' })));
    const agent = new Agent({
      manifest: { agent_id: 'long', version: '1.0.0', description: 'Answers.' },
      tools: { list: () => [], execute: async () => ok(null) },
      model: createModelClient({ provider: 'openai', name: 'big', base_url: `${main.url}/v1`, fallbacks: [{ provider: 'openai', name: 'small', base_url: `${fallback.url}/v1` }] }, new HttpClient(), {}),
      sessions: new FileConversations(tempDir()),
    });
    for (let i = 0; i < 10; i++) expect(await agent.send('c', `question ${i}: ${'q'.repeat(400)}`)).toMatchObject({ status: 'completed', text: 'main answer' });
    down = 3;
    expect(await agent.send('c', `question 10: ${'q'.repeat(400)}`)).toMatchObject({ status: 'completed' });
    expect(await agent.send('c', `question 11: ${'q'.repeat(400)}`)).toMatchObject({ status: 'completed', text: 'main answer' });
    // The main model, which never refused, is sent the whole conversation again.
    const last = main.bodies.at(-1)!;
    expect(JSON.stringify(last.messages)).toContain('question 0:');
    expect(JSON.stringify(last.messages)).not.toContain('earliest messages of this conversation are not shown');
  });
  it('cuts what the main model is sent to its own smaller window rather than leaving every long turn to the fallback, and a turn too long for both fails with FORGE_MODEL_CONTEXT', async () => {
    const windowed = (limit: number, answer: string) => startScriptedOpenAI(Array.from({ length: 100 }, () => (body: Record<string, any>): ScriptedTurn => (JSON.stringify(body.messages).length > limit ? { status: 400, text: TOO_LONG.openai } : { text: answer })));
    const main = await windowed(3000, 'main answer');
    const fallback = await windowed(6000, 'fallback answer');
    const agent = new Agent({
      manifest: { agent_id: 'long', version: '1.0.0', description: 'Answers.' },
      tools: { list: () => [], execute: async () => ok(null) },
      model: createModelClient({ provider: 'openai', name: 'small', base_url: `${main.url}/v1`, fallbacks: [{ provider: 'openai', name: 'big', base_url: `${fallback.url}/v1` }] }, new HttpClient(), {}),
      sessions: new FileConversations(tempDir()),
    });
    for (let i = 0; i < 12; i++) expect(await agent.send('c', `question ${i}: ${'q'.repeat(400)}`), `turn ${i}`).toMatchObject({ status: 'completed', text: 'main answer' });
    expect(fallback.bodies).toHaveLength(0);
    expect(JSON.stringify(main.bodies.at(-1)!.messages)).not.toContain('question 0:');
    const error = await agent.send('c', 'x'.repeat(7000)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'FORGE_MODEL_CONTEXT', message: expect.stringContaining('too long for model openai:small on their own') });
  });
});

describe('conversations of one model whose text is not alike', () => {
  it("learns each conversation's window apart: one whose text takes more tokens a character does not cut what the others are sent", async () => {
    // A model that takes 3,000 tokens: a token is four ASCII characters, or one other character (as CJK text, or encoded data, often is).
    const tokens = (text: string) => [...text].reduce((n, c) => n + (c.charCodeAt(0) < 128 ? 0.25 : 1), 0);
    const model = await startScriptedOpenAI(Array.from({ length: 200 }, () => (body: Record<string, any>): ScriptedTurn => (tokens(JSON.stringify(body.messages)) > 3000 ? { status: 400, text: TOO_LONG.openai } : { text: 'answer' })));
    const agent = new Agent({
      manifest: { agent_id: 'shared', version: '1.0.0', description: 'Answers everyone.' },
      tools: { list: () => [], execute: async () => ok(null) },
      model: createModelClient({ provider: 'openai', name: 'm', base_url: `${model.url}/v1` }, new HttpClient(), {}),
      sessions: new FileConversations(tempDir()),
    });
    for (let i = 0; i < 10; i++) await agent.send('english', `question ${i}: ${'q'.repeat(400)}`);
    // Another client's conversation, dense in tokens, outgrows the window.
    for (let i = 0; i < 12; i++) expect(await agent.send('dense', `問題 ${i}: ${'語'.repeat(400)}`)).toMatchObject({ status: 'completed' });
    expect(model.bodies.some((b) => JSON.stringify(b.messages).includes('earliest messages of this conversation are not shown'))).toBe(true);
    // The first conversation, about 5,000 characters (1,300 tokens), is still sent whole.
    await agent.send('english', `question 10: ${'q'.repeat(400)}`);
    expect(JSON.stringify(model.bodies.at(-1)!.messages)).toContain('question 0:');
  });
});
