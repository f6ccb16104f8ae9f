import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../../runtime/agent/messages.ts';
import { Agent, keepLatest, KEPT_AFTER_CUT, MAX_KEPT_CHARS, MAX_KEPT_MESSAGES, NoModelError, parseApprovalAnswer } from '../../../runtime/agent/agent.ts';
import type { PendingApproval } from '../../../runtime/agent/agent-loop.ts';
import { createModelClient } from '../../../runtime/agent/providers/create-model.ts';
import { FileConversations } from '../../../runtime/state/file-conversations.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { ok, type Tool } from '../../../runtime/tools/model.ts';
import { ToolRegistry } from '../../../runtime/tools/registry.ts';
import { tempDir } from '../../helpers/project.ts';
import { agentWithTools } from '../../helpers/tool-agent.ts';
import { startScriptedAnthropic, startScriptedOpenAI, thinkingSignature, type ScriptedTurn } from '../../helpers/scripted-llm.ts';

async function agentWith(script: (ScriptedTurn | ((body: Record<string, any>) => ScriptedTurn))[]) {
  const llm = await startScriptedOpenAI(script);
  const registry = new ToolRegistry({ workDir: process.cwd() });
  const ran: string[] = [];
  const deleter: Tool = { name: 'deleter', description: 'd', category: 'custom', tags: ['write'], inputSchema: { type: 'object' }, execute: async () => (ran.push('deleter'), ok('deleted')) };
  registry.register(deleter, 'test');
  const agent = new Agent({
    manifest: { agent_id: 'a', version: '1.0.0', description: '' },
    tools: { list: () => registry.list(), execute: (n, a, o) => registry.execute(n, a, o) },
    model: createModelClient({ provider: 'openai', name: 'm', base_url: `${llm.url}/v1` }, new HttpClient(), {}),
    gate: { decide: () => 'ask' },
    sessions: new FileConversations(tempDir()),
  });
  return { agent, llm, ran };
}

describe('Agent', () => {
  it('refuses the paused calls when a new message arrives instead of an answer, asking the model once', async () => {
    const { agent, llm, ran } = await agentWith([{ toolCalls: [{ id: 'c1', name: 'deleter', arguments: {} }] }, { text: 'Fine, I will not delete it.' }]);
    expect((await agent.send('ctx', 'delete it')).status).toBe('input-required');
    const outcome = await agent.send('ctx', 'never mind');
    expect(outcome).toEqual({ status: 'completed', text: 'Fine, I will not delete it.' });
    expect(ran).toEqual([]);
    expect(llm.bodies).toHaveLength(2);
    const roles = llm.bodies[1].messages.map((m: { role: string }) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(llm.bodies[1].messages[3].content).toContain('FORGE_APPROVAL_DENIED');
    expect(await agent.pending('ctx')).toBeUndefined();
  });

  it('says clearly that there is no model', async () => {
    const agent = new Agent({ manifest: { agent_id: 'a', version: '1', description: '' }, tools: { list: () => [], execute: async () => ok(null) }, sessions: new FileConversations(tempDir()) });
    await expect(agent.send('ctx', 'hi')).rejects.toBeInstanceOf(NoModelError);
  });
});

describe('parseApprovalAnswer', () => {
  const pending: PendingApproval = {
    calls: [{ id: 'a', name: 'x', arguments: {} }, { id: 'b', name: 'y', arguments: {} }, { id: 'c', name: 'z', arguments: {} }],
    decisions: { a: 'ask', b: 'ask', c: 'allow' },
  };
  it.each([
    ['approve', undefined, { a: true, b: true }],
    ['Yes, go ahead', undefined, { a: true, b: true }],
    ['deny', undefined, { a: false, b: false }],
    ['no thanks', undefined, { a: false, b: false }],
    ['', { approved: true }, { a: true, b: true }],
    ['', { approvals: { a: true, b: 'yes' } }, { a: true, b: false }],
    ['what does it do?', undefined, undefined],
    ['nobody said yes', undefined, undefined],
  ])('%j with data %j → %j', (text, data, expected) => {
    expect(parseApprovalAnswer(text, data, pending)).toEqual(expected && new Map(Object.entries(expected)));
  });
});

/** An agent on the file store with one read tool, keeping at most `maxKeptMessages` messages. */
function keepingAgent(llmUrl: string, tool: string, maxKeptMessages: number) {
  const registry = new ToolRegistry({ workDir: process.cwd() });
  registry.register({ name: tool, description: tool, category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async () => ok(`${tool} done`) }, 'test');
  const sessions = new FileConversations(tempDir());
  const agent = new Agent({
    manifest: { agent_id: 'a', version: '1.0.0', description: '' },
    tools: { list: () => registry.list(), execute: (n, a, o) => registry.execute(n, a, o) },
    model: createModelClient({ provider: 'openai', name: 'm', base_url: `${llmUrl}/v1` }, new HttpClient(), {}),
    sessions,
    maxKeptMessages,
  });
  return { agent, sessions };
}

describe('a conversation past the messages it keeps', () => {
  it('drops its earliest turns whole at the end of a turn, keeping the latest and starting with a user message', async () => {
    const llm = await startScriptedOpenAI(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? { toolCalls: [{ name: 'deleter', arguments: {} }] } : { text: `answer ${i}` })));
    const { agent, sessions } = keepingAgent(llm.url, 'deleter', 10);
    for (let i = 0; i < 20; i++) await agent.send('schedule-daily', `run ${i}`);
    const kept = (await sessions.read('schedule-daily')).messages;
    // Four messages a turn (question, call, result, answer): two whole turns fit in ten.
    expect(kept.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
    expect(kept.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['run 18', 'run 19']);
  });

  it('drops its earliest turns also when turns fail, as a schedule whose model refuses every run keeps failing', async () => {
    // Every run: the tool is called, then the model refuses (a turn too long alone, a revoked key): the turn fails.
    const llm = await startScriptedOpenAI(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? { toolCalls: [{ name: 'reader', arguments: {} }] } : { status: 400, text: 'refused' })));
    const { agent, sessions } = keepingAgent(llm.url, 'reader', 6);
    for (let i = 0; i < 20; i++) await expect(agent.send('schedule-daily', `run ${i}`)).rejects.toThrow('refused');
    const kept = (await sessions.read('schedule-daily')).messages;
    expect(kept.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user', 'assistant', 'tool']);
    expect(kept.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['run 18', 'run 19']);
  });

  it('keeps the default limit, and keeps a turn longer than the limit whole', () => {
    const turns = (n: number) => Array.from({ length: n }, (_, i) => [{ role: 'user' as const, content: `q${i}` }, { role: 'assistant' as const, content: `a${i}` }]).flat();
    const many = turns(MAX_KEPT_MESSAGES / 2);
    keepLatest(many, MAX_KEPT_MESSAGES);
    expect(many).toHaveLength(MAX_KEPT_MESSAGES);
    many.push(...turns(1));
    keepLatest(many, MAX_KEPT_MESSAGES);
    expect([many.length, many[0].content, many.at(-1)!.content]).toEqual([MAX_KEPT_MESSAGES, 'q1', 'a0']);
    const long = [{ role: 'user' as const, content: 'one long turn' }, ...Array.from({ length: 30 }, () => ({ role: 'assistant' as const, content: 'step' }))];
    keepLatest(long, 10);
    expect(long).toHaveLength(31);
    // Only it: the turns before it go.
    const after = [...turns(5), { role: 'user' as const, content: 'one long turn' }, ...Array.from({ length: 30 }, () => ({ role: 'assistant' as const, content: 'step' }))];
    keepLatest(after, 10);
    expect([after.length, after[0].content]).toEqual([31, 'one long turn']);
  });

  it('past its limit keeps a share of it, so that what it begins with stays the same for many turns (a prompt cache can serve it)', () => {
    const turns = (from: number, n: number) => Array.from({ length: n }, (_, i) => [{ role: 'user' as const, content: `q${from + i}` }, { role: 'assistant' as const, content: `a${from + i}` }]).flat();
    const messages = turns(0, 50);
    const firsts: string[] = [];
    for (let turn = 50; turn < 150; turn++) {
      messages.push(...turns(turn, 1));
      keepLatest(messages, 100, MAX_KEPT_CHARS, KEPT_AFTER_CUT);
      expect(messages.length).toBeLessThanOrEqual(100);
      firsts.push(messages[0].content);
    }
    // Dropping a turn at every turn changed the first message 100 times; keeping 90 of 100 leaves room for five
    // turns of two messages, so it changes every sixth turn.
    expect(new Set(firsts).size).toBeLessThanOrEqual(20);
    expect(messages.at(-1)!.content).toBe('a149');
  });

  it('keeps at most MAX_KEPT_CHARS characters of text and arguments, dropping the earliest turns whole, and a longer latest turn alone', () => {
    const turn = (i: number, size: number): ChatMessage[] => [
      { role: 'user', content: `q${i}` },
      { role: 'assistant', content: '', toolCalls: [{ id: `c${i}`, name: 'fetch', arguments: { url: 'u'.repeat(size) } }] },
      { role: 'tool', toolCallId: `c${i}`, name: 'fetch', content: 'r'.repeat(size) },
      { role: 'assistant', content: `a${i}` },
    ];
    const size = 100_000;
    const messages = Array.from({ length: 60 }, (_, i) => turn(i, size)).flat();
    keepLatest(messages, MAX_KEPT_MESSAGES);
    // Each turn is about 200,000 characters, the arguments among them: the latest 39 fit in 8,000,000.
    const kept = messages.filter((m) => m.role === 'user').map((m) => m.content);
    expect(kept).toEqual(Array.from({ length: 39 }, (_, i) => `q${i + 21}`));
    expect(messages[0].role).toBe('user');
    const huge = [...turn(0, 10), ...turn(1, MAX_KEPT_CHARS)];
    keepLatest(huge, MAX_KEPT_MESSAGES);
    expect(huge.map((m) => m.role === 'user' && m.content).filter(Boolean)).toEqual(['q1']);
    expect(huge).toHaveLength(4);
  });
});

describe('a turn that fails between the model\'s calls and their results', () => {
  it('leaves each call answered, so the next turn of the conversation can be sent', async () => {
    const llm = await startScriptedOpenAI([{ toolCalls: [{ id: 'c1', name: 'deleter', arguments: {} }, { id: 'c2', name: 'deleter', arguments: {} }] }, { text: 'next turn answered' }]);
    const registry = new ToolRegistry({ workDir: process.cwd() });
    registry.register({ name: 'deleter', description: 'd', category: 'custom', tags: ['read'], inputSchema: { type: 'object' }, execute: async () => ok('deleted') }, 'test');
    let decided = 0;
    const sessions = new FileConversations(tempDir());
    const agent = new Agent({
      manifest: { agent_id: 'a', version: '1.0.0', description: '' },
      tools: { list: () => registry.list(), execute: (n, a, o) => registry.execute(n, a, o) },
      model: createModelClient({ provider: 'openai', name: 'm', base_url: `${llm.url}/v1` }, new HttpClient(), {}),
      // The gate fails on the first turn, after the model's calls are in the conversation.
      gate: { decide: () => { if (decided++ === 0) throw new Error('policy store unreachable'); return 'allow'; } },
      sessions,
    });
    await expect(agent.send('c', 'delete both')).rejects.toThrow('policy store unreachable');
    expect(await agent.send('c', 'try again')).toEqual({ status: 'completed', text: 'next turn answered' });
    const sent = llm.bodies[1].messages as { role: string; tool_calls?: { id: string }[]; tool_call_id?: string; content: string }[];
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'user']);
    expect(sent.slice(3, 5).map((m) => [m.tool_call_id, m.content])).toEqual([['c1', 'FORGE_TOOL_CANCELLED: the turn failed before this call ran'], ['c2', 'FORGE_TOOL_CANCELLED: the turn failed before this call ran']]);
  });
});

describe('an Anthropic model that answers with nothing', () => {
  it('leaves the conversation sendable: the empty answer is not sent back as a message without content, which the API refuses', async () => {
    // Claude at times ends a turn with no text after a tool's result.
    const llm = await startScriptedAnthropic([{ toolCalls: [{ name: 'reader', arguments: {} }] }, { text: '' }, { text: 'second answer' }]);
    const agent = agentWithTools({ provider: 'anthropic', name: 'm', base_url: llm.url }, [{ name: 'reader', execute: async () => ok('read') }]);
    expect(await agent.send('c', 'first')).toMatchObject({ status: 'completed', text: '' });
    expect(await agent.send('c', 'second')).toMatchObject({ status: 'completed', text: 'second answer' });
  });
});

describe('an OpenAI model that answers with nothing', () => {
  // Regression: sent back as an assistant message of content null and no calls, which OpenAI refuses ("expected a
  // string, got null"), so every later turn of the conversation failed.
  it.each([false, true])('leaves the conversation sendable: a reasoning model that spent its output limit thinking (streaming: %s)', async (stream) => {
    const llm = await startScriptedOpenAI([{ text: '', ends: 'cut-off' }, { text: 'second answer' }]);
    const agent = new Agent({
      manifest: { agent_id: 'a', version: '1.0.0', description: '' },
      tools: { list: () => [], execute: async () => ok(null) },
      model: createModelClient({ provider: 'openai', name: 'm', base_url: `${llm.url}/v1` }, new HttpClient(), {}),
      sessions: new FileConversations(tempDir()),
    });
    const turn = stream ? { stream: true, onEvent: () => {} } : {};
    expect(await agent.send('c', 'first', turn)).toMatchObject({ status: 'completed', endedEarly: 'cut-off' });
    expect(await agent.send('c', 'second', turn)).toMatchObject({ status: 'completed', text: 'second answer' });
    expect(llm.bodies[1].messages.slice(1)).toEqual([{ role: 'user', content: 'first\n\nsecond' }]);
  });
});

describe('an Anthropic-format model that thinks (extended thinking, DeepSeek through its Anthropic endpoint)', () => {
  /** As the API answers a tool call sent back without the signed thinking block it came after. */
  const thinkingModel = (steps: ScriptedTurn[]) =>
    steps.map((step) => (body: Record<string, any>): ScriptedTurn => {
      for (const m of body.messages.filter((m: { role: string }) => m.role === 'assistant')) {
        const first = m.content[0];
        if (m.content.some((b: { type: string }) => b.type === 'tool_use') && (first.type !== 'thinking' || first.signature !== thinkingSignature(first.thinking))) {
          return { status: 400, text: 'messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block' };
        }
      }
      return step;
    });

  it.each([false, true])('gets its signed thinking blocks back, as they were, before its tool calls (streaming: %s)', async (stream) => {
    const llm = await startScriptedAnthropic(thinkingModel([{ reasoning: 'Read the file first.', toolCalls: [{ name: 'reader', arguments: {} }] }, { text: 'It says hello.' }, { text: 'Still hello.' }]));
    const agent = agentWithTools({ provider: 'anthropic', name: 'thinker', base_url: llm.url }, [{ name: 'reader', execute: async () => ok('hello') }]);
    const turn = stream ? { stream: true, onEvent: () => {} } : {};
    expect(await agent.send('c', 'What does the file say?', turn)).toMatchObject({ status: 'completed', text: 'It says hello.' });
    expect(await agent.send('c', 'And now?', turn)).toMatchObject({ status: 'completed', text: 'Still hello.' });
    expect(llm.bodies.at(-1)!.messages[1].content[0]).toEqual({ type: 'thinking', thinking: 'Read the file first.', signature: thinkingSignature('Read the file first.') });
  });

  // Regression: DeepSeek's Anthropic endpoint (thinking on by default) refuses a tool call sent back without a thinking
  // block; one it made without thinking a token went back without one, and that step and every later turn failed.
  it.each([false, true])('a call it made without thinking goes back after an empty thinking block once the model asks for one (streaming: %s)', async (stream) => {
    const refusal = 'The `content[].thinking` in the thinking mode must be passed back to the API.';
    // As DeepSeek checks: a thinking block (its signature unchecked) before every tool call sent back.
    const deepSeek = (steps: ScriptedTurn[]) =>
      steps.map((step) => (body: Record<string, any>): ScriptedTurn => {
        const bare = body.messages.some((m: { role: string; content: { type: string; thinking?: unknown }[] }) => m.role === 'assistant' && m.content.some((b) => b.type === 'tool_use') && !(m.content[0].type === 'thinking' && typeof m.content[0].thinking === 'string'));
        return bare ? { status: 400, text: refusal } : step;
      });
    const answer = { reasoning: 'It is read.', text: 'It says hello.' };
    const llm = await startScriptedAnthropic(deepSeek([{ toolCalls: [{ name: 'reader', arguments: {} }] }, answer, answer, { text: 'Still hello.' }]));
    const agent = agentWithTools({ provider: 'anthropic', name: 'deepseek-v4-flash', base_url: llm.url }, [{ name: 'reader', execute: async () => ok('hello') }]);
    const turn = stream ? { stream: true, onEvent: () => {} } : {};
    expect(await agent.send('c', 'What does the file say?', turn)).toMatchObject({ status: 'completed', text: 'It says hello.' });
    expect(await agent.send('c', 'And now?', turn)).toMatchObject({ status: 'completed', text: 'Still hello.' });
    expect(llm.bodies.at(-1)!.messages[1].content[0]).toEqual({ type: 'thinking', thinking: '' });
    // Refused once, then sent so from then on.
    expect(llm.bodies).toHaveLength(4);
  });
});
