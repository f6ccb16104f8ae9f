/**
 * Calls whose tool was already chosen and approved — by an MCP client or a
 * REST script (as with `forge tool run`), or by the agent loop after its
 * approval gate: the named tool counts as approved (auto-deny rules still
 * refuse it). A sub-tool that would need its own confirmation goes to
 * `approver`; by default no one is there to answer mid-call, so it is refused.
 */
import { approveNothing, type Approver } from '../guard/approver.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { McpToolSource } from './mcp-server.ts';

export function clientCalls(registry: ToolRegistry, approver: Approver = approveNothing): McpToolSource {
  return {
    list: () => registry.list(),
    get: (name) => registry.get(name),
    onToolsChanged: (listener) => registry.onToolsChanged(listener),
    execute: (name, args, options = {}) => registry.execute(name, args, { ...options, approved: true, approver }),
  };
}
