/**
 * The MCP SDK the runtime uses (server, transports, client), behind one
 * module. It is fixed for a given Forge version, so `npm install` prebuilds
 * this module once (scripts/build-vendor.mjs) and the build copies that into
 * the bundle's vendor/ instead of making esbuild parse some two hundred SDK
 * files on every build. Evaluating it takes about 50 ms (its message schemas
 * are built as it loads), so only what needs the SDK imports it: MCP with
 * sessions, `--stdio` and MCP adapters. Stateless MCP over HTTP (the
 * default, mcp-direct.ts) answers without it, with the protocol versions
 * from mcp-versions.ts.
 *
 * Import SDK values from here, never from the packages (types are fine).
 */
export { Server } from '@modelcontextprotocol/sdk/server/index.js';
export { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
export { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
export { CallToolRequestSchema, isInitializeRequest, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
export { Client } from '@modelcontextprotocol/sdk/client/index.js';
export { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
export { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
