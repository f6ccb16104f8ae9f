/**
 * The conversation as the agent keeps it, independent of any provider's
 * wire format. Providers translate to and from this; sessions persist it.
 */
import { redactSecrets } from '../known-secrets.ts';
import type { ToolTextForm } from './tool-output.ts';

export interface ToolCall {
  id: string;
  name: string;
  /** Parsed arguments (an object when the model sent valid JSON). */
  arguments: unknown;
}

export type ChatMessage =
  | { role: 'user'; content: string }
  /** `reasoning`: what a thinking model reasoned before these calls, kept for the model that wrote it (see ModelResponse). */
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[]; reasoning?: Reasoning }
  /** `form`: what the content's text does not say itself, to read the result back (parseToolResultText). */
  | { role: 'tool'; toolCallId: string; name: string; content: string; isError?: boolean; form?: ToolTextForm };

export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  system?: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  maxTokens?: number;
  temperature?: number;
  signal?: AbortSignal;
  /** The conversation this request goes on with (its context id): a context window is learned per conversation (context-window.ts). */
  conversation?: string;
  /** The A2A task the request is for: named, with the conversation, in what the model client logs (a retry, a fallback). */
  task?: string;
  /**
   * Ask for the answer as a stream even with no onText: a long answer then has no deadline on the whole,
   * only on its gaps (provider-http.ts), where an answer sent whole as JSON must come within the deadline
   * on the response.
   */
  stream?: boolean;
  /** Called with each piece of text as it streams in; providers stream when it is set. */
  onText?: (delta: string) => void;
}

export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  stopReason: string;
  /** Which model answered ("openai:gpt-4o-mini"), for logs and fallbacks. */
  model: string;
  /** Tokens the provider reported (absent when it reported none). */
  usage?: TokenUsage;
  /**
   * The reasoning a thinking model sent besides its answer (OpenAI format: `reasoning_content`, as
   * DeepSeek and Kimi send it; Anthropic format: thinking blocks). They refuse a conversation whose
   * tool calls come back without the reasoning that led to them, so it is kept with the calls and sent
   * back to the model that wrote it.
   */
  reasoning?: ReasoningParts;
}

/** A thinking model's reasoning: its text, and (Anthropic format) the signed blocks it came in, to send back as they were. */
export interface ReasoningParts {
  text: string;
  blocks?: Record<string, unknown>[];
}

/** A thinking model's reasoning, and the model that wrote it (its provider label). */
export interface Reasoning extends ReasoningParts {
  model: string;
}

export interface TokenUsage {
  /** Every input token, those read from and written to the provider's prompt cache among them. */
  inputTokens: number;
  outputTokens: number;
  /** Input tokens read from the provider's prompt cache (billed at a fraction of the price). */
  cacheReadTokens?: number;
  /** Input tokens written to it (Anthropic bills these at a little more than the price). */
  cacheWriteTokens?: number;
}

export interface ModelProvider {
  readonly label: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
}

/**
 * A provider that could not answer: the next fallback is tried. Its message
 * may echo the key it was sent ("invalid x-api-key: Bearer sk-..."): masked
 * before it goes anywhere.
 */
export class ProviderError extends Error {
  constructor(
    readonly provider: string,
    message: string,
    readonly status?: number,
    /** True once text has been streamed to the caller: falling back would repeat it. */
    readonly streamed = false,
    /** Set when asking the same model again may succeed (providers/retries.ts): `afterMs`, how long it asked to wait. */
    readonly transient?: { afterMs?: number },
  ) {
    super(redactSecrets(`${provider}: ${message}`));
    this.name = 'ProviderError';
  }
}

/** Arguments arrive as a JSON string; a model that sends broken JSON gets the text back in an error (see unparsedArguments). */
export function parseToolArguments(raw: string): unknown {
  if (raw.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { [UNPARSED]: raw };
  }
  // Some servers encode the arguments twice ("{\"path\": …}" as a JSON string). Arguments are an
  // object, never a string, so the object inside is what the model meant.
  if (typeof value === 'string') {
    try {
      const inner: unknown = JSON.parse(value);
      if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) return inner;
    } catch {
      // a plain string: the tool's check refuses it as not an object
    }
  }
  return value;
}

const UNPARSED = '__unparsed_arguments';

/** The text of arguments that were not JSON (parseToolArguments kept it so), else undefined. */
export function unparsedArguments(args: unknown): string | undefined {
  if (args === null || typeof args !== 'object' || !Object.hasOwn(args, UNPARSED)) return undefined;
  const raw = (args as Record<string, unknown>)[UNPARSED];
  return Object.keys(args).length === 1 && typeof raw === 'string' ? raw : undefined;
}

/**
 * Why a model's answer ended early, from the provider's stop reason: `cut-off` at its output token
 * limit (OpenAI's `length`, Anthropic's `max_tokens`), `filtered` by the provider (OpenAI's
 * `content_filter`, Anthropic's `refusal`). Undefined for an answer that ended as the model chose.
 */
export function endedEarly(stopReason: string): 'cut-off' | 'filtered' | undefined {
  if (stopReason === 'length' || stopReason === 'max_tokens') return 'cut-off';
  if (stopReason === 'content_filter' || stopReason === 'refusal') return 'filtered';
  return undefined;
}
