import { redactSecrets } from '../../known-secrets.ts';

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
