/**
 * Results that go to a model are capped, and say so. A text that is cut is
 * masked first (known-secrets.ts): the registry masks every result, but a
 * secret the cut went through is no longer whole, and its first part would
 * pass (an API's 401 body quoting the Authorization header it got).
 */
import { redactSecrets } from '../../known-secrets.ts';

/** Past this many characters an adapter tool's result is cut. */
export const MAX_RESULT_CHARS = 100_000;

/** How much of an error response a tool's error message quotes (the rest goes to details, or nowhere). */
export const ERROR_EXCERPT_CHARS = 1_000;

export function cap(text: string, maxChars: number = MAX_RESULT_CHARS): string {
  if (text.length <= maxChars) return text;
  text = redactSecrets(text);
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n[... truncated: ${text.length - maxChars} more characters]`;
}
