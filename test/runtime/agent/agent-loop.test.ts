import { describe, expect, it } from 'vitest';
import type { GateDecision } from '../../../runtime/agent/approval-gate.ts';
import { resumeAgentTurn, runAgentTurn, settlePending, type AgentEvent, type AgentTools } from '../../../runtime/agent/agent-loop.ts';
import { parseToolArguments, type ChatMessage } from '../../../runtime/agent/messages.ts';
import { createModelClient } from '../../../runtime/agent/providers/create-model.ts';
import { MODEL_RETRIES } from '../../../runtime/agent/providers/retries.ts';
import { HttpClient } from '../../../runtime/net/http-client.ts';
import { fail, ok, type Tool, type ToolSpec } from '../../../runtime/tools/model.ts';
import { ToolRegistry } from '../../../runtime/tools/registry.ts';
import { startServer } from '../../helpers/http-server.ts';
import { startScriptedAnthropic, startScriptedOpenAI, type ScriptedServer } from '../../helpers/scripted-llm.ts';

const http = new HttpClient();

function registry(tools: Partial<Tool>[]): AgentTools {
  const r = new ToolRegistry({ workDir: process.cwd() });
  for (const t of tools) {
    r.register({ description: `${t.name} tool`, category: 'custom', inputSchema: { type: 'object' }, tags: ['read'], execute: async (args) => ok(args), ...t } as Tool, 'test');
  }
  return { list: () => r.list(), execute: (name, args, options) => r.execute(name, args, options) };
}

const openai = (server: ScriptedServer) => createModelClient({ provider: 'openai', name: 'gpt-test', base_url: `${server.url}/v1` }, http, {});
const anthropic = (server: ScriptedServer) => createModelClient({ provider: 'anthropic', name: 'claude-test', base_url: server.url }, http, {});

describe.each([
  // Which answers lose a call's id: OpenAI streaming numbers the calls by index, every other form leaves it empty.
  ['OpenAI', startScriptedOpenAI, openai, [false]],
  ['Anthropic', startScriptedAnthropic, anthropic, [false, true]],
] as const)('agent loop over the %s wire format', (_name, start, client, idlessStreams) => {
  it.each([false, true])('runs multi-step tool use and feeds results back (streaming: %s)', async (stream) => {
    const server = await start([
      { text: 'Let me look.', toolCalls: [{ name: 'lookup', arguments: { city: 'Oslo' } }] },
      (body) => ({ toolCalls: [{ name: 'convert', arguments: { celsius: JSON.parse(lastToolResult(body)).temperature } }] }),
      (body) => ({ text: `It is ${JSON.parse(lastToolResult(body)).fahrenheit} F in Oslo.` }),
    ]);
    const tools = registry([
      { name: 'lookup', execute: async () => ok({ temperature: 10 }) },
      { name: 'convert', execute: async (args) => ok({ fahrenheit: ((args as { celsius: number }).celsius * 9) / 5 + 32 }) },
    ]);
    const events: AgentEvent[] = [];
    const messages: ChatMessage[] = [{ role: 'user', content: 'Weather in Oslo?' }];
    const outcome = await runAgentTurn(messages, { model: client(server), tools, gate: { decide: () => 'allow' }, system: 'Be brief.', stream, onEvent: (e) => events.push(e) });
    expect(outcome).toEqual({ status: 'completed', text: 'It is 50 F in Oslo.' });
    expect(server.bodies).toHaveLength(3);
    expect(events.filter((e) => e.type === 'text').map((e) => (e as { delta: string }).delta).join('')).toBe('Let me look.It is 50 F in Oslo.');
    if (stream) expect(events.filter((e) => e.type === 'text').length).toBeGreaterThan(2);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    // The tool definitions went with every request.
    expect(JSON.stringify(server.bodies[0])).toContain('"lookup"');
    expect(JSON.stringify(server.bodies[0])).toContain('Be brief.');
  });

  it('runs the calls of one answer in parallel', async () => {
    const server = await start([{ toolCalls: [{ name: 'left', arguments: {} }, { name: 'right', arguments: {} }] }, { text: 'done' }]);
    // Each tool waits until the other has started: run one after the other, they would never finish.
    let release: () => void = () => {};
    const bothStarted = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const meet = async () => {
      if (++started === 2) release();
      await Promise.race([bothStarted, new Promise((_, reject) => setTimeout(() => reject(new Error('ran sequentially')), 3000))]);
      return ok('met');
    };
    const outcome = await runAgentTurn([{ role: 'user', content: 'go' }], { model: client(server), tools: registry([{ name: 'left', execute: meet }, { name: 'right', execute: meet }]), gate: { decide: () => 'allow' } });
    expect(outcome).toEqual({ status: 'completed', text: 'done' });
  });

  it('sends tool errors back to the model as results', async () => {
    const server = await start([{ toolCalls: [{ name: 'broken', arguments: {} }] }, (body) => ({ text: `saw: ${lastToolResult(body)}` })]);
    const tools = registry([{ name: 'broken', execute: async () => fail('FORGE_FILE_NO_SPACE', 'no space left', 'free some space') }]);
    const outcome = await runAgentTurn([{ role: 'user', content: 'go' }], { model: client(server), tools, gate: { decide: () => 'allow' } });
    expect(outcome).toMatchObject({ status: 'completed', text: 'saw: Error FORGE_FILE_NO_SPACE: no space left\nHint: free some space' });
  });

  it('answers a call to a tool that does not exist with the tools the model can call, or the one it likely meant', async () => {
    const server = await start([{ toolCalls: [{ name: 'weather_report', arguments: {} }, { name: 'lookupp', arguments: {} }] }, (body) => ({ text: toolResults(body).join(' | ') })]);
    const tools = registry([{ name: 'lookup' }, { name: 'convert' }]);
    const outcome = await runAgentTurn([{ role: 'user', content: 'go' }], { model: client(server), tools, gate: { decide: () => 'allow' } });
    expect(outcome).toMatchObject({
      status: 'completed',
      text: 'Error FORGE_TOOL_UNKNOWN: no tool named "weather_report"\nHint: the tools you can call: convert, lookup | Error FORGE_TOOL_UNKNOWN: no tool named "lookupp"\nHint: did you mean "lookup"?',
    });
  });

  it('truncates tool output over the budget with a marker', async () => {
    const server = await start([{ toolCalls: [{ name: 'big', arguments: {} }] }, (body) => ({ text: lastToolResult(body) })]);
    const outcome = await runAgentTurn([{ role: 'user', content: 'go' }], { model: client(server), tools: registry([{ name: 'big', execute: async () => ok('y'.repeat(500)) }]), gate: { decide: () => 'allow' }, toolOutputBudget: 100 });
    expect(outcome.status === 'completed' && outcome.text).toBe(`${'y'.repeat(100)}\n[output truncated: showing 100 of 500 characters]`);
  });

  it('stops after max_iterations', async () => {
    const server = await start(Array.from({ length: 5 }, () => ({ toolCalls: [{ name: 'again', arguments: {} }] })));
    const outcome = await runAgentTurn([{ role: 'user', content: 'loop' }], { model: client(server), tools: registry([{ name: 'again' }]), gate: { decide: () => 'allow' }, maxIterations: 3 });
    expect(outcome.status).toBe('max-iterations');
    expect(server.bodies).toHaveLength(3);
  });

  it('pauses for approval and resumes with the answer', async () => {
    const server = await start([
      { toolCalls: [{ id: 'c1', name: 'reader', arguments: {} }, { id: 'c2', name: 'deleter', arguments: { path: 'x' } }] },
      (body) => ({ text: `results: ${toolResults(body).join(' | ')}` }),
    ]);
    const ran: string[] = [];
    const tools = registry([
      { name: 'reader', execute: async () => (ran.push('reader'), ok('read ok')) },
      { name: 'deleter', tags: ['write'], execute: async () => (ran.push('deleter'), ok('deleted')) },
    ]);
    const gate = { decide: (spec: ToolSpec): GateDecision => (spec.tags.includes('read') ? 'allow' : 'ask') };
    const messages: ChatMessage[] = [{ role: 'user', content: 'clean up' }];
    const paused = await runAgentTurn(messages, { model: client(server), tools, gate });
    expect(paused.status).toBe('input-required');
    if (paused.status !== 'input-required') return;
    expect(paused.requests).toEqual([{ callId: 'c2', tool: 'deleter', arguments: { path: 'x' }, reason: '"deleter" is tagged write' }]);
    expect(ran).toEqual([]);
    const resumed = await resumeAgentTurn(messages, paused.pending, { c2: true }, { model: client(server), tools, gate });
    expect(ran.sort()).toEqual(['deleter', 'reader']);
    expect(resumed).toEqual({ status: 'completed', text: 'results: read ok | deleted' });
  });

  describe('calls never share an approval through the ids the model chose', () => {
    const gate = { decide: (spec: ToolSpec): GateDecision => (spec.tags.includes('read') ? 'allow' : 'ask') };
    const writeThenRead = (first: string | null, second: string | null) => [
      { id: first, name: 'writer', arguments: { path: 'x' } },
      { id: second, name: 'reader', arguments: {} },
    ];

    /** The write pauses for a person, who refuses it: it never runs, the read does, and each result goes back under its own call's id. */
    async function expectTheWriteAsked(toolCalls: ReturnType<typeof writeThenRead>, stream: boolean) {
      const server = await start([{ toolCalls }, (body) => ({ text: `results: ${toolResults(body).join(' | ')}` })]);
      const ran: string[] = [];
      const tools = registry([
        { name: 'reader', execute: async () => (ran.push('reader'), ok('read ok')) },
        { name: 'writer', tags: ['write'], execute: async () => (ran.push('writer'), ok('written')) },
      ]);
      const messages: ChatMessage[] = [{ role: 'user', content: 'go' }];
      const paused = await runAgentTurn(messages, { model: client(server), tools, gate, stream });
      expect(ran).toEqual([]);
      if (paused.status !== 'input-required') throw new Error(`the write ran without approval: ${JSON.stringify(paused)}`);
      expect(paused.requests.map((r) => r.tool)).toEqual(['writer']);
      const resumed = await resumeAgentTurn(messages, paused.pending, new Map([[paused.requests[0].callId, false]]), { model: client(server), tools, gate, stream });
      expect(ran).toEqual(['reader']);
      expect(resumed.status === 'completed' && resumed.text).toMatch(/^results: Error FORGE_APPROVAL_DENIED: .* \| read ok$/s);
      const { calls, results } = idsSent(server.bodies[1]);
      expect(new Set(calls).size).toBe(2);
      expect(results).toEqual(calls);
    }

    it.each([false, true])('two calls with one id (streaming: %s)', (stream) => expectTheWriteAsked(writeThenRead('dup', 'dup'), stream));
    it.each(idlessStreams)('calls without ids (streaming: %s)', (stream) => expectTheWriteAsked(writeThenRead(null, null), stream));
    it.each([false, true])('"__proto__" as an id (streaming: %s)', (stream) => expectTheWriteAsked(writeThenRead('__proto__', 'r1'), stream));

    it('keeps an id the model chose well, since the provider matches results to it', async () => {
      const server = await start([{ toolCalls: [{ id: 'call_Ab-9', name: 'reader', arguments: {} }] }, { text: 'done' }]);
      await runAgentTurn([{ role: 'user', content: 'go' }], { model: client(server), tools: registry([{ name: 'reader' }]), gate });
      expect(idsSent(server.bodies[1])).toEqual({ calls: ['call_Ab-9'], results: ['call_Ab-9'] });
    });
  });

  it('tells the model when a person denied a call', async () => {
    const server = await start([{ toolCalls: [{ id: 'c1', name: 'deleter', arguments: {} }] }, (body) => ({ text: lastToolResult(body) })]);
    const tools = registry([{ name: 'deleter', tags: ['write'] }]);
    const messages: ChatMessage[] = [{ role: 'user', content: 'x' }];
    const paused = await runAgentTurn(messages, { model: client(server), tools, gate: { decide: () => 'ask' } });
    if (paused.status !== 'input-required') throw new Error('expected a pause');
    const resumed = await resumeAgentTurn(messages, paused.pending, { c1: false }, { model: client(server), tools, gate: { decide: () => 'ask' } });
    expect(resumed.status === 'completed' && resumed.text).toContain('FORGE_APPROVAL_DENIED');
  });

  // Anthropic's JSON answer carries a call's input as an object, never cut: only its stream cuts one off.
  it.each(_name === 'OpenAI' ? [false, true] : [true])('does not run a call cut off at the output limit, nor ask a person about it, and tells the model to send less (streaming: %s)', async (stream) => {
    const server = await start([
      { text: 'Writing.', toolCalls: [{ name: 'lookup', arguments: { city: 'Oslo' } }, { name: 'writer', arguments: { path: 'report.md', content: 'x'.repeat(400) } }], ends: 'cut-off' },
      (body) => ({ text: toolResults(body).join('\n') }),
    ]);
    const written: unknown[] = [];
    const tools = registry([{ name: 'lookup', execute: async () => ok({ temperature: 10 }) }, { name: 'writer', tags: ['write'], execute: async (args) => (written.push(args), ok('written')) }]);
    const outcome = await runAgentTurn([{ role: 'user', content: 'report' }], { model: client(server), tools, gate: { decide: (spec) => (spec.name === 'writer' ? 'ask' : 'allow') }, stream });
    expect(outcome.status).toBe('completed');
    expect(written).toEqual([]);
    const results = outcome.status === 'completed' ? outcome.text : '';
    expect(results).toContain('{"temperature":10}');
    expect(results).toContain('FORGE_TOOL_ARGS: the arguments of this call to "writer" were cut off at the output token limit, so it did not run');
    expect(results).toContain('split the work into several smaller calls');
  });

  it.each([
    ['cut-off', "[cut off: the answer reached the model's output token limit; raise model.max_tokens in forge.yaml]"],
    ['filtered', "[stopped: the model's provider ended the answer (its content filter or a refusal)]"],
  ] as const)('ends a text answer the provider ended early (%s) with a note saying so', async (ends, note) => {
    for (const stream of [false, true]) {
      const server = await start([{ text: 'The first half of', ends }]);
      const outcome = await runAgentTurn([{ role: 'user', content: 'x' }], { model: client(server), tools: registry([]), gate: { decide: () => 'allow' }, stream });
      expect(outcome).toEqual({ status: 'completed', text: `The first half of\n\n${note}`, endedEarly: ends });
    }
  });
});

describe('a call whose arguments a server encoded twice', () => {
  it.each([false, true])('runs with the object inside (streaming: %s)', async (stream) => {
    // The scripted server encodes the arguments it is given: a JSON text is sent as a JSON string of it.
    const server = await startScriptedOpenAI([{ toolCalls: [{ name: 'lookup', arguments: JSON.stringify({ city: 'Oslo' }) }] }, (body) => ({ text: lastToolResult(body) })]);
    const seen: unknown[] = [];
    const tools = registry([{ name: 'lookup', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, execute: async (args) => (seen.push(args), ok('found')) }]);
    const outcome = await runAgentTurn([{ role: 'user', content: 'go' }], { model: openai(server), tools, gate: { decide: () => 'allow' }, stream });
    expect(seen).toEqual([{ city: 'Oslo' }]);
    expect(outcome).toEqual({ status: 'completed', text: 'found' });
  });
});

describe('a call whose arguments are not JSON', () => {
  it('does not run, is not put to a person, and the model is shown what it sent', async () => {
    const ran: string[] = [];
    const tools = registry([{ name: 'deleter', tags: ['write'], execute: async (args) => (ran.push(JSON.stringify(args)), ok('deleted')) }]);
    let asks = 0;
    const answers = [
      { text: '', toolCalls: [{ id: 'c1', name: 'deleter', arguments: parseToolArguments('{"path": "a.txt",}') }], stopReason: 'tool_calls', model: 'scripted' },
      { text: 'ok', toolCalls: [], stopReason: 'stop', model: 'scripted' },
    ];
    const messages: ChatMessage[] = [{ role: 'user', content: 'delete it' }];
    const outcome = await runAgentTurn(messages, { model: { label: 'scripted', complete: async () => answers.shift()! }, tools, gate: { decide: () => (asks++, 'ask') } });
    expect(outcome).toEqual({ status: 'completed', text: 'ok' });
    expect([ran, asks]).toEqual([[], 0]);
    expect(messages.find((m) => m.role === 'tool')?.content).toContain('FORGE_TOOL_ARGS: the arguments of this call to "deleter" are not JSON, so it did not run: {"path": "a.txt",}');
  });
  it('of an answer cut off at the output limit: only its last call is said to be cut off, an earlier one to be written wrong', async () => {
    const answers = [
      {
        text: '',
        toolCalls: [
          { id: 'c1', name: 'deleter', arguments: parseToolArguments('{"path": "a.txt",}') },
          { id: 'c2', name: 'deleter', arguments: parseToolArguments('{"path": "b.t') },
        ],
        stopReason: 'length',
        model: 'scripted',
      },
      { text: 'ok', toolCalls: [], stopReason: 'stop', model: 'scripted' },
    ];
    const messages: ChatMessage[] = [{ role: 'user', content: 'delete them' }];
    await runAgentTurn(messages, { model: { label: 'scripted', complete: async () => answers.shift()! }, tools: registry([{ name: 'deleter', tags: ['write'] }]), gate: { decide: () => 'allow' } });
    const results = messages.filter((m) => m.role === 'tool').map((m) => m.content);
    expect(results[0]).toContain('are not JSON, so it did not run: {"path": "a.txt",}');
    expect(results[1]).toContain('were cut off at the output token limit, so it did not run');
  });
});

describe('a tool registered during a turn', () => {
  // `maker` (a read tool, so it runs on its own) registers `made`, a write tool, as forge_tool would.
  function forging() {
    const r = new ToolRegistry({ workDir: process.cwd() });
    const ran: string[] = [];
    let madeIt!: () => void;
    const made = new Promise<void>((resolve) => (madeIt = resolve));
    const tool = (name: string, tags: string[], execute: Tool['execute']) => ({ name, description: name, category: 'custom', inputSchema: { type: 'object' }, tags, execute }) as Tool;
    r.register(tool('maker', ['read'], async () => {
      r.register(tool('made', ['write'], async () => (ran.push('made'), ok('written'))), 'test');
      madeIt();
      return ok('forged made');
    }), 'test');
    const tools: AgentTools = { list: () => r.list(), execute: (name, args, options) => r.execute(name, args, options) };
    return { tools, ran, made };
  }
  const gate = { decide: (spec: ToolSpec): GateDecision => (spec.tags.includes('read') ? 'allow' : 'ask') };

  it('goes through the gate when called later in the same turn', async () => {
    const server = await startScriptedOpenAI([{ toolCalls: [{ name: 'maker', arguments: {} }] }, { toolCalls: [{ name: 'made', arguments: {} }] }, { text: 'done' }]);
    const { tools, ran } = forging();
    const outcome = await runAgentTurn([{ role: 'user', content: 'go' }], { model: openai(server), tools, gate });
    expect(ran).toEqual([]);
    expect(outcome).toMatchObject({ status: 'input-required', requests: [{ tool: 'made', reason: '"made" is tagged write' }] });
    // And the model is offered it from the next request on.
    expect(server.bodies[1].tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['made', 'maker']);
  });

  it('is refused as unknown when called in the answer that forges it, though it would exist by the time the call ran', async () => {
    const server = await startScriptedOpenAI([{ toolCalls: [{ name: 'maker', arguments: {} }, { name: 'made', arguments: {} }] }, (body) => ({ text: toolResults(body).join(' | ') })]);
    const { tools, ran, made } = forging();
    // The call to `made` reaches the tools only once `maker` has registered it.
    const late: AgentTools = { list: tools.list, execute: async (name, args, options) => (name === 'made' && (await made), tools.execute(name, args, options)) };
    const outcome = await runAgentTurn([{ role: 'user', content: 'go' }], { model: openai(server), tools: late, gate });
    expect(ran).toEqual([]);
    expect(outcome.status === 'completed' && outcome.text).toMatch(/^forged made \| Error FORGE_TOOL_UNKNOWN: no tool named "made"/);
  });
});

describe('a paused batch saved before call ids were made unique', () => {
  it('refuses the calls that share an id: none of them was decided on its own', async () => {
    const ran: string[] = [];
    const tools = registry([{ name: 'writer', tags: ['write'], execute: async () => (ran.push('writer'), ok('written')) }, { name: 'reader', execute: async () => (ran.push('reader'), ok('read')) }]);
    const messages: ChatMessage[] = [];
    const pending = { calls: [{ id: 'dup', name: 'writer', arguments: {} }, { id: 'dup', name: 'reader', arguments: {} }, { id: 'w2', name: 'writer', arguments: {} }], decisions: { dup: 'allow', w2: 'ask' } as const };
    await settlePending(messages, pending, { dup: true, w2: false }, { tools });
    expect(ran).toEqual([]);
    expect(messages.map((m) => m.content)).toEqual([expect.stringContaining('FORGE_APPROVAL_DENIED'), expect.stringContaining('FORGE_APPROVAL_DENIED'), expect.stringContaining('FORGE_APPROVAL_DENIED')]);
  });
});

describe('answers as they arrive on the wire', () => {
  it('keeps a character whole when a JSON answer is split inside it', async () => {
    const server = await startServer(async (_req, res) => {
      const body = Buffer.from(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'Grüße aus Köln' }, finish_reason: 'stop' }] }));
      const cut = body.indexOf(Buffer.from('ü')) + 1; // between the two bytes of ü
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(body.subarray(0, cut));
      await new Promise((resolve) => setTimeout(resolve, 30));
      res.end(body.subarray(cut));
    });
    const model = createModelClient({ provider: 'openai', name: 'm', base_url: `${server.url}/v1` }, http, {});
    expect((await model.complete({ messages: [{ role: 'user', content: 'x' }], tools: [] })).text).toBe('Grüße aus Köln');
  });
});

describe.each([
  ['OpenAI', 'openai', {
    text: [{ choices: [{ index: 0, delta: { content: 'The answer is: do NOT' } }] }],
    toolCall: [{ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'writer', arguments: '{"path":"half.txt","content":"abc' } }] } }] }],
  }],
  ['Anthropic', 'anthropic', {
    text: [
      { type: 'message_start', message: { id: 'm', role: 'assistant', content: [] } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'The answer is: do NOT' } },
    ],
    toolCall: [
      { type: 'message_start', message: { id: 'm', role: 'assistant', content: [] } },
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'writer', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"path":"half.txt","content":"abc' } },
    ],
  }],
] as const)('a %s stream that ends cleanly before its end marker', (_name, provider, cut) => {
  /** A model that streams these events, then ends the response as if it were whole. */
  const cutShort = (events: readonly unknown[]) =>
    startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const data of events) res.write(`${provider === 'anthropic' ? `event: ${(data as { type: string }).type}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
      res.end();
    });
  const main = (url: string) => ({ provider, name: 'main', base_url: provider === 'openai' ? `${url}/v1` : url }) as const;

  it('is a failure, not a completed answer', async () => {
    const server = await cutShort(cut.text);
    const outcome = runAgentTurn([{ role: 'user', content: 'hi' }], { model: createModelClient(main(server.url), http, {}), tools: registry([]), gate: { decide: () => 'allow' }, stream: true });
    await expect(outcome).rejects.toThrow(/stream ended before the answer was complete/);
  });

  it('never puts half a tool call to anyone: the fallback answers instead', async () => {
    const server = await cutShort(cut.toolCall);
    const backup = await startScriptedOpenAI([{ text: 'from the backup' }]);
    const ran: string[] = [];
    const asked: string[] = [];
    const model = createModelClient({ ...main(server.url), fallbacks: [{ provider: 'openai', name: 'backup', base_url: `${backup.url}/v1` }] }, http, {});
    const tools = registry([{ name: 'writer', tags: ['write'], execute: async (args) => (ran.push(JSON.stringify(args)), ok('written')) }]);
    const outcome = await runAgentTurn([{ role: 'user', content: 'hi' }], { model, tools, gate: { decide: (spec) => (asked.push(spec.name), 'ask') }, stream: true });
    expect(outcome).toEqual({ status: 'completed', text: 'from the backup' });
    expect(asked).toEqual([]);
    expect(ran).toEqual([]);
  });
});

/** A failure the provider asks to be tried again on at once (the tests need not wait out the backoff). */
const busy = (status: number, text: string) => ({ status, text, headers: { 'retry-after-ms': '0' } });

describe('model fallbacks', () => {
  it('falls back to the next model when a provider fails, after asking it again twice', async () => {
    const failing = await startScriptedOpenAI([busy(503, 'overloaded'), busy(503, 'overloaded'), busy(503, 'still overloaded')]);
    const backup = await startScriptedAnthropic([{ text: 'from the backup' }]);
    const failures: string[] = [];
    const model = createModelClient(
      { provider: 'openai', name: 'main', base_url: `${failing.url}/v1`, fallbacks: [{ provider: 'anthropic', name: 'backup', base_url: backup.url }] },
      http,
      {},
      { fallback: (label, err) => failures.push(`${label}: ${err.message}`) },
    );
    expect(model.chain).toEqual(['openai:main', 'anthropic:backup']);
    const outcome = await runAgentTurn([{ role: 'user', content: 'hi' }], { model, tools: registry([]), gate: { decide: () => 'allow' }, stream: true });
    expect(outcome).toEqual({ status: 'completed', text: 'from the backup' });
    expect(failing.bodies).toHaveLength(1 + MODEL_RETRIES);
    expect(failures).toEqual(['openai:main: openai:main: HTTP 503: still overloaded']);
  });

  it('names every model when all of them fail', async () => {
    const a = await startScriptedOpenAI([busy(500, 'a broke'), busy(500, 'a broke'), busy(500, 'a broke')]);
    const model = createModelClient({ provider: 'openai', name: 'a', base_url: `${a.url}/v1`, fallbacks: [{ provider: 'openai', name: 'b', base_url: 'http://127.0.0.1:1/v1' }] }, http, {});
    const error = await model.complete({ messages: [{ role: 'user', content: 'x' }], tools: [] }).catch((e: Error) => e);
    expect((error as Error).message).toContain('HTTP 500: a broke');
    expect((error as Error).message).toContain('openai:b');
  });

  it('sends the API key from the named environment variable', async () => {
    const server = await startScriptedOpenAI([{ text: 'ok' }]);
    const model = createModelClient({ provider: 'openai', name: 'm', base_url: `${server.url}/v1`, api_key_env: 'MY_KEY' }, http, { MY_KEY: 'sk-test' });
    await model.complete({ messages: [{ role: 'user', content: 'x' }], tools: [] });
    expect(server.requests[0].headers.authorization).toBe('Bearer sk-test');
  });
});

/** The last tool result in a request body, in either wire format. */
function lastToolResult(body: Record<string, any>): string {
  return toolResults(body).at(-1)!;
}

/** The tool call ids of a request body's assistant messages, and the ids its tool results answer, in either wire format. */
function idsSent(body: Record<string, any>): { calls: string[]; results: string[] } {
  const calls: string[] = [];
  const results: string[] = [];
  for (const m of body.messages) {
    for (const c of m.tool_calls ?? []) calls.push(c.id);
    if (m.role === 'tool') results.push(m.tool_call_id);
    if (Array.isArray(m.content)) for (const b of m.content) b.type === 'tool_use' ? calls.push(b.id) : b.type === 'tool_result' ? results.push(b.tool_use_id) : undefined;
  }
  return { calls, results };
}

function toolResults(body: Record<string, any>): string[] {
  const out: string[] = [];
  for (const m of body.messages) {
    if (m.role === 'tool') out.push(m.content);
    if (Array.isArray(m.content)) for (const b of m.content) if (b.type === 'tool_result') out.push(b.content);
  }
  return out;
}
