/**
 * The MCP adapter as one module: the build imports it into the runtime core only
 * when forge.yaml configures MCP servers, so an agent without any carries
 * none of the SDK. It exports what the adapter runtime uses.
 */
export { McpConnections } from './connections.ts';
export type { McpContext } from './connect.ts';
export { createMcpTool } from './mcp-tool.ts';
