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
 *
 * A cut stays where it is while what follows it fits, and a new one leaves
 * out more than it must (RECUT): providers cache a request's beginning
 * (OpenAI and vLLM on their own, Anthropic where it is marked), and a cut
 * that moved at every turn would change that beginning, and the note in the
 * system prompt, at every turn, so that no turn of a long conversation was
 * ever read from the cache.
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
  // Per conversation, once the model refused more: at most this many characters of messages, and where the last cut was.
  const windows = new Map<string, Window>();
  return {
    label: provider.label,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const { messages } = request;
      const key = request.conversation ?? '';
      for (;;) {
        const window = windows.get(key);
        const start = window ? windowStart(messages, window.maxChars, window.start) : 0;
        if (window) window.start = start;
        try {
          return await provider.complete(start ? { ...request, messages: messages.slice(start), system: systemWithWindow(request.system, start) } : request);
        } catch (err) {
          if (!isContextTooLong(err) || request.signal?.aborted) throw err;
          const chars = charsFrom(messages, start);
          // Only the turn itself is left to send: nothing more can be left out.
          if (start === Math.max(0, messages.findLastIndex((m) => m.role === 'user'))) throw new ContextTooLongError(provider.label, chars, err.message);
          windows.delete(key);
          windows.set(key, { maxChars: Math.min(window?.maxChars ?? Number.POSITIVE_INFINITY, Math.floor(chars * SHRINK)) });
          if (windows.size > WINDOWS_KEPT) windows.delete(windows.keys().next().value!);
        }
      }
    },
  };
}

/** A conversation's learned window: the most characters of messages its model takes, and the index of the message the last cut began at. */
interface Window {
  maxChars: number;
  start?: number;
}

/** Each refusal leaves out the earliest turns until at most this share of what was refused is sent. */
const SHRINK = 0.6;

/**
 * A new cut leaves at most this share of the window filled, so that the turns after it fit without
 * moving it: with turns of a twentieth of the window, about seven turns share one cut, each read from
 * the provider's cache but the first.
 */
const RECUT = 2 / 3;

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
 * The index of the first message to send: the last cut's (`previous`) while the rest from it fits in
 * `maxChars`; else a new cut, at the earliest user message from which the rest fits in a share of it
 * (RECUT), else at the latest user message (the turn itself is always sent whole).
 */
export function windowStart(messages: readonly ChatMessage[], maxChars: number, previous?: number): number {
  // A user's message still: a conversation whose earliest turns were dropped (keepLatest) has moved under the index.
  if (previous !== undefined && messages[previous]?.role === 'user' && charsFrom(messages, previous) <= maxChars) return previous;
  return latestFitting(messages, Math.floor(maxChars * RECUT));
}

function latestFitting(messages: readonly ChatMessage[], maxChars: number): number {
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
