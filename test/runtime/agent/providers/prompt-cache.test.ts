/**
 * The providers' prompt caches: an agent sends its tools, system prompt and
 * conversation again at every step, and Anthropic serves them from its cache
 * only where the request marks them (scripted here as its documentation
 * describes it: test/helpers/anthropic-prompt-cache.ts). What each provider
 * reports it read from and wrote to its cache is counted in the metrics.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Agent } from '../../../../runtime/agent/agent.ts';
import { createModelClient } from '../../../../runtime/agent/providers/create-model.ts';
import type { ModelSettings } from '../../../../runtime/manifest.ts';
import { HttpClient } from '../../../../runtime/net/http-client.ts';
import { FileConversations } from '../../../../runtime/state/file-conversations.ts';
import { modelTokens } from '../../../../runtime/telemetry/forge-metrics.ts';
import { ok } from '../../../../runtime/tools/model.ts';
import { ToolRegistry } from '../../../../runtime/tools/registry.ts';
import { tempDir } from '../../../helpers/project.ts';
import { startScriptedAnthropic, startScriptedOpenAI, type ScriptedServer, type ScriptedTurn } from '../../../helpers/scripted-llm.ts';

/** An agent with a few tools of real size, on `settings`' model. */
function agentOn(settings: ModelSettings) {
  const registry = new ToolRegistry({ workDir: process.cwd() });
  for (const name of ['note', 'lookup', 'summarise']) {
    registry.register({ name, description: `${name}: ${'does its work carefully. '.repeat(20)}`, category: 'custom', tags: ['read'], inputSchema: { type: 'object', properties: { n: { type: 'number', description: 'which one' } } }, execute: async (args) => ok({ done: args, detail: 'r'.repeat(600) }) }, 'test');
  }
  return new Agent({
    manifest: { agent_id: 'cached', version: '1.0.0', description: `Keeps notes. ${'Follow the house style. '.repeat(40)}` },
    tools: { list: () => registry.list(), execute: (n, a, o) => registry.execute(n, a, o) },
    model: createModelClient(settings, new HttpClient(), {}),
    gate: { decide: () => 'allow' },
    sessions: new FileConversations(tempDir()),
  });
}

/** A model that answers a question with `calls` tool calls at once, and the results with text. */
function callsThenAnswer(calls: number) {
  return (body: Record<string, any>): ScriptedTurn => {
    const last = body.messages.at(-1);
    const asked = last.content.some((part: { type: string }) => part.type === 'text');
    return asked ? { toolCalls: Array.from({ length: calls }, (_, n) => ({ name: 'note', arguments: { n } })) } : { text: 'done' };
  };
}

const anthropic = (server: ScriptedServer, name: string, extra: Partial<ModelSettings> = {}): ModelSettings => ({ provider: 'anthropic', name, base_url: server.url, ...extra });

/** The blocks a request marks for the cache, named by where they are. */
function marks(body: Record<string, any>): string[] {
  const found: string[] = [];
  (body.tools ?? []).forEach((tool: Record<string, unknown>, i: number) => tool.cache_control && found.push(`tools[${i}]`));
  if (Array.isArray(body.system)) body.system.forEach((block: Record<string, unknown>, i: number) => block.cache_control && found.push(`system[${i}]`));
  body.messages.forEach((m: { content: Record<string, unknown>[] }, i: number) => m.content.forEach((block, j) => block.cache_control && found.push(`messages[${i}].content[${j}]`)));
  return found;
}

describe('Anthropic prompt caching', () => {
  it('marks the system prompt and the conversation, so that each later step and turn reads most of what it sends from the cache', async () => {
    const server = await startScriptedAnthropic(Array.from({ length: 8 }, () => callsThenAnswer(1)));
    const agent = agentOn(anthropic(server, `cached-${randomUUID()}`));
    for (let i = 0; i < 4; i++) expect(await agent.send('c', `question ${i}`)).toMatchObject({ status: 'completed', text: 'done' });

    expect(server.bodies).toHaveLength(8);
    for (const body of server.bodies) {
      // The system prompt as one marked block, the rest of the request as it was; at most the four marks the API takes.
      expect(body.system).toEqual([{ type: 'text', text: expect.stringContaining('You are cached'), cache_control: { type: 'ephemeral' } }]);
      const found = marks(body);
      expect(found.length).toBeLessThanOrEqual(4);
      expect(found).toContain(`messages[${body.messages.length - 1}].content[${body.messages.at(-1).content.length - 1}]`);
    }
    // The first request writes; every later one reads all it sent before (its new part is a question, or a call and its result).
    expect(server.usages[0].cache_read_input_tokens).toBe(0);
    expect(server.usages[0].cache_creation_input_tokens).toBeGreaterThan(0);
    const sent = (usage: Record<string, number>) => usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    server.usages.slice(1).forEach((usage, i) => expect(usage.cache_read_input_tokens, `request ${i + 2}`).toBe(sent(server.usages[i])));
    // Four turns, eight requests: most of what they sent was read.
    const read = server.usages.reduce((n, u) => n + u.cache_read_input_tokens, 0);
    expect(read / server.usages.reduce((n, u) => n + sent(u), 0)).toBeGreaterThan(0.6);
  });

  it("still reads the previous step's part after an answer of many tool calls, more blocks than the cache looks back over", async () => {
    const server = await startScriptedAnthropic([callsThenAnswer(15), callsThenAnswer(15)]);
    const agent = agentOn(anthropic(server, `cached-${randomUUID()}`));
    expect(await agent.send('c', 'do fifteen things')).toMatchObject({ status: 'completed', text: 'done' });
    // The second request adds 15 calls and their 15 results (30 blocks) to the first: it reads all the first sent.
    const [first, second] = server.usages;
    expect(second.cache_read_input_tokens).toBeGreaterThanOrEqual(first.cache_creation_input_tokens + first.cache_read_input_tokens);
  });

  it('counts every input token as input, and what was read from and written to the cache besides', async () => {
    const server = await startScriptedAnthropic(Array.from({ length: 4 }, () => callsThenAnswer(1)));
    const model = `anthropic:cached-${randomUUID()}`;
    const agent = agentOn(anthropic(server, model.slice('anthropic:'.length)));
    for (let i = 0; i < 2; i++) await agent.send('c', `question ${i}`);
    const sum = (key: string) => server.usages.reduce((n, u) => n + u[key], 0);
    expect(modelTokens.get({ model, type: 'input' })).toBe(sum('input_tokens') + sum('cache_read_input_tokens') + sum('cache_creation_input_tokens'));
    expect(modelTokens.get({ model, type: 'cache_read' })).toBe(sum('cache_read_input_tokens'));
    expect(modelTokens.get({ model, type: 'cache_write' })).toBe(sum('cache_creation_input_tokens'));
    expect(modelTokens.get({ model, type: 'cache_read' })).toBeGreaterThan(0);
    expect(modelTokens.get({ model, type: 'output' })).toBe(sum('output_tokens'));
  });

  it('marks the last tool when there is no system prompt', async () => {
    const server = await startScriptedAnthropic([{ text: 'hi' }]);
    const client = createModelClient(anthropic(server, 'no-system'), new HttpClient(), {});
    await client.complete({ messages: [{ role: 'user', content: 'hello' }], tools: [{ name: 'a', description: 'A.', inputSchema: { type: 'object' } }, { name: 'b', description: 'B.', inputSchema: { type: 'object' } }] });
    expect(marks(server.bodies[0])).toEqual(['tools[1]', 'messages[0].content[0]']);
  });

  it('sends no marks with model.prompt_cache: false, and nothing is read from the cache', async () => {
    const server = await startScriptedAnthropic(Array.from({ length: 4 }, () => callsThenAnswer(1)));
    const agent = agentOn(anthropic(server, `uncached-${randomUUID()}`, { prompt_cache: false }));
    for (let i = 0; i < 2; i++) await agent.send('c', `question ${i}`);
    for (const body of server.bodies) {
      expect(JSON.stringify(body)).not.toContain('cache_control');
      expect(typeof body.system).toBe('string');
    }
    expect(server.usages.every((u) => u.cache_read_input_tokens === 0)).toBe(true);
  });

  it('is sent without marks, from then on, by a server of the format that refuses them by name (a proxy, a local server)', async () => {
    const strict = (body: Record<string, any>): ScriptedTurn => (JSON.stringify(body).includes('cache_control') ? { status: 400, text: 'system.0.cache_control: Extra inputs are not permitted' } : { text: 'fine' });
    const server = await startScriptedAnthropic([strict, strict, strict]);
    const client = createModelClient(anthropic(server, 'strict'), new HttpClient(), {});
    for (let i = 0; i < 2; i++) expect(await client.complete({ system: 'Be brief.', messages: [{ role: 'user', content: 'hello' }], tools: [] })).toMatchObject({ text: 'fine' });
    expect(server.bodies.map((b) => JSON.stringify(b).includes('cache_control'))).toEqual([true, false, false]);
  });
});

describe('OpenAI prompt caching', () => {
  it('counts the prompt tokens the server says its cache served (it caches on its own: nothing is marked)', async () => {
    const server = await startScriptedOpenAI([{ text: 'one', cachedTokens: 0 }, { text: 'two', cachedTokens: 1024 }]);
    const name = `cached-${randomUUID()}`;
    const client = createModelClient({ provider: 'openai', name, base_url: `${server.url}/v1` }, new HttpClient(), {});
    const first = await client.complete({ messages: [{ role: 'user', content: 'hello' }], tools: [] });
    const second = await client.complete({ messages: [{ role: 'user', content: 'hello again' }], tools: [], stream: true });
    expect(first.usage).not.toHaveProperty('cacheReadTokens');
    expect(second.usage).toMatchObject({ cacheReadTokens: 1024 });
    expect(modelTokens.get({ model: `openai:${name}`, type: 'cache_read' })).toBe(1024);
    expect(JSON.stringify(server.bodies)).not.toContain('cache_control');
  });

  // Regression: DeepSeek reports what its cache served in its own field, which was not read: no cache read was ever counted.
  it("counts what DeepSeek's cache served, reported in its own field (prompt_cache_hit_tokens)", async () => {
    const server = await startScriptedOpenAI([{ text: 'one', cacheHitTokens: 0 }, { text: 'two', cacheHitTokens: 640 }]);
    const name = `deepseek-${randomUUID()}`;
    const client = createModelClient({ provider: 'openai', name, base_url: `${server.url}/v1` }, new HttpClient(), {});
    expect((await client.complete({ messages: [{ role: 'user', content: 'hello' }], tools: [] })).usage).not.toHaveProperty('cacheReadTokens');
    expect((await client.complete({ messages: [{ role: 'user', content: 'hello again' }], tools: [], stream: true })).usage).toMatchObject({ cacheReadTokens: 640 });
    expect(modelTokens.get({ model: `openai:${name}`, type: 'cache_read' })).toBe(640);
  });
});
