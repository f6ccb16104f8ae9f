/**
 * The Anthropic messages wire format (tool_use / tool_result content blocks).
 *
 * Anthropic caches a request's beginning only where it is marked
 * (cache_control), and an agent sends the same tools, system prompt and
 * conversation again at every step of a turn and every turn after: marked,
 * a step pays a tenth of the input price for all but what is new since the
 * last one (a mark costs a quarter more once, on what it writes). Unmarked
 * (model.prompt_cache: false), every step pays for all of it.
 */
import type { HttpStream } from '../../net/http-client.ts';
import { parseToolArguments, ProviderError, type ChatMessage, type ModelProvider, type ModelRequest, type ModelResponse, type ToolCall } from '../messages.ts';
import { brokenStream, incompleteStream, postToProvider, readAll, type ProviderOptions } from './provider-http.ts';
import { ANTHROPIC_DEFAULT_MAX_TOKENS, extraFields } from './request-fields.ts';
import { readEvents } from './sse.ts';
import { shortBody, statedOutputLimit } from './http-errors.ts';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
const API_VERSION = '2023-06-01';

export interface AnthropicOptions extends ProviderOptions {
  /** Mark the request for Anthropic's prompt cache (default true). */
  promptCache?: boolean;
}

/** Where a request is marked for the prompt cache: the cache keeps what comes before the mark, and the mark's block. */
const CACHE_MARK = { type: 'ephemeral' } as const;

type Block = (
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean }
) & { cache_control?: typeof CACHE_MARK };

interface WireMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

export function createAnthropicProvider(options: AnthropicOptions): ModelProvider {
  const label = `anthropic:${options.model}`;
  const base = (options.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const url = /\/v1$/.test(base) ? `${base}/messages` : `${base}/v1/messages`;
  const headers: Record<string, string> = { 'content-type': 'application/json', 'anthropic-version': API_VERSION };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;

  // A server of this format that refused the cache's marks by name (not Anthropic's: a proxy, a local server) is sent none.
  let marks = options.promptCache !== false;
  // A model that refused a tool call sent back without a thinking block before it (DeepSeek's endpoint): see asksThinking.
  let everyCallThinks = false;
  // The most output tokens this model said it takes, once it refused more (statedOutputLimit).
  let maxOutput: number | undefined;
  // What model.extra_body adds to each request, Forge's own fields left out.
  const extra = extraFields(options.extraBody);
  // Anthropic takes a thinking budget only below max_tokens: a model's stated limit at or under it is not asked.
  const thinkingBudget = thinkingBudgetOf(extra);
  return {
    label,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const stream = request.onText !== undefined || request.stream === true;
      for (;;) {
        const messages = toWire(request.messages, label, everyCallThinks);
        const maxTokens = Math.min(request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS, maxOutput ?? Number.POSITIVE_INFINITY);
        const body: Record<string, unknown> = { ...extra, model: options.model, max_tokens: maxTokens, messages, stream };
        if (request.system) body.system = request.system;
        if (request.tools.length) body.tools = request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }));
        if (request.temperature !== undefined) body.temperature = request.temperature;
        const marked = marks;
        if (marked) markForCache(body, messages);
        try {
          const { response, streaming } = await postToProvider(label, options.http, { url, headers, body, timeoutMs: options.timeoutMs, idleMs: options.idleMs, signal: request.signal });
          return streaming ? readStream(label, response, request.onText) : readJson(label, response);
        } catch (err) {
          const limit = statedOutputLimit(err, maxTokens);
          if (marked && refusesMarks(err)) marks = false;
          else if (!everyCallThinks && asksThinking(err, messages)) everyCallThinks = true;
          else if (limit !== undefined && limit <= (thinkingBudget ?? 0)) throw budgetPastLimit(label, limit, thinkingBudget!);
          else if (limit !== undefined) maxOutput = limit;
          else throw err;
        }
      }
    },
  };
}

function thinkingBudgetOf(extra: Record<string, unknown>): number | undefined {
  const budget = (extra.thinking as { budget_tokens?: unknown } | undefined)?.budget_tokens;
  return typeof budget === 'number' ? budget : undefined;
}

/**
 * A model whose output limit is not above the thinking budget: asked again at its limit it would refuse again
 * ("max_tokens must be greater than thinking.budget_tokens"), which names neither number nor the setting to change.
 */
function budgetPastLimit(label: string, limit: number, budget: number): ProviderError {
  return new ProviderError(label, `the model gives at most ${limit} output tokens, not more than model.extra_body.thinking.budget_tokens (${budget}), and Anthropic takes a thinking budget only below max_tokens: lower budget_tokens below ${limit} in forge.yaml`, 400);
}

/** A 400 or 422 that names cache_control: the server does not take the cache's marks. */
function refusesMarks(err: unknown): boolean {
  return err instanceof ProviderError && (err.status === 400 || err.status === 422) && /\bcache_control\b/.test(err.message);
}

/**
 * A 400 that asks for the thinking behind a tool call sent back without any ("The `content[].thinking` in the
 * thinking mode must be passed back to the API": DeepSeek's endpoint, which thinks unless told not to, also where
 * it made a call without thinking a token; a fallback's calls, or those of a conversation kept before, have none of
 * its thinking). Such calls are then sent after an empty thinking block, which it takes.
 */
function asksThinking(err: unknown, messages: WireMessage[]): boolean {
  return err instanceof ProviderError && err.status === 400 && /\bthinking\b.*\bpassed back\b/s.test(err.message) && messages.some((m) => m.role === 'assistant' && m.content.some((b) => b.type === 'tool_use') && !thinks(m.content));
}

function thinks(content: readonly Block[]): boolean {
  const first = content[0]?.type;
  return first === 'thinking' || first === 'redacted_thinking';
}

/**
 * Three marks of the four a request may carry. The system prompt's keeps the tools and the prompt
 * (the same at every step; without a system prompt, the last tool's). The last message's keeps the
 * conversation for the next step. The one on the message the previous step ended with (the one
 * before the model's latest answer) lets this step read what that step kept: the cache looks back
 * only 20 blocks from a mark, and one answer with many tool calls and their results adds more.
 */
function markForCache(body: Record<string, unknown>, messages: WireMessage[]): void {
  if (typeof body.system === 'string') body.system = [{ type: 'text', text: body.system, cache_control: CACHE_MARK }];
  else if (Array.isArray(body.tools) && body.tools.length) body.tools[body.tools.length - 1].cache_control = CACHE_MARK;
  const lastAnswer = messages.findLastIndex((m) => m.role === 'assistant');
  for (const message of [messages[lastAnswer - 1], messages.at(-1)]) {
    // An empty text block may not be marked (nor sent): a message that ends with one is left unmarked.
    const block = message?.content.at(-1);
    if (block && !(block.type === 'text' && !block.text)) block.cache_control = CACHE_MARK;
  }
}

/**
 * Consecutive tool results travel together in one user message, as the API requires; messages alternate.
 * `everyCallThinks`: a message with tool calls and no thinking block of this model's begins with an empty one.
 */
function toWire(messages: readonly ChatMessage[], label: string, everyCallThinks: boolean): WireMessage[] {
  const out: WireMessage[] = [];
  for (const m of messages) {
    if (m.role === 'user') {
      // After a left-out answer, two user messages meet: one message, as the API would combine them anyway.
      const last = out.at(-1);
      if (last?.role === 'user') last.content.push({ type: 'text', text: m.content });
      else out.push({ role: 'user', content: [{ type: 'text', text: m.content }] });
    }
    else if (m.role === 'assistant') {
      // A thinking model's signed blocks come first, as it sent them, and to it alone: with thinking on, the API
      // refuses tool calls sent back without them; another model could not check their signatures.
      const content: Block[] = m.reasoning?.model === label && m.reasoning.blocks ? (m.reasoning.blocks.map((b) => ({ ...b })) as Block[]) : [];
      if (m.content.trim()) content.push({ type: 'text', text: m.content });
      for (const call of m.toolCalls ?? []) content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.arguments ?? {} });
      if (everyCallThinks && m.toolCalls?.length && !thinks(content)) content.unshift({ type: 'thinking', thinking: '' });
      // An answer of nothing (Claude at times ends a turn so) is left out: the API refuses a message without
      // content or with a blank text block, and would refuse every later turn of the conversation.
      if (content.length) out.push({ role: 'assistant', content });
    } else {
      const block: Block = { type: 'tool_result', tool_use_id: m.toolCallId, content: m.content, ...(m.isError ? { is_error: true } : {}) };
      const last = out.at(-1);
      if (last?.role === 'user' && last.content.every((b) => b.type === 'tool_result')) last.content.push(block);
      else out.push({ role: 'user', content: [block] });
    }
  }
  return out;
}

async function readJson(label: string, response: HttpStream): Promise<ModelResponse> {
  const raw = await readAll(response);
  let parsed: { content?: Block[]; stop_reason?: string; usage?: WireUsage };
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ProviderError(label, `answered with something that is not JSON: ${shortBody(raw, 200)}`);
  }
  let text = '';
  const toolCalls: ToolCall[] = [];
  const thinking: Block[] = [];
  for (const block of parsed.content ?? []) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'tool_use') toolCalls.push({ id: block.id, name: block.name, arguments: block.input ?? {} });
    else if (block.type === 'thinking' || block.type === 'redacted_thinking') thinking.push(block);
  }
  const usage = usageOf(parsed.usage, parsed.usage?.output_tokens);
  return { text, toolCalls, stopReason: parsed.stop_reason ?? 'end_turn', model: label, ...(usage ? { usage } : {}), ...reasoningOf(thinking) };
}

async function readStream(label: string, response: HttpStream, onText?: (delta: string) => void): Promise<ModelResponse> {
  let text = '';
  let stopReason = 'end_turn';
  // Text the caller was shown (onText): asked again, or of another model, it would be shown twice. Text of a
  // stream no one is shown (a schedule's turn) is not: a stream that breaks is asked again like any.
  const shown = (): boolean => onText !== undefined && text.length > 0;
  let inputUsage: WireUsage | undefined;
  let outputTokens = 0;
  const blocks = new Map<number, { type: string; id: string; name: string; json: string; thinking: string; signature: string; data: string }>();
  // message_stop says the answer is whole; without it the stream was cut short.
  let finished = false;
  try {
    for await (const event of readEvents(response)) {
      let data: {
        type?: string;
        index?: number;
        content_block?: { type: string; id?: string; name?: string; thinking?: string; signature?: string; data?: string };
        delta?: { type?: string; text?: string; partial_json?: string; thinking?: string; signature?: string; stop_reason?: string };
        message?: { usage?: WireUsage };
        usage?: { output_tokens?: number };
        error?: { type?: string; message?: string };
      };
      try {
        data = JSON.parse(event.data);
      } catch {
        continue;
      }
      switch (data.type ?? event.event) {
        case 'content_block_start':
          blocks.set(data.index ?? 0, {
            type: data.content_block?.type ?? 'text',
            id: data.content_block?.id ?? '',
            name: data.content_block?.name ?? '',
            json: '',
            thinking: data.content_block?.thinking ?? '',
            signature: data.content_block?.signature ?? '',
            data: data.content_block?.data ?? '',
          });
          break;
        case 'content_block_delta': {
          const block = blocks.get(data.index ?? 0);
          if (data.delta?.type === 'text_delta' && data.delta.text) {
            text += data.delta.text;
            onText?.(data.delta.text);
          } else if (data.delta?.type === 'input_json_delta' && block) {
            block.json += data.delta.partial_json ?? '';
          } else if (data.delta?.type === 'thinking_delta' && block) {
            block.thinking += data.delta.thinking ?? '';
          } else if (data.delta?.type === 'signature_delta' && block) {
            block.signature += data.delta.signature ?? '';
          }
          break;
        }
        case 'message_start':
          inputUsage = data.message?.usage;
          break;
        case 'message_delta':
          if (data.delta?.stop_reason) stopReason = data.delta.stop_reason;
          if (typeof data.usage?.output_tokens === 'number') outputTokens = data.usage.output_tokens;
          break;
        case 'message_stop':
          finished = true;
          break;
        case 'error':
          // Anthropic sends "overloaded_error" mid-stream as it answers 529 before one: worth asking again.
          throw new ProviderError(label, data.error?.message ?? 'stream error', undefined, shown(), data.error?.type === 'overloaded_error' ? {} : undefined);
      }
    }
  } catch (err) {
    throw brokenStream(label, err, shown());
  }

  if (!finished) throw incompleteStream(label, 'no message_stop', shown());
  const ordered = [...blocks.entries()].sort((a, b) => a[0] - b[0]).map(([, b]) => b);
  const toolCalls: ToolCall[] = ordered.filter((b) => b.type === 'tool_use').map((b) => ({ id: b.id, name: b.name, arguments: parseToolArguments(b.json) }));
  const thinking = ordered.flatMap((b): Block[] => (b.type === 'thinking' ? [{ type: 'thinking', thinking: b.thinking, signature: b.signature }] : b.type === 'redacted_thinking' ? [{ type: 'redacted_thinking', data: b.data }] : []));
  const usage = usageOf(inputUsage, outputTokens);
  return { text, toolCalls, stopReason, model: label, ...(usage ? { usage } : {}), ...reasoningOf(thinking) };
}

/** A thinking model's blocks as the response's reasoning: their text, and the blocks to send back whole. */
function reasoningOf(thinking: Block[]): Pick<ModelResponse, 'reasoning'> {
  if (!thinking.length) return {};
  const text = thinking.map((b) => (b.type === 'thinking' ? b.thinking : '')).join('\n');
  return { reasoning: { text, blocks: thinking } };
}

interface WireUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/**
 * Anthropic's input_tokens leaves out what was read from the cache and written to it; the usage
 * reported counts every input token (as OpenAI's prompt_tokens does, and OpenTelemetry's
 * gen_ai.usage.input_tokens asks), with the cached parts besides.
 */
function usageOf(usage: WireUsage | undefined, outputTokens: number | undefined): ModelResponse['usage'] {
  if (typeof usage?.input_tokens !== 'number') return undefined;
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  return { inputTokens: usage.input_tokens + cacheRead + cacheWrite, outputTokens: outputTokens ?? 0, ...(cacheRead ? { cacheReadTokens: cacheRead } : {}), ...(cacheWrite ? { cacheWriteTokens: cacheWrite } : {}) };
}
