/**
 * The MCP protocol versions of the SDK Forge ships (mcp.ts). Values only:
 * the build writes them into the runtime core as they are (stages/vendor-modules.ts),
 * so stateless MCP (mcp-direct.ts) knows them without evaluating the SDK.
 */
export { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
