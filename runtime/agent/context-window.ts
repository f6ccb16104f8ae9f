/**
 * What of a conversation goes to the model. A conversation is kept whole,
 * and grows with every turn (a schedule's, every time it comes due); past
 * the model's context window every further message in it would fail. The
 * window is learned rather than configured (no one knows a local model's
 * `num_ctx` or a gateway's limit): the whole conversation is sent until the
 * provider answers that it is too long; then the earliest turns are left
 * out, the sent part shrinking to 60 % until the provider takes it, and
 * that size is kept for the conversation and the model for the rest of the
 * process. Per conversation, since the size is in characters and a window
 * in tokens: a conversation whose text takes more tokens a character
 * (another language, encoded data) is refused at fewer characters, and
 * would otherwise cut what every other conversation is sent. Each model of
 * a client learns its own (withWindow wraps each, under the fallbacks): a
 * fallback with a smaller window neither cuts what the main model is sent
 * nor is spared its cut because the main model failed first.
 *
 * A conversation is cut only where a user's message begins, so a tool call
 * and its result are always sent together (both wire formats refuse a
 * result without its call), and what is sent starts with a user message.
 */
import { ForgeError } from '../diagnostics.ts';
import { ProviderError, type ChatMessage, type ModelProvider, type ModelRequest, type ModelResponse } from './messages.ts';

/** Conversations whose window a model keeps, the latest (a Map keeps insertion order). */
export const WINDOWS_KEPT = 10_000;

/**
 * One model asked with as much of the conversation as its window takes: on "too long", the earliest
 * turns are left out and it is asked again, until only the turn is left (then FORGE_MODEL_CONTEXT).
 * The window is this model's alone and the conversation's (request.conversation), learned from its own refusals.
 */
export function withWindow(provider: ModelProvider): ModelProvider {
  // Per conversation: at most this many characters of messages, once the model refused more.
  const maxChars = new Map<string, number>();
  return {
    label: provider.label,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const { messages } = request;
      const key = request.conversation ?? '';
      for (;;) {
        const start = windowStart(messages, maxChars.get(key));
        try {
          return await provider.complete(start ? { ...request, messages: messages.slice(start), system: systemWithWindow(request.system, start) } : request);
        } catch (err) {
          if (!isContextTooLong(err) || request.signal?.aborted) throw err;
          const chars = charsFrom(messages, start);
          // Only the turn itself is left to send: nothing more can be left out.
          if (start === lastUserIndex(messages)) throw new ContextTooLongError(provider.label, chars, err.message);
          const learned = Math.min(maxChars.get(key) ?? Number.POSITIVE_INFINITY, Math.floor(chars * SHRINK));
          maxChars.delete(key);
          maxChars.set(key, learned);
          if (maxChars.size > WINDOWS_KEPT) maxChars.delete(maxChars.keys().next().value!);
        }
      }
    },
  };
}

function lastUserIndex(messages: readonly ChatMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user') return i;
  return 0;
}

/** Each refusal leaves out the earliest turns until at most this share of what was refused is sent. */
const SHRINK = 0.6;

export class ContextTooLongError extends ForgeError {
  constructor(model: string, chars: number, cause: string) {
    super(
      'FORGE_MODEL_CONTEXT',
      `the latest message and what the agent did for it (${chars} characters) are too long for model ${model} on their own: ${cause}`,
      'send a shorter message, give the tools smaller results to return, or use a model with a larger context window',
    );
  }
}

/**
 * The provider's words for a conversation too long for the model: OpenAI and vLLM ("maximum context
 * length", context_length_exceeded), Anthropic ("prompt is too long"), llama.cpp ("exceeds the
 * available context size"), Gemini's OpenAI endpoint ("input token count … exceeds"), and a gateway's
 * 413.
 */
const TOO_LONG = /maximum context length|context_length_exceeded|context length|prompt is too long|exceeds? the (available )?context|exceed_context_size|context window|input token count.*exceeds|too many (input )?tokens/i;

export function isContextTooLong(err: unknown): err is ProviderError {
  return err instanceof ProviderError && (err.status === 413 || TOO_LONG.test(err.message));
}

/** Characters of the messages from `start` on, as they go out (JSON is what every wire format sends). */
export function charsFrom(messages: readonly ChatMessage[], start: number): number {
  let chars = 0;
  for (let i = start; i < messages.length; i++) chars += JSON.stringify(messages[i]).length;
  return chars;
}

/**
 * The index of the first message to send: the earliest user message from which the rest fits in
 * `maxChars`, else the latest user message (the turn itself is always sent whole). 0 without a limit.
 */
export function windowStart(messages: readonly ChatMessage[], maxChars: number | undefined): number {
  if (maxChars === undefined) return 0;
  let chars = 0;
  let start: number | undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    chars += JSON.stringify(messages[i]).length;
    if (messages[i].role !== 'user') continue;
    if (start !== undefined && chars > maxChars) break;
    start = i;
  }
  return start ?? 0;
}

/** The system prompt, saying what was left out when the earliest turns were. */
export function systemWithWindow(system: string | undefined, left: number): string | undefined {
  if (left === 0) return system;
  const note = `(The ${left} earliest messages of this conversation are not shown: they no longer fit the model's context window.)`;
  return system ? `${system}\n\n${note}` : note;
}
