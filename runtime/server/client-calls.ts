/**
 * Tool calls that come from outside the agent — an MCP client, a REST
 * script — are made by a person or a program that chose the tool, as with
 * `forge tool run`: the named tool counts as approved (auto-deny rules
 * still refuse it), and any sub-tool that would need a confirmation is
 * refused, since no one is there to answer mid-call.
 */
import { approveNothing } from '../guard/approver.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { McpToolSource } from './mcp-server.ts';

export function clientCalls(registry: ToolRegistry): McpToolSource {
  return {
    list: () => registry.list(),
    execute: (name, args, options = {}) => registry.execute(name, args, { ...options, approved: true, approver: approveNothing }),
  };
}
