/**
 * What one session sees of the tools: a session-tier forged tool only in
 * the conversation or MCP session that forged it, everything else in all
 * of them. Front ends (A2A contexts, MCP sessions, REST, stdio) hand their
 * callers a view; every call through it carries the session, so forge_tool
 * knows whose tool it makes.
 */
import type { ExecuteOptions, ToolResult, ToolSpec } from '../model.ts';
import { visibleTo } from './forged-mark.ts';

export interface ToolSource {
  list(): ToolSpec[];
  get?(name: string): ToolSpec | undefined;
  /** Like get, and looks further for a tool not registered in this process (forged on another replica). */
  resolve?(name: string): Promise<ToolSpec | undefined>;
  execute(name: string, args: unknown, options?: ExecuteOptions): Promise<ToolResult>;
  onToolsChanged?(listener: () => void): () => void;
}

/** `session` undefined: a caller without a session (REST) sees agent-tier forged tools only. */
export function sessionView<T extends ToolSource>(tools: T, session: string | undefined): T {
  const find = (name: string) => (tools.get ? tools.get(name) : tools.list().find((t) => t.name === name));
  const visible = () => tools.list().filter((t) => visibleTo(t, session));
  return {
    ...tools,
    list: visible,
    get: (name: string) => {
      const tool = find(name);
      return tool && visibleTo(tool, session) ? tool : undefined;
    },
    resolve: async (name: string) => {
      const tool = find(name) ?? (await tools.resolve?.(name));
      return tool && visibleTo(tool, session) ? tool : undefined;
    },
    // Told only when what this session sees changed: another session's forge (its hidden
    // candidate registered and dropped, its tool kept for that session) is not this one's news.
    ...(tools.onToolsChanged
      ? {
          onToolsChanged: (listener: () => void) => {
            let seen = visible();
            return tools.onToolsChanged!(() => {
              const now = visible();
              if (sameTools(seen, now)) return;
              seen = now;
              listener();
            });
          },
        }
      : {}),
    // What the session may call is checked by the registry (ToolRegistry.run), after its own look-up:
    // a tool registered only then (forged on another replica) is checked like any other, and an
    // unknown name and another session's tool get the same answer, in one place.
    execute: (name: string, args: unknown, options: ExecuteOptions = {}) => {
      const { session: _callerSession, ...rest } = options;
      return tools.execute(name, args, session ? { ...rest, session } : rest);
    },
  };
}

/** The same tool objects with the same schemas (a reload makes new objects; a forge changes a mark, not the tool). */
function sameTools(a: ToolSpec[], b: ToolSpec[]): boolean {
  return a.length === b.length && a.every((t, i) => t === b[i] && t.inputSchema === b[i].inputSchema && t.outputSchema === b[i].outputSchema && t.description === b[i].description);
}
