/**
 * An MCP server's tool as a running Forge tool: a call goes to the server
 * (connecting first if needed), with the registry's cancellation passed on
 * as an MCP cancellation; the result is flattened, and every failure —
 * the server unreachable, the call rejected, an error result — is a tool
 * error naming the tool.
 *
 * The tool has no close of its own: the connections are shared by every
 * tool of the agent's MCP servers, and belong to the adapter runtime that
 * made them (adapter-runtime.ts), which closes them with the registry it
 * belongs to or, replaced on a hot reload, once their calls are done. Hot
 * reload retires tools one by one; one of them closing the connections
 * would cut the calls running on the others.
 */
import { McpError } from '../../../vendor/mcp.ts';
import { fail, type Tool, type ToolContext, type ToolResult, type ToolSpec } from '../../model.ts';
import type { McpBinding } from '../settings.ts';
import { McpConnectError } from './connect.ts';
import type { McpConnections } from './connections.ts';
import { flattenCallResult } from './flatten-result.ts';

/**
 * The registry's timeout and cancellation end a call (through ctx.signal);
 * the SDK's own request timeout is set past any of them.
 */
const SDK_REQUEST_TIMEOUT_MS = 24 * 60 * 60 * 1000;

export function createMcpTool(spec: ToolSpec, connections: McpConnections): Tool {
  const binding = spec.adapter as McpBinding;
  const call = async (args: unknown, ctx: ToolContext): Promise<ToolResult> => {
    let session;
    try {
      session = await connections.session(binding.server);
    } catch (err) {
      const e = err as McpConnectError;
      return fail('FORGE_MCP_UNAVAILABLE', `${spec.name}: ${e.message}`, e.hint, e.details);
    }
    try {
      const result = await session.client.callTool({ name: binding.tool, arguments: args as Record<string, unknown> }, undefined, {
        signal: ctx.signal,
        timeout: SDK_REQUEST_TIMEOUT_MS,
      });
      return flattenCallResult(result as Parameters<typeof flattenCallResult>[0], spec.name);
    } catch (err) {
      if (ctx.signal.aborted) return fail('FORGE_TOOL_CANCELLED', `${spec.name} was cancelled`);
      if (err instanceof McpError) {
        return fail('FORGE_MCP_CALL', `${spec.name}: MCP server "${binding.server}" rejected the call: ${err.message}`, `run \`forge mcp test ${binding.server}\` to check the server`);
      }
      return fail('FORGE_MCP_CALL', `${spec.name}: the call to MCP server "${binding.server}" failed: ${(err as Error).message}`);
    }
  };
  return {
    ...spec,
    // Counted on the connections: closing them once idle waits for the call.
    execute: (args, ctx) => connections.use(() => call(args, ctx)),
  };
}
