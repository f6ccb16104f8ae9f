import { redactSecrets } from '../../known-secrets.ts';
import { ProviderError } from '../messages.ts';

/** A provider's error body, as short readable text (both formats put a message in `error.message`). */
export function describeErrorBody(body: string): string {
  try {
    const json = JSON.parse(body) as unknown;
    // Gemini's OpenAI-compatible endpoint answers a list of one error.
    const parsed = (Array.isArray(json) ? json[0] : json) as { error?: { message?: string } | string; message?: string };
    if (typeof parsed.error === 'string') return parsed.error;
    if (parsed.error?.message) return parsed.error.message;
    if (parsed.message) return parsed.message;
  } catch {
    // not JSON
  }
  return shortBody(body, 300);
}

/** `body` cut to `max` characters, masked first: a key the cut split in two would no longer be recognised, and its first half would show. */
export function shortBody(body: string, max: number): string {
  const masked = redactSecrets(body);
  return masked.length > max ? `${masked.slice(0, max)}…` : masked;
}

/**
 * The output limit a model states when it refuses the max_tokens it was asked with, in either format's
 * words — Anthropic's "max_tokens: 16384 > 8192, which is the maximum allowed number of output tokens
 * for …", OpenAI's "This model supports at most 16384 completion tokens" — when lower than `asked`.
 * It is then asked again at that limit, and from then on.
 */
export function statedOutputLimit(err: unknown, asked: number | undefined): number | undefined {
  if (!(err instanceof ProviderError) || err.status !== 400 || asked === undefined) return undefined;
  const stated = /max_tokens: \d+ > (\d+)|supports at most (\d+) completion tokens/.exec(err.message);
  const limit = stated ? Number(stated[1] ?? stated[2]) : undefined;
  return limit !== undefined && limit > 0 && limit < asked ? limit : undefined;
}
