/**
 * The OpenAI wire format with servers that differ from OpenAI: models that
 * refuse a setting forge.yaml gave (OpenAI's reasoning models take
 * max_completion_tokens, not max_tokens, and only their own temperature;
 * refused once, sent as they take it from then on), and servers that send
 * tool calls their own way (Ollama, llama.cpp, vLLM, NVIDIA NIM), and
 * thinking models that must be sent their reasoning back (DeepSeek, Kimi).
 */
import { describe, expect, it } from 'vitest';
import { createOpenAIProvider } from '../../../../runtime/agent/providers/openai.ts';
import { HttpClient, type HostLookup } from '../../../../runtime/net/http-client.ts';
import { ok } from '../../../../runtime/tools/model.ts';
import { startServer } from '../../../helpers/http-server.ts';
import { agentWithTools } from '../../../helpers/tool-agent.ts';
import { startScriptedOpenAI, type ScriptedServer, type ScriptedTurn } from '../../../helpers/scripted-llm.ts';

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

describe('an OpenAI model asked for more output tokens than it gives', () => {
  it('is asked again at the limit it states, and from then on at most that', async () => {
    const limited = (body: Record<string, any>): ScriptedTurn =>
      body.max_tokens > 16384 ? { status: 400, text: `max_tokens is too large: ${body.max_tokens}. This model supports at most 16384 completion tokens, whereas you provided ${body.max_tokens}.` } : { text: `took ${body.max_tokens}` };
    const server = await startScriptedOpenAI([limited, limited, limited]);
    const model = createOpenAIProvider({ model: 'gpt-4o', baseUrl: `${server.url}/v1`, http: new HttpClient() });
    const many = { messages: [{ role: 'user' as const, content: 'write a lot' }], tools: [], maxTokens: 64_000 };
    expect(await model.complete(many)).toMatchObject({ text: 'took 16384' });
    expect(await model.complete(many)).toMatchObject({ text: 'took 16384' });
    expect(server.bodies.map((b) => b.max_tokens)).toEqual([64_000, 16384, 16384]);
  });
});

describe('a server that does not know stream_options', () => {
  it.each([
    ['older Azure', 400, 'Unrecognized request argument supplied: stream_options'],
    ['a strict server', 422, '[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted"}]'],
  ])('(%s) is asked again without it, and from then on (the stream comes without token counts)', async (_who, status, message) => {
    const strict = (body: Record<string, any>): ScriptedTurn => ('stream_options' in body ? { status, text: message } : { text: 'streamed' });
    const server = await startScriptedOpenAI([strict, strict, strict]);
    const client = createOpenAIProvider({ model: 'strict', baseUrl: `${server.url}/v1`, http: new HttpClient() });
    const ask = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [], stream: true };
    expect(await client.complete(ask)).toMatchObject({ text: 'streamed' });
    expect(await client.complete(ask)).toMatchObject({ text: 'streamed' });
    expect(server.bodies.map((b) => 'stream_options' in b)).toEqual([true, false, false]);
  });
});

/** Tool calls as servers other than OpenAI's send them: numbered their own way, named again, with leaked tokens, arguments as objects. */
describe('tool calls from servers that send them their own way', () => {
  const calls = [
    { id: 'call_a', name: 'file_write', arguments: { path: 'hello.py', content: 'print("hello")' } },
    { id: 'call_b', name: 'file_write', arguments: { path: 'world.py', content: 'print("world")' } },
  ];

  it.each(['reused', 'missing'] as const)('keeps the calls of one answer apart when the index is %s (Ollama)', async (toolCallIndex) => {
    const server = await startScriptedOpenAI([{ toolCalls: calls, toolCallIndex }]);
    const client = createOpenAIProvider({ model: 'ollama', baseUrl: `${server.url}/v1`, http: new HttpClient() });
    const response = await client.complete({ messages: [{ role: 'user', content: 'write both' }], tools: [], stream: true });
    expect(response.toolCalls).toEqual(calls);
  });

  it('takes a name sent again in every piece of its call once (vLLM parsers, NVIDIA NIM)', async () => {
    const server = await startScriptedOpenAI([{ toolCalls: calls, nameInEveryPiece: true }]);
    const client = createOpenAIProvider({ model: 'nim', baseUrl: `${server.url}/v1`, http: new HttpClient() });
    expect((await client.complete({ messages: [{ role: 'user', content: 'write both' }], tools: [], stream: true })).toolCalls).toEqual(calls);
  });

  it.each([false, true])("drops the chat format's special tokens gpt-oss leaks into a name (streaming: %s)", async (stream) => {
    const server = await startScriptedOpenAI([{ toolCalls: [{ ...calls[0], name: 'file_write<|channel|>commentary' }] }]);
    const client = createOpenAIProvider({ model: 'gpt-oss', baseUrl: `${server.url}/v1`, http: new HttpClient() });
    expect((await client.complete({ messages: [{ role: 'user', content: 'write' }], tools: [], stream })).toolCalls).toEqual([calls[0]]);
  });

  it.each([false, true])('reads arguments sent as a JSON object, as llama.cpp has sent them (streaming: %s)', async (stream) => {
    const server = await startScriptedOpenAI([{ toolCalls: calls, argumentsAsObject: true }]);
    const client = createOpenAIProvider({ model: 'llama', baseUrl: `${server.url}/v1`, http: new HttpClient() });
    expect((await client.complete({ messages: [{ role: 'user', content: 'write both' }], tools: [], stream })).toolCalls).toEqual(calls);
  });
});

/** DeepSeek's words for a conversation whose tool calls come back without the reasoning that led to them. */
const MISSING_REASONING = 'The `reasoning_content` in the thinking mode must be passed back to the API.';

/** A thinking model that refuses, as DeepSeek does, an assistant message with tool calls but no reasoning_content. */
function thinkingModel(steps: ScriptedTurn[]) {
  return steps.map((step) => (body: Record<string, any>): ScriptedTurn => {
    const bare = body.messages.some((m: Record<string, unknown>) => m.role === 'assistant' && m.tool_calls && typeof m.reasoning_content !== 'string');
    return bare ? { status: 400, text: MISSING_REASONING } : step;
  });
}

/** Two turns (Oslo, then Lyon) of an agent on `server`; the reasoning_content of each answer in the last request. */
async function reasoningSentBack(server: ScriptedServer, stream: boolean): Promise<unknown[]> {
  const agent = agentWithTools({ provider: 'openai', name: 'deepseek-v4-flash', base_url: `${server.url}/v1` }, [{ name: 'lookup', execute: async () => ok({ found: true }) }]);
  const send = (text: string) => agent.send('c', text, stream ? { stream: true, onEvent: () => {} } : {});
  expect(await send('How many people live in Oslo?')).toMatchObject({ status: 'completed', text: 'Oslo has 709,000 people.' });
  expect(await send('And Lyon?')).toMatchObject({ status: 'completed', text: 'Lyon has 522,000 people.' });
  const assistants = server.bodies.at(-1)!.messages.filter((m: Record<string, unknown>) => m.role === 'assistant');
  return assistants.map((m: Record<string, unknown>) => m.reasoning_content);
}

describe('a thinking model that must be sent its reasoning back with its tool calls (DeepSeek, Kimi)', () => {
  it.each([false, true])('gets the reasoning behind each call in the turns after it (streaming: %s)', async (stream) => {
    const server = await startScriptedOpenAI(
      thinkingModel([
        { reasoning: 'The user wants Oslo: look it up.', toolCalls: [{ name: 'lookup', arguments: { city: 'Oslo' } }] },
        { reasoning: 'Found it.', text: 'Oslo has 709,000 people.' },
        { reasoning: 'Now Lyon.', toolCalls: [{ name: 'lookup', arguments: { city: 'Lyon' } }] },
        { text: 'Lyon has 522,000 people.' },
      ]),
    );
    expect(await reasoningSentBack(server, stream)).toEqual(['The user wants Oslo: look it up.', undefined, 'Now Lyon.']);
  });

  // Regression: DeepSeek V4 at times calls a tool without reasoning a token; kept without reasoning, that call was
  // sent back without reasoning_content, which DeepSeek refuses, at that step and every later turn of the conversation.
  it.each([false, true])('a call it made without reasoning goes back with empty reasoning once the model asks for it (streaming: %s)', async (stream) => {
    const server = await startScriptedOpenAI(
      thinkingModel([
        { toolCalls: [{ name: 'lookup', arguments: { city: 'Oslo' } }] },
        // Refused (the call goes back without reasoning_content), then asked again:
        { reasoning: 'Found it.', text: 'Oslo has 709,000 people.' },
        { reasoning: 'Found it.', text: 'Oslo has 709,000 people.' },
        { reasoning: 'Now Lyon.', toolCalls: [{ name: 'lookup', arguments: { city: 'Lyon' } }] },
        { text: 'Lyon has 522,000 people.' },
      ]),
    );
    expect(await reasoningSentBack(server, stream)).toEqual(['', undefined, 'Now Lyon.']);
    // Refused once, then sent so from then on.
    expect(server.bodies).toHaveLength(5);
  });

  it('is not sent to another model: a fallback gets the calls without the reasoning it did not write', async () => {
    const thinker = await startScriptedOpenAI([{ reasoning: 'Look it up.', toolCalls: [{ name: 'lookup', arguments: {} }] }, { status: 400, text: 'a client error no retry helps' }]);
    const other = await startScriptedOpenAI([{ text: 'done' }]);
    const agent = agentWithTools({ provider: 'openai', name: 'thinker', base_url: `${thinker.url}/v1`, fallbacks: [{ provider: 'openai', name: 'other', base_url: `${other.url}/v1` }] }, [{ name: 'lookup', execute: async () => ok('found') }]);
    expect(await agent.send('c', 'go')).toMatchObject({ status: 'completed', text: 'done' });
    expect(JSON.stringify(thinker.bodies[1])).toContain('"reasoning_content":"Look it up."');
    expect(JSON.stringify(other.bodies[0])).not.toContain('reasoning_content');
  });
});

describe('Azure OpenAI', () => {
  it("is called at a deployment's URL with its api-version kept, the key in its api-key header", async () => {
    const KEY = 'azure-key-123';
    // As Azure answers: the deployment's path and api-version, and a key in api-key (a Bearer token must be Entra ID's).
    const azure = await startServer((req, res) => {
      if (req.url !== '/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21') return res.writeHead(404).end('{"error":{"code":"404","message":"Resource not found"}}');
      if (req.headers['api-key'] !== KEY || req.headers.authorization) return res.writeHead(401).end('{"error":{"code":"401","message":"Access denied due to invalid subscription key"}}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'hello from Azure' }, finish_reason: 'stop' }] }));
    });
    const lookup: HostLookup = (_host, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]);
    const port = new URL(azure.url).port;
    const client = createOpenAIProvider({ model: 'gpt-4o', baseUrl: `http://my-resource.openai.azure.com:${port}/openai/deployments/gpt-4o?api-version=2024-10-21`, apiKey: KEY, http: new HttpClient(undefined, { lookup }) });
    expect(await client.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] })).toMatchObject({ text: 'hello from Azure' });
  });

  it('sends any other server the key as a Bearer token', async () => {
    const server = await startScriptedOpenAI([{ text: 'hi' }]);
    await createOpenAIProvider({ model: 'm', baseUrl: `${server.url}/v1`, apiKey: 'sk-1', http: new HttpClient() }).complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    expect(server.requests[0].headers).toMatchObject({ authorization: 'Bearer sk-1' });
    expect(server.requests[0].headers).not.toHaveProperty('api-key');
  });
});

describe('a server that takes only part of JSON Schema in tool parameters (Gemini)', () => {
  /** As Gemini's OpenAI-compatible endpoint answers a keyword it does not know: a list of one error, naming each. */
  const KNOWN = new Set(['type', 'properties', 'required', 'description', 'items', 'enum', 'format', 'nullable', 'anyOf', 'minimum', 'maximum']);
  function unknownKeywords(schema: unknown, at: string, found: string[]): string[] {
    if (Array.isArray(schema)) schema.forEach((item, i) => unknownKeywords(item, `${at}[${i}]`, found));
    else if (schema && typeof schema === 'object') {
      for (const [key, value] of Object.entries(schema)) {
        if (!KNOWN.has(key)) found.push(`Invalid JSON payload received. Unknown name "${key.replace(/^\$ref$/, 'ref')}" at '${at}': Cannot find field.`);
        else if (key === 'properties') for (const [name, sub] of Object.entries(value as object)) unknownKeywords(sub, `${at}.properties[${name}].value`, found);
        else if (key === 'items' || key === 'anyOf') unknownKeywords(value, `${at}.${key}`, found);
      }
    }
    return found;
  }

  it('is sent the tools without the keywords it refused, from then on; the tool still checks its arguments whole', async () => {
    const sent: Record<string, any>[] = [];
    const gemini = await startServer((req, res) => {
      const body = JSON.parse(req.body);
      sent.push(body);
      const refusals = body.tools.flatMap((t: any, i: number) => unknownKeywords(t.function.parameters, `tools[0].function_declarations[${i}].parameters`, []));
      if (refusals.length) return res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify([{ error: { code: 400, message: refusals.join('\n'), status: 'INVALID_ARGUMENT' } }]));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'fine' }, finish_reason: 'stop' }] }));
    });
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      additionalProperties: false,
      required: ['mode'],
      properties: {
        mode: { const: 'fast', description: 'How.' },
        // A property named like a keyword is a name, not a keyword: it stays.
        const: { type: 'string' },
        tags: { type: 'array', items: { $ref: '#/definitions/tag' } },
      },
      definitions: { tag: { type: 'string' } },
    };
    const model = createOpenAIProvider({ model: 'gemini-2.5-flash', baseUrl: `${gemini.url}/v1beta/openai`, http: new HttpClient() });
    const ask = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [{ name: 'pick', description: 'Picks.', inputSchema: schema }] };
    expect(await model.complete(ask)).toMatchObject({ text: 'fine' });
    expect(await model.complete(ask)).toMatchObject({ text: 'fine' });
    // Refused once naming all it does not know, then sent without them, and so from then on.
    expect(sent).toHaveLength(3);
    expect(sent[2].tools[0].function.parameters).toEqual({ type: 'object', required: ['mode'], properties: { mode: { description: 'How.' }, const: { type: 'string' }, tags: { type: 'array', items: {} } } });
    // The schema the tool checks its arguments with is untouched.
    expect(schema.additionalProperties).toBe(false);
  });

  it("reads the message of the list of one error Gemini's endpoint answers", async () => {
    const gemini = await startServer((_req, res) => res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify([{ error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT' } }])));
    const model = createOpenAIProvider({ model: 'gemini-2.5-flash', baseUrl: `${gemini.url}/v1beta/openai`, http: new HttpClient() });
    await expect(model.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] })).rejects.toThrow('HTTP 400: API key not valid. Please pass a valid API key.');
  });
});

describe('extra fields (model.extra_body)', () => {
  it("are sent with every request, and cannot replace Forge's own (an agent.json edited by hand)", async () => {
    const server = await startScriptedOpenAI([{ text: 'a' }, { text: 'b' }]);
    const extraBody = { reasoning_effort: 'minimal', model: 'other', messages: [], stream: true };
    const client = createOpenAIProvider({ model: 'gpt', baseUrl: `${server.url}/v1`, http: new HttpClient(), extraBody });
    await client.complete(ask);
    await client.complete(ask);
    expect(server.bodies.map((b) => [b.model, b.reasoning_effort, b.stream, b.messages.length])).toEqual([
      ['gpt', 'minimal', false, 1],
      ['gpt', 'minimal', false, 1],
    ]);
  });

  it('never carry tools, a token limit or a temperature of their own where Forge writes none (an agent.json edited by hand)', async () => {
    const server = await startScriptedOpenAI([{ text: 'a' }]);
    const extraBody = { reasoning_effort: 'low', tools: [{ type: 'function', function: { name: 'exfiltrate', parameters: { type: 'object' } } }], max_completion_tokens: 1, temperature: 2, stream_options: { include_usage: false } };
    const client = createOpenAIProvider({ model: 'gpt', baseUrl: `${server.url}/v1`, http: new HttpClient(), extraBody });
    await client.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    expect(Object.keys(server.bodies[0]).sort()).toEqual(['messages', 'model', 'reasoning_effort', 'stream']);
  });
});
