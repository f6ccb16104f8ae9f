/**
 * Asking one model again before falling back: providers answer 429 when a
 * rate limit is reached and 5xx (Anthropic's 529 "overloaded") in busy
 * moments, and connections drop; a second try a moment later usually
 * works. As the OpenAI and Anthropic SDKs do: up to MODEL_RETRIES more
 * tries, after the wait the provider asked for (Retry-After, up to a
 * minute) or 0.5 s, 1 s, 2 s … (at most 8 s, a little less at random, so
 * that replicas refused together do not come back together). Never once
 * text has streamed to the caller, and never past the turn's cancellation.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ProviderError, type ModelProvider, type ModelRequest, type ModelResponse } from '../messages.ts';

export const MODEL_RETRIES = 2;

/** A longer Retry-After than this is not waited for: the backoff applies instead. */
const LONGEST_ASKED_WAIT_MS = 60_000;

/** `request`: the one asked again, whose task and conversation the notice names. */
export type RetryNotice = (model: string, error: ProviderError, delayMs: number, request: ModelRequest) => void;

export function withRetries(provider: ModelProvider, onRetry?: RetryNotice, retries = MODEL_RETRIES): ModelProvider {
  return {
    label: provider.label,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      for (let attempt = 0; ; attempt++) {
        try {
          return await provider.complete(request);
        } catch (err) {
          if (attempt >= retries || request.signal?.aborted || !(err instanceof ProviderError) || !err.transient || err.streamed) throw err;
          const delay = retryDelay(attempt, err.transient.afterMs);
          onRetry?.(provider.label, err, delay, request);
          try {
            await sleep(delay, undefined, { signal: request.signal });
          } catch {
            throw err; // cancelled while waiting: the caller sees its signal aborted
          }
        }
      }
    },
  };
}

/** The wait before try `attempt + 2`: what the provider asked for, else exponential backoff with jitter. */
export function retryDelay(attempt: number, askedMs?: number): number {
  if (askedMs !== undefined && askedMs <= LONGEST_ASKED_WAIT_MS) return askedMs;
  return Math.min(500 * 2 ** attempt, 8_000) * (1 - Math.random() * 0.25);
}
