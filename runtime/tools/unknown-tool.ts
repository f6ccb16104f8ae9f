/**
 * The answer to a call that names no tool: the one it likely meant, else the
 * tools the caller can call. Every front end gives it (a model, REST, MCP, the
 * command lines), so it names tools rather than a command to run; and the
 * names are the caller's own (a session never sees another's forged tools).
 */
import { didYouMean } from '../suggest.ts';
import { fail, type ToolResult } from './model.ts';

/** Up to 20 names for a hint, then how many more: "a, b, c, and 12 more". */
export function someNames(names: readonly string[], max = 20): string {
  const shown = names.slice(0, max).join(', ');
  return names.length > max ? `${shown}, and ${names.length - max} more` : shown;
}

export function unknownTool(name: string, callable: readonly string[]): ToolResult {
  // A caller's name may be a megabyte long; the answer is not.
  const shown = name.length > MAX_NAME ? `${name.slice(0, MAX_NAME)}…` : name;
  return fail('FORGE_TOOL_UNKNOWN', `no tool named "${shown}"`, unknownToolHint(name, callable));
}

export function unknownToolHint(name: string, callable: readonly string[]): string {
  const names = [...callable].sort();
  // No name is longer (TOOL_NAME_PATTERN), and the edit distance to a long one costs its length times every name's.
  const likely = name.length <= MAX_NAME ? didYouMean(name, names) : undefined;
  return likely ?? (names.length ? `the tools you can call: ${someNames(names)}` : 'there are no tools to call');
}

/** The longest tool name (TOOL_NAME_PATTERN). */
const MAX_NAME = 64;
