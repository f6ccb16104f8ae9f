/**
 * The MCP adapter as one module: the build imports it into runtime.mjs only
 * when forge.yaml configures MCP servers, so an agent without any carries
 * none of the SDK.
 */
export { McpConnections, type StartResult } from './connections.ts';
export { connectMcpServer, McpConnectError, type McpContext, type McpSession } from './connect.ts';
export { createMcpTool } from './mcp-tool.ts';
export { remoteToolSpec, type RemoteTool } from './remote-tool.ts';
export { flattenCallResult } from './flatten-result.ts';
