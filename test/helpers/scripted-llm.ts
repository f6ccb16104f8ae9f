/**
 * Scripted LLM servers on loopback that speak the real wire formats — the
 * OpenAI chat-completions API and the Anthropic messages API, JSON or SSE
 * streaming as the request asks. Each request takes the next step of the
 * script; every request body is kept for assertions.
 */
import type { ServerResponse } from 'node:http';
import { AnthropicPromptCache } from './anthropic-prompt-cache.ts';
import { startServer, type TestServer } from './http-server.ts';

export interface ScriptedTurn {
  text?: string;
  /** `id: null` sends the call without an id, as some gateways do; without `id` the server makes one up. */
  toolCalls?: { id?: string | null; name: string; arguments: unknown }[];
  /** Answer with this HTTP status and an error body instead. */
  status?: number;
  /** Headers of that error answer (`retry-after`, `retry-after-ms`). */
  headers?: Record<string, string>;
  /** Answer JSON even to a streaming request, as some gateways and local servers do. */
  json?: boolean;
  /**
   * How the provider ends the answer, when not as the model chose: `cut-off` at the output token
   * limit (OpenAI `length`, Anthropic `max_tokens`; the last tool call's arguments end halfway, as
   * they do then), `filtered` (OpenAI `content_filter`, Anthropic `refusal`).
   */
  ends?: 'cut-off' | 'filtered';
  /** OpenAI: the prompt tokens its prompt cache served (usage.prompt_tokens_details.cached_tokens). */
  cachedTokens?: number;
  /** OpenAI format: the same as DeepSeek reports it, in its own fields (usage.prompt_cache_hit_tokens, and the rest as prompt_cache_miss_tokens). */
  cacheHitTokens?: number;
  /**
   * OpenAI, streaming: the index of each tool call's pieces as Ollama sends it (`reused`: 0 for every
   * call of the answer) or older Ollama and some gateways (`missing`), instead of 0, 1, 2…
   */
  toolCallIndex?: 'reused' | 'missing';
  /** OpenAI: each call's arguments as a JSON object, as llama.cpp's server has sent them, not a JSON string. */
  argumentsAsObject?: boolean;
  /** OpenAI, streaming: each call's name in every piece of it, as some vLLM parsers and NVIDIA NIM send it, not in its first only. */
  nameInEveryPiece?: boolean;
  /**
   * A thinking model's reasoning: OpenAI, `reasoning_content` before the answer (DeepSeek, Kimi);
   * Anthropic, a thinking block first, signed with `thinkingSignature(reasoning)`.
   */
  reasoning?: string;
}

/** A call's arguments as sent: cut off halfway when it is the last call of an answer cut off at the limit. */
function sentArguments(turn: ScriptedTurn, index: number, json: string): string {
  const last = index === (turn.toolCalls?.length ?? 0) - 1;
  return turn.ends === 'cut-off' && last ? json.slice(0, Math.floor(json.length / 2)) : json;
}

export interface ScriptedServer extends TestServer {
  bodies: Record<string, any>[];
  /** The usage each answer reported, in order (Anthropic's: see anthropic-prompt-cache.ts). */
  usages: Record<string, any>[];
}

/** A step may answer later (a Promise): a slow or hanging model. */
export type Step = ScriptedTurn | ((body: Record<string, any>) => ScriptedTurn | Promise<ScriptedTurn>);

function nextTurn(script: Step[], bodies: Record<string, any>[]): ScriptedTurn | Promise<ScriptedTurn> {
  const step = script[bodies.length - 1];
  // A client error, which no model client asks again: a test that runs past its script fails at once.
  if (!step) return { status: 400, text: `script has no step ${bodies.length}` };
  return typeof step === 'function' ? step(bodies.at(-1)!) : step;
}

function sse(res: ServerResponse, events: { event?: string; data: unknown }[]) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) res.write(`${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`);
  res.end();
}

export async function startScriptedOpenAI(script: Step[]): Promise<ScriptedServer> {
  const bodies: Record<string, any>[] = [];
  const usages: Record<string, any>[] = [];
  const server = await startServer(async (req, res) => {
    if (req.url !== '/v1/chat/completions') return res.writeHead(404).end();
    const body = JSON.parse(req.body);
    bodies.push(body);
    // Refused before the script is asked, as OpenAI refuses it: an assistant message of no content and no calls.
    if (body.messages.some((m: Record<string, unknown>) => m.role === 'assistant' && m.content == null && !m.tool_calls)) {
      return res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: "Invalid value for 'content': expected a string, got null.", type: 'invalid_request_error' } }));
    }
    const turn = await nextTurn(script, bodies);
    if (turn.status) return res.writeHead(turn.status, { 'content-type': 'application/json', ...turn.headers }).end(JSON.stringify({ error: { message: turn.text ?? 'scripted failure' } }));
    const calls = (turn.toolCalls ?? []).map((c, i) => ({ id: c.id === null ? undefined : (c.id ?? `call_${bodies.length}_${i}`), type: 'function', function: { name: c.name, arguments: turn.argumentsAsObject ? c.arguments : sentArguments(turn, i, JSON.stringify(c.arguments)) } }));
    const finish = turn.ends === 'cut-off' ? 'length' : turn.ends === 'filtered' ? 'content_filter' : calls.length ? 'tool_calls' : 'stop';
    // Token counts as a server reports them (a rough count: what matters is that they arrive).
    const usage = {
      prompt_tokens: Math.ceil(JSON.stringify(body.messages).length / 4),
      completion_tokens: Math.ceil((turn.text ?? '').length / 4) + calls.length * 8,
      ...(turn.cachedTokens !== undefined ? { prompt_tokens_details: { cached_tokens: turn.cachedTokens } } : {}),
    };
    if (turn.cacheHitTokens !== undefined) Object.assign(usage, { prompt_cache_hit_tokens: turn.cacheHitTokens, prompt_cache_miss_tokens: Math.max(0, usage.prompt_tokens - turn.cacheHitTokens) });
    usages.push(usage);
    if (!body.stream || turn.json) {
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: turn.text ?? null, reasoning_content: turn.reasoning, tool_calls: calls.length ? calls : undefined }, finish_reason: finish }], usage }));
    }
    const events: { data: unknown }[] = [];
    for (const piece of (turn.reasoning ?? '').match(/.{1,5}/gs) ?? []) events.push({ data: { choices: [{ index: 0, delta: { reasoning_content: piece } }] } });
    // Text in several pieces, and each tool call's arguments split in two, as real servers do.
    for (const piece of (turn.text ?? '').match(/.{1,5}/gs) ?? []) events.push({ data: { choices: [{ index: 0, delta: { content: piece } }] } });
    calls.forEach((c, n) => {
      const args = c.function.arguments;
      const index = turn.toolCallIndex === 'reused' ? 0 : turn.toolCallIndex === 'missing' ? undefined : n;
      // An object comes whole, in the call's first piece.
      if (typeof args !== 'string') return events.push({ data: { choices: [{ index: 0, delta: { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: args } }] } }] } });
      const half = Math.floor(args.length / 2);
      events.push({ data: { choices: [{ index: 0, delta: { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: args.slice(0, half) } }] } }] } });
      events.push({ data: { choices: [{ index: 0, delta: { tool_calls: [{ index, function: { ...(turn.nameInEveryPiece ? { name: c.function.name } : {}), arguments: args.slice(half) } }] } }] } });
    });
    events.push({ data: { choices: [{ index: 0, delta: {}, finish_reason: finish }] } });
    if (body.stream_options?.include_usage) events.push({ data: { choices: [], usage } });
    events.push({ data: '[DONE]' });
    sse(res, events);
  });
  return Object.assign(server, { bodies, usages });
}

export async function startScriptedAnthropic(script: Step[]): Promise<ScriptedServer> {
  const bodies: Record<string, any>[] = [];
  const usages: Record<string, any>[] = [];
  // Reports each answer's usage as the API does: what was read from the prompt cache and written to it apart.
  const cache = new AnthropicPromptCache();
  const server = await startServer(async (req, res) => {
    if (req.url !== '/v1/messages') return res.writeHead(404).end();
    const body = JSON.parse(req.body);
    bodies.push(body);
    // Refused before the script is asked, as the API refuses it: a message without content, or an empty text block.
    const invalid = emptyContent(body);
    if (invalid) return res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: invalid } }));
    const turn = await nextTurn(script, bodies);
    if (turn.status) return res.writeHead(turn.status, { 'content-type': 'application/json', ...turn.headers }).end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: turn.text ?? 'scripted failure' } }));
    const blocks: any[] = [];
    if (turn.reasoning) blocks.push({ type: 'thinking', thinking: turn.reasoning, signature: thinkingSignature(turn.reasoning) });
    if (turn.text) blocks.push({ type: 'text', text: turn.text });
    (turn.toolCalls ?? []).forEach((c, i) => blocks.push({ type: 'tool_use', id: c.id === null ? undefined : (c.id ?? `toolu_${bodies.length}_${i}`), name: c.name, input: c.arguments }));
    const stopReason = turn.ends === 'cut-off' ? 'max_tokens' : turn.ends === 'filtered' ? 'refusal' : turn.toolCalls?.length ? 'tool_use' : 'end_turn';
    const usage = cache.take(body);
    const outputTokens = Math.ceil(JSON.stringify(blocks).length / 4);
    usages.push({ ...usage, output_tokens: outputTokens });
    if (!body.stream || turn.json) {
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', content: blocks, stop_reason: stopReason, usage: { ...usage, output_tokens: outputTokens } }));
    }
    const events: { event: string; data: unknown }[] = [{ event: 'message_start', data: { type: 'message_start', message: { id: 'msg_1', role: 'assistant', content: [], usage: { ...usage, output_tokens: 1 } } } }];
    blocks.forEach((block, index) => {
      if (block.type === 'thinking') {
        events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } } });
        for (const piece of block.thinking.match(/.{1,5}/gs) ?? []) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } } });
        events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } } });
      } else if (block.type === 'text') {
        events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
        for (const piece of block.text.match(/.{1,5}/gs) ?? []) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } } });
      } else {
        const json = sentArguments(turn, index - (turn.text ? 1 : 0) - (turn.reasoning ? 1 : 0), JSON.stringify(block.input));
        const half = Math.floor(json.length / 2);
        events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } } });
        events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(0, half) } } });
        events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: json.slice(half) } } });
      }
      events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    });
    events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stopReason }, usage: { output_tokens: outputTokens } } });
    events.push({ event: 'message_stop', data: { type: 'message_stop' } });
    sse(res, events);
  });
  return Object.assign(server, { bodies, usages });
}

/** The messages API's words for messages it refuses (empty, or not alternating), or undefined. */
function emptyContent(body: Record<string, any>): string | undefined {
  for (const [i, m] of (body.messages ?? []).entries()) {
    // The API combines consecutive messages of one role; Bedrock's and others' refuse them: kept apart here.
    if (i > 0 && body.messages[i - 1].role === m.role) return `messages.${i}: roles must alternate between "user" and "assistant"`;
    const last = i === body.messages.length - 1 && m.role === 'assistant';
    if ((typeof m.content === 'string' ? m.content === '' : m.content.length === 0) && !last) return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    for (const block of Array.isArray(m.content) ? m.content : []) if (block.type === 'text' && !block.text.trim()) return `messages.${i}: text content blocks must contain non-whitespace text`;
  }
  return undefined;
}

/** The signature the scripted Anthropic server gives a thinking block (the real API's is opaque, and checked when sent back). */
export function thinkingSignature(thinking: string): string {
  return `sig-${Buffer.from(thinking).toString('base64')}`;
}
