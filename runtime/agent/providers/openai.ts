/**
 * The OpenAI chat-completions wire format: OpenAI itself, and through
 * `base_url` Azure OpenAI (its key in the api-key header), gateways, Ollama,
 * vLLM, LM Studio and llama.cpp.
 */
import type { HttpStream } from '../../net/http-client.ts';
import { parseToolArguments, ProviderError, type ChatMessage, type ModelProvider, type ModelRequest, type ModelResponse, type ToolCall } from '../messages.ts';
import { brokenStream, incompleteStream, postToProvider, readAll, type ProviderOptions } from './provider-http.ts';
import { extraFields } from './request-fields.ts';
import { readEvents } from './sse.ts';
import { shortBody, statedOutputLimit } from './http-errors.ts';
import { refusedSchemaKeywords, withoutKeywords } from './schema-keywords.ts';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * The chat-completions endpoint under `base`, its query kept: an Azure deployment's URL carries its
 * `?api-version=…` (appended after the query, the path was part of the version and Azure answered 404).
 */
function chatCompletionsUrl(base: string): string {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    return `${base.replace(/\/+$/, '')}/chat/completions`; // not a URL: the request says so when it is made
  }
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/chat/completions`;
  return url.href;
}

/** Azure OpenAI's hosts (its own, and Azure AI Foundry's), where a key goes in the api-key header. */
function isAzureOpenAI(url: string): boolean {
  return /^https?:\/\/[^/?#]*\.(openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com)(:\d+)?([/?#]|$)/i.test(url);
}

/**
 * A call's tool name without the special tokens gpt-oss's chat format leaks into it on some servers
 * ("lookup<|channel|>commentary" from vLLM and Ollama): no tool's name holds "<|".
 */
function toolName(raw: string | undefined): string {
  const name = raw ?? '';
  const leak = name.indexOf('<|');
  return leak > 0 ? name.slice(0, leak) : name;
}

/**
 * A call's arguments as text: a JSON string in OpenAI's format, but an object as llama.cpp's server
 * has sent them (read as text, an object was "[object Object]", and the call failed as not JSON).
 */
function argumentsText(raw: unknown): string {
  if (raw === undefined || raw === null) return '';
  return typeof raw === 'string' ? raw : JSON.stringify(raw);
}

type WireMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[]; reasoning_content?: string }
  | { role: 'tool'; tool_call_id: string; content: string };

export function createOpenAIProvider(options: ProviderOptions): ModelProvider {
  const label = `openai:${options.model}`;
  const url = chatCompletionsUrl(options.baseUrl ?? OPENAI_DEFAULT_BASE_URL);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  // Azure OpenAI takes a key in its api-key header: a Bearer token there must be Microsoft Entra ID's.
  if (options.apiKey && isAzureOpenAI(url)) headers['api-key'] = options.apiKey;
  else if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;

  // What this model refused to take, learned from its answers (see refusedSetting).
  const refused = new Set<RefusableSetting>();
  // The most output tokens this model said it gives, once it refused more (statedOutputLimit).
  let maxOutput: number | undefined;
  // JSON Schema keywords this model refused in tool parameters (schema-keywords.ts).
  const droppedKeywords = new Set<string>();
  // What model.extra_body adds to each request, Forge's own fields left out.
  const extra = extraFields(options.extraBody);
  return {
    label,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const stream = request.onText !== undefined || request.stream === true;
      for (;;) {
        const body: Record<string, unknown> = { ...extra, model: options.model, messages: toWire(request, label, refused.has('reasoning_content')), stream };
        // The token counts come in a last chunk only when asked for (OpenAI, vLLM, Ollama, llama.cpp all do).
        if (stream && !refused.has('stream_options')) body.stream_options = { include_usage: true };
        if (request.tools.length) {
          body.tools = request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: withoutKeywords(t.inputSchema, droppedKeywords) } }));
        }
        if (request.maxTokens !== undefined) body[refused.has('max_tokens') ? 'max_completion_tokens' : 'max_tokens'] = Math.min(request.maxTokens, maxOutput ?? Number.POSITIVE_INFINITY);
        if (request.temperature !== undefined && !refused.has('temperature')) body.temperature = request.temperature;
        try {
          const { response, streaming } = await postToProvider(label, options.http, { url, headers, body, timeoutMs: options.timeoutMs, idleMs: options.idleMs, signal: request.signal });
          return streaming ? readStream(label, response, request.onText) : readJson(label, response);
        } catch (err) {
          const setting = refusedSetting(err, body);
          const limit = statedOutputLimit(err, (body.max_tokens ?? body.max_completion_tokens) as number | undefined);
          const keywords = err instanceof ProviderError && err.status === 400 && body.tools ? refusedSchemaKeywords(err.message).filter((k) => !droppedKeywords.has(k)) : [];
          if (setting && !refused.has(setting)) refused.add(setting);
          else if (limit !== undefined) maxOutput = limit;
          else if (keywords.length) for (const keyword of keywords) droppedKeywords.add(keyword);
          else throw err;
        }
      }
    },
  };
}

/**
 * A setting this model refuses: one forge.yaml gave, as OpenAI's reasoning models (o-series, GPT-5)
 * do: `max_tokens` ("Unsupported parameter … Use 'max_completion_tokens' instead", which other
 * OpenAI-compatible servers may not know, so it is only sent once refused) and a `temperature` other
 * than their own ("Unsupported value: 'temperature' does not support 0.7"). It is then sent as they
 * take it, and so from then on, rather than failing every turn. Or the request for token counts in a
 * stream (stream_options), which some servers do not know: then the stream comes without them.
 */
function refusedSetting(err: unknown, body: Record<string, unknown>): RefusableSetting | undefined {
  if (!(err instanceof ProviderError) || (err.status !== 400 && err.status !== 422)) return undefined;
  // Servers that do not know stream_options (for the token counts) refuse it by name, in their own words:
  // "Unrecognized request argument supplied: stream_options" (older Azure), "extra_forbidden" (a 422).
  if ('stream_options' in body && /\bstream_options\b/.test(err.message)) return 'stream_options';
  if (err.status !== 400) return undefined;
  // A thinking model (DeepSeek) that wants reasoning_content with every call sent back, also where it had none.
  if (/\breasoning_content\b/.test(err.message) && (body.messages as WireMessage[]).some((m) => m.role === 'assistant' && m.tool_calls && m.reasoning_content === undefined)) return 'reasoning_content';
  const named = /Unsupported (?:parameter|value): '(\w+)'/.exec(err.message)?.[1];
  if (named === 'max_tokens' && 'max_tokens' in body) return 'max_tokens';
  if (named === 'temperature' && 'temperature' in body) return 'temperature';
  return undefined;
}

/**
 * What a model may refuse and be asked again without: see refusedSetting. `reasoning_content`: a call sent back
 * without it, which a thinking model refuses even where it wrote none (DeepSeek calls a tool at times without
 * reasoning a token; a fallback's calls, or those of a conversation kept before, have none of its reasoning).
 */
type RefusableSetting = 'max_tokens' | 'temperature' | 'stream_options' | 'reasoning_content';

/** `everyCall`: every assistant message with calls carries reasoning_content, empty where this model wrote none. */
function toWire(request: ModelRequest, label: string, everyCall: boolean): WireMessage[] {
  const out: WireMessage[] = [];
  if (request.system) out.push({ role: 'system', content: request.system });
  for (const m of request.messages as ChatMessage[]) {
    if (m.role === 'user') {
      // After a left-out answer, two user messages meet: one message, as chat templates that want turns to alternate take it.
      const last = out.at(-1);
      if (last?.role === 'user') last.content += `\n\n${m.content}`;
      else out.push({ role: 'user', content: m.content });
    } else if (m.role === 'assistant') {
      // An answer of nothing (a reasoning model that spent its output limit thinking, a filtered one) is left out:
      // OpenAI refuses an assistant message whose content is null without calls, and would refuse every later turn.
      if (!m.content && !m.toolCalls?.length) continue;
      const message: WireMessage = { role: 'assistant', content: m.content || null };
      if (m.toolCalls?.length) {
        message.tool_calls = m.toolCalls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) } }));
      }
      // To the model that wrote it only: another server may refuse a field it does not know.
      if (m.reasoning?.model === label) message.reasoning_content = m.reasoning.text;
      else if (everyCall && message.tool_calls) message.reasoning_content = '';
      out.push(message);
    } else out.push({ role: 'tool', tool_call_id: m.toolCallId, content: m.content });
  }
  return out;
}

async function readJson(label: string, response: HttpStream): Promise<ModelResponse> {
  const text = await readAll(response);
  let parsed: { choices?: { message?: { content?: string | null; tool_calls?: WireToolCall[]; reasoning_content?: string | null }; finish_reason?: string }[]; usage?: WireUsage };
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ProviderError(label, `answered with something that is not JSON: ${shortBody(text, 200)}`);
  }
  const choice = parsed.choices?.[0];
  if (!choice?.message) throw new ProviderError(label, 'answered without a choice');
  return {
    text: choice.message.content ?? '',
    toolCalls: (choice.message.tool_calls ?? []).map((c) => ({ id: c.id, name: toolName(c.function.name), arguments: parseToolArguments(argumentsText(c.function.arguments)) })),
    stopReason: choice.finish_reason ?? 'stop',
    model: label,
    ...usageOf(parsed.usage),
    ...(choice.message.reasoning_content ? { reasoning: { text: choice.message.reasoning_content } } : {}),
  };
}

async function readStream(label: string, response: HttpStream, onText?: (delta: string) => void): Promise<ModelResponse> {
  let text = '';
  let stopReason = 'stop';
  // Text the caller was shown (onText): asked again, or of another model, it would be shown twice. Text of a
  // stream no one is shown (a schedule's turn) is not: a stream that breaks is asked again like any.
  const shown = (): boolean => onText !== undefined && text.length > 0;
  let usage: ModelResponse['usage'];
  let reasoning = '';
  // Tool calls arrive in pieces, keyed by index: the first piece has the id and name. In the order they began.
  const calls: StreamedCall[] = [];
  const byIndex = new Map<number, StreamedCall>();
  // A finish_reason or [DONE] says the answer is whole; without either the stream was cut short.
  let finished = false;
  try {
    for await (const event of readEvents(response)) {
      if (event.data === '[DONE]') {
        finished = true;
        break;
      }
      let chunk: { choices?: { delta?: { content?: string | null; reasoning_content?: string | null; tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: unknown } }[] }; finish_reason?: string | null }[]; error?: { message?: string }; usage?: WireUsage };
      try {
        chunk = JSON.parse(event.data);
      } catch {
        continue; // keep-alive comments and the like
      }
      if (chunk.error) throw new ProviderError(label, chunk.error.message ?? 'stream error', undefined, shown());
      if (chunk.usage) usage = usageOf(chunk.usage).usage;
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta;
      if (delta?.content) {
        text += delta.content;
        onText?.(delta.content);
      }
      if (delta?.reasoning_content) reasoning += delta.reasoning_content;
      for (const piece of delta?.tool_calls ?? []) {
        const call = callOf(piece, calls, byIndex);
        if (piece.id) call.id = piece.id;
        // The name comes whole in a call's first piece; some servers send it again in every piece (vLLM's
        // parsers, NVIDIA NIM), which appended made "read_fileread_file".
        if (piece.function?.name && !call.name.endsWith(piece.function.name)) call.name += piece.function.name;
        if (piece.function?.arguments) call.args += argumentsText(piece.function.arguments);
      }
      if (choice.finish_reason) {
        stopReason = choice.finish_reason;
        finished = true;
      }
    }
  } catch (err) {
    throw brokenStream(label, err, shown());
  }
  if (!finished) throw incompleteStream(label, 'no finish_reason or [DONE]', shown());
  const toolCalls: ToolCall[] = calls.map((c, n) => ({ id: c.id || `call_${n}`, name: toolName(c.name), arguments: parseToolArguments(c.args) }));
  return { text, toolCalls, stopReason, model: label, ...(usage ? { usage } : {}), ...(reasoning ? { reasoning: { text: reasoning } } : {}) };
}

interface StreamedCall {
  id: string;
  name: string;
  args: string;
}

/**
 * The call a streamed piece belongs to: the one begun at its index, unless the piece begins another (an
 * id of its own: Ollama sends every call of an answer at index 0); without an index (some gateways and
 * older Ollama), the latest call, unless it begins another. Merged, two calls would run as one with
 * both arguments run together.
 */
function callOf(piece: { index?: number; id?: string }, calls: StreamedCall[], byIndex: Map<number, StreamedCall>): StreamedCall {
  const current = typeof piece.index === 'number' ? byIndex.get(piece.index) : calls.at(-1);
  if (current && !(piece.id && current.id && piece.id !== current.id)) return current;
  const call = { id: '', name: '', args: '' };
  calls.push(call);
  if (typeof piece.index === 'number') byIndex.set(piece.index, call);
  return call;
}

interface WireUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  /** What of the prompt OpenAI (and vLLM, with prefix caching) read from its cache: it caches on its own. */
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  /** The same, as DeepSeek reports it (it caches on its own too). */
  prompt_cache_hit_tokens?: number | null;
}

function usageOf(usage: WireUsage | undefined | null): { usage?: ModelResponse['usage'] } {
  if (!usage || typeof usage.prompt_tokens !== 'number') return {};
  const cacheRead = usage.prompt_tokens_details?.cached_tokens ?? usage.prompt_cache_hit_tokens ?? 0;
  return { usage: { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens ?? 0, ...(cacheRead ? { cacheReadTokens: cacheRead } : {}) } };
}
