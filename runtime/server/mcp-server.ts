/**
 * The agent's tools as an MCP server (the official SDK's low-level Server,
 * so tool schemas go out exactly as agent.json records them). The same
 * server object serves Streamable HTTP and stdio: transports are separate
 * from protocol logic. A failing tool is an error result, never a protocol
 * error.
 */
import { Server } from '../vendor/mcp.ts';
import { ListToolsRequestSchema } from '../vendor/mcp.ts';
import { ProcessSlots } from '../exec/process-slots.ts';
import { callParamsError, callToolResult, listToolsResult, MCP_CALLS_AT_ONCE, type McpToolSource } from './mcp-tool-calls.ts';

export type { McpToolSource } from './mcp-tool-calls.ts';

export function createMcpServer(identity: { name: string; version: string }, tools: McpToolSource): Server {
  const server = new Server({ name: identity.name, version: identity.version }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => listToolsResult(tools));
  // One server object is one client (a stateful session, stdio): its calls past MCP_CALLS_AT_ONCE wait
  // their turn, however they arrive (one batch of 100, or many requests).
  const turns = new ProcessSlots(MCP_CALLS_AT_ONCE, Number.POSITIVE_INFINITY);
  // tools/call is answered by the fallback handler, which the SDK hands the request unparsed: its own
  // schema parse answered bad arguments with -32603 and a zod dump, where stateless HTTP answers -32602.
  server.fallbackRequestHandler = async (request, extra) => {
    if (request.method !== 'tools/call') throw rpcError(-32601, 'Method not found');
    const params = (request.params ?? {}) as { name?: unknown; arguments?: unknown };
    const invalid = callParamsError(params);
    if (invalid) throw rpcError(-32602, invalid);
    const turn = await turns.acquire(extra.signal);
    // Cancelled while waiting: the SDK sends nothing for a cancelled request.
    if (!('release' in turn)) throw rpcError(-32800, 'Request cancelled');
    try {
      return await callToolResult(tools, params.name as string, params.arguments ?? {}, extra.signal);
    } finally {
      turn.release();
    }
  };
  // A client is told when the tool set changes (hot reload, a forged tool) and lists again.
  const unsubscribe = tools.onToolsChanged?.(() => {
    if (server.transport) void server.sendToolListChanged().catch(() => {});
  });
  const previousOnClose = server.onclose;
  server.onclose = () => {
    unsubscribe?.();
    previousOnClose?.();
  };
  return server;
}

/** An error the SDK answers with this code and exactly this message (an McpError's message gets a prefix). */
function rpcError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}
