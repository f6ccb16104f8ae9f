/**
 * What a tool result looks like to the model: the value (text as is, other
 * values as compact JSON), or the error with its code and hint — cut to a
 * budget with a marker that says so, so one huge result cannot crowd out
 * the conversation.
 */
import type { ToolResult } from '../tools/model.ts';

export const DEFAULT_TOOL_OUTPUT_BUDGET = 16_000;

export function toolResultText(result: ToolResult, budget = DEFAULT_TOOL_OUTPUT_BUDGET): { text: string; isError: boolean } {
  const full = result.ok
    ? typeof result.value === 'string'
      ? result.value
      : JSON.stringify(result.value) ?? 'null'
    : `Error ${result.error.code}: ${result.error.message}${result.error.hint ? `\nHint: ${result.error.hint}` : ''}`;
  return { text: truncate(full, budget), isError: !result.ok };
}

export function truncate(text: string, budget: number): string {
  if (text.length <= budget) return text;
  return `${text.slice(0, budget)}\n[output truncated: showing ${budget} of ${text.length} characters]`;
}
