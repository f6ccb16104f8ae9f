/**
 * Tool names are what models call, so they follow the strictest common
 * provider rule (OpenAI and Anthropic both accept ^[a-zA-Z0-9_-]{1,64}$).
 * '__' separates an adapter's namespace from its tool (fs__read_file), so no
 * other tool may use it.
 */
import type { Category } from './model.ts';

export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
export const NAMESPACE_SEPARATOR = '__';

/** Why `name` cannot name a tool of `category`, or undefined when it can. */
export function checkToolName(name: string, category: Category): string | undefined {
  if (!TOOL_NAME_PATTERN.test(name)) {
    if (name.length === 0) return 'a tool name cannot be empty';
    if (name.length > 64) return `tool name "${name}" is longer than 64 characters`;
    return `tool name "${name}" may only contain letters, digits, "_" and "-"`;
  }
  if (name.includes(NAMESPACE_SEPARATOR) && category !== 'adapter') {
    return `tool name "${name}" contains "__", which is reserved for namespaced adapter tools (server__tool)`;
  }
  return undefined;
}
