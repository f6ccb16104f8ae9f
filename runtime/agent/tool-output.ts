/**
 * What a tool result looks like to the model: the value (text as is, other
 * values as compact JSON), or the error with its code and hint — cut to a
 * budget with a marker that says so, so one huge result cannot crowd out
 * the conversation. And the way back (parseToolResultText): the result a
 * stored tool message stands for, as a page shows it again.
 */
import { cutEnd } from '../lone-surrogate.ts';
import type { ToolResult } from '../tools/model.ts';

export const DEFAULT_TOOL_OUTPUT_BUDGET = 16_000;

/**
 * What the text does not say itself, kept beside it (on the tool message)
 * so the result reads back exactly. Absent: an ok value is the text as is
 * (a string, or a text that was cut), an error has no hint.
 */
export interface ToolTextForm {
  /** An ok value other than a string, written as JSON: a string is written as is, so "42" and 42 have the same text. */
  json?: true;
  /** Where an error's "\nHint: " starts: its message may hold those words too. */
  hintAt?: number;
}

/** A tool result as its text keeps it: no duration, an error's code, message and hint (not its details). */
export type ToolResultFromText = { ok: true; value: unknown } | { ok: false; error: { code: string; message: string; hint?: string } };

const HINT = '\nHint: ';

export function toolResultText(result: ToolResult, budget = DEFAULT_TOOL_OUTPUT_BUDGET): { text: string; isError: boolean; form?: ToolTextForm } {
  let full: string;
  let form: ToolTextForm | undefined;
  if (result.ok) {
    full = typeof result.value === 'string' ? result.value : JSON.stringify(result.value) ?? 'null';
    if (typeof result.value !== 'string') form = { json: true };
  } else {
    const head = `Error ${result.error.code}: ${result.error.message}`;
    full = result.error.hint ? `${head}${HINT}${result.error.hint}` : head;
    if (result.error.hint) form = { hintAt: head.length };
  }
  const text = truncate(full, budget);
  // A cut text is no longer the value or the hint: it reads back as the text the model saw.
  return { text, isError: !result.ok, ...(form && text === full ? { form } : {}) };
}

/**
 * The result a tool message's text stands for: the inverse of
 * toolResultText, given its form. An error's code is what precedes the
 * first ": " (codes have none); a text without "Error CODE: " (cut to a
 * budget shorter than that) keeps all of it as the message.
 */
export function parseToolResultText(message: { text: string; isError?: boolean; form?: ToolTextForm }): ToolResultFromText {
  const { text, form } = message;
  if (!message.isError) {
    if (!form?.json) return { ok: true, value: text };
    try {
      return { ok: true, value: JSON.parse(text) };
    } catch {
      return { ok: true, value: text };
    }
  }
  const hintAt = form?.hintAt !== undefined && text.startsWith(HINT, form.hintAt) ? form.hintAt : undefined;
  const head = hintAt === undefined ? text : text.slice(0, hintAt);
  const colon = head.startsWith('Error ') ? head.indexOf(': ', 'Error '.length) : -1;
  const error: { code: string; message: string; hint?: string } = colon < 0 ? { code: 'error', message: head } : { code: head.slice('Error '.length, colon), message: head.slice(colon + 2) };
  if (hintAt !== undefined) error.hint = text.slice(hintAt + HINT.length);
  return { ok: false, error };
}

export function truncate(text: string, budget: number): string {
  if (text.length <= budget) return text;
  const end = cutEnd(text, budget);
  return `${text.slice(0, end)}\n[output truncated: showing ${end} of ${text.length} characters]`;
}
