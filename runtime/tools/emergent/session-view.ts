/**
 * What one session sees of the tools: a session-tier forged tool only in
 * the conversation or MCP session that forged it, everything else in all
 * of them. Front ends (A2A contexts, MCP sessions, REST, stdio) hand their
 * callers a view; every call through it carries the session, so forge_tool
 * knows whose tool it makes.
 */
import type { ExecuteOptions, ToolResult, ToolSpec } from '../model.ts';
import { unknownTool } from '../unknown-tool.ts';
import { isForged } from './forged-mark.ts';

export interface ToolSource {
  list(): ToolSpec[];
  get?(name: string): ToolSpec | undefined;
  /** Like get, and looks further for a tool not registered in this process (forged on another replica). */
  resolve?(name: string): Promise<ToolSpec | undefined>;
  execute(name: string, args: unknown, options?: ExecuteOptions): Promise<ToolResult>;
  onToolsChanged?(listener: () => void): () => void;
}

export function visibleTo(tool: unknown, session: string | undefined): boolean {
  if (!isForged(tool)) return true;
  return tool.forged.tier === 'agent' || (session !== undefined && tool.forged.owner === session);
}

/** `session` undefined: a caller without a session (REST, the CLI) sees agent-tier forged tools only. */
export function sessionView<T extends ToolSource>(tools: T, session: string | undefined): T {
  const find = (name: string) => (tools.get ? tools.get(name) : tools.list().find((t) => t.name === name));
  return {
    ...tools,
    list: () => tools.list().filter((t) => visibleTo(t, session)),
    get: (name: string) => {
      const tool = find(name);
      return tool && visibleTo(tool, session) ? tool : undefined;
    },
    resolve: async (name: string) => {
      const tool = find(name) ?? (await tools.resolve?.(name));
      return tool && visibleTo(tool, session) ? tool : undefined;
    },
    execute: async (name: string, args: unknown, options: ExecuteOptions = {}) => {
      // Looked up before the call, not by it: a tool registered only now (forged on another
      // replica) is checked for this session like any other.
      const tool = find(name) ?? (await tools.resolve?.(name));
      // Another session's, or unknown: the same answer, suggesting only what this session sees. The
      // registry's own suggestion is drawn from every tool it has, other sessions' forged tools too.
      const visible = () => tools.list().filter((t) => visibleTo(t, session)).map((t) => t.name);
      if (tool && !visibleTo(tool, session)) return unknownTool(name, visible());
      const result = await tools.execute(name, args, { ...options, ...(session ? { session } : {}) });
      // An unknown call still reaches the registry, which counts it (forge_tool_calls_total's "(unknown)"),
      // and is answered exactly as another session's tool is.
      if (!tool && !result.ok && result.error.code === 'FORGE_TOOL_UNKNOWN') return unknownTool(name, visible());
      return result;
    },
  };
}
