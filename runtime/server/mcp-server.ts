/**
 * The agent's tools as an MCP server (the official SDK's low-level Server,
 * so tool schemas go out exactly as agent.json records them). The same
 * server object serves Streamable HTTP and stdio: transports are separate
 * from protocol logic. A failing tool is an error result, never a protocol
 * error.
 */
import { Server } from '../vendor/protocol.ts';
import { CallToolRequestSchema, ListToolsRequestSchema } from '../vendor/protocol.ts';
import { callToolResult, listToolsResult, type McpToolSource } from './mcp-tool-calls.ts';

export type { McpToolSource } from './mcp-tool-calls.ts';

export function createMcpServer(identity: { name: string; version: string }, tools: McpToolSource): Server {
  const server = new Server({ name: identity.name, version: identity.version }, { capabilities: { tools: { listChanged: true } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => listToolsResult(tools));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => callToolResult(tools, request.params.name, request.params.arguments ?? {}, extra.signal));
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
