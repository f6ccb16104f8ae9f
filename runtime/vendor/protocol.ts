/**
 * The protocol SDKs the runtime uses (MCP server and client, A2A server),
 * behind one module. They are fixed for a given Forge version, so
 * `npm install` prebuilds this module once (scripts/build-vendor.mjs) and
 * the build copies that into the bundle's vendor/ instead of making esbuild parse
 * some two hundred SDK files on every build. It is evaluated on first use,
 * so a tool worker or `node runtime.mjs call` never pays for it.
 *
 * Import SDK values from here, never from the packages (types are fine).
 */
export { Server } from '@modelcontextprotocol/sdk/server/index.js';
export { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
export { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
export { CallToolRequestSchema, isInitializeRequest, LATEST_PROTOCOL_VERSION, ListToolsRequestSchema, McpError, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
export { Client } from '@modelcontextprotocol/sdk/client/index.js';
export { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
export { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
export { AgentCard, Role, Task, TaskState } from '@a2a-js/sdk';
export { AgentEvent, defaultServerCallContextBuilder, DefaultExecutionEventBusManager, DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler, UnauthenticatedUser, V1PushNotificationSerializer } from '@a2a-js/sdk/server';
export { LegacyJsonRpcTransportHandler, V03PushNotificationSerializer } from '@a2a-js/sdk/compat/v0_3/server';
export { RequestMalformedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
